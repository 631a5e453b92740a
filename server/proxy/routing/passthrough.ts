// Raw TCP from a client to auth's gRPC port: the proxy copies bytes and reads none of them, so the
// client's TLS (and its client certificate) reaches auth untouched. Auth sees the proxy as peer.
import { connect, type Socket } from "node:net";
import type { Logger } from "pino";
import { splitHostPort } from "../../config.ts";

/** Where the proxy dials auth, and the TLS name on auth's certificate (what routes to it). */
export interface AuthPassthrough {
  /** "host:port" of auth's gRPC listener, or several separated by commas (one per replica) */
  address: string;
  /** the TLS server name on auth's certificate; clients send it as SNI */
  serverName: string;
}

/** How long dialling auth may take before the client is closed (it then retries). */
export const AUTH_CONNECT_TIMEOUT_MS = 5_000;

// Rotates the first replica tried, so connections spread over every auth address.
let nextFirst = 0;

/**
 * Joins `client` (its ClientHello unshifted, paused) to a new connection to auth. With several
 * addresses, each is tried in turn until one accepts (the client's bytes wait in its paused
 * socket meanwhile), so a replica that is down or restarting costs a refused connect, not the
 * client's connection. Once joined, either side's close or error closes both at once: a gRPC
 * client sees the drop as UNAVAILABLE and retries. Returns a handle whose destroy() ends both.
 */
export function passToAuth(
  client: Socket,
  target: AuthPassthrough,
  o: { logger: Logger; connectTimeoutMs?: number },
): { destroy(): void } {
  const addresses = target.address
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  const first = nextFirst++ % Math.max(1, addresses.length);
  let upstream: Socket | undefined;
  let closed = false;
  const closeBoth = (): void => {
    if (closed) return;
    closed = true;
    client.destroy();
    upstream?.destroy();
  };
  client.setNoDelay(true);
  client.on("error", closeBoth);
  client.on("close", closeBoth);

  const attempt = (i: number): void => {
    if (closed) return;
    const address = addresses[(first + i) % addresses.length];
    if (address === undefined || i >= addresses.length) {
      closeBoth();
      return;
    }
    const { host, port } = splitHostPort(address);
    const socket = connect({ host, port, noDelay: true });
    upstream = socket;
    const timer = setTimeout(
      () => socket.destroy(new Error("auth did not accept the connection in time")),
      o.connectTimeoutMs ?? AUTH_CONNECT_TIMEOUT_MS,
    );
    timer.unref();
    const failedToConnect = (err: Error): void => {
      clearTimeout(timer);
      o.logger.debug({ err: err.message, auth: address }, "auth passthrough: replica refused");
      attempt(i + 1);
    };
    socket.once("error", failedToConnect);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.off("error", failedToConnect);
      if (closed) {
        socket.destroy();
        return;
      }
      socket.on("error", (err) => {
        o.logger.debug({ err: err.message, auth: address }, "auth passthrough failed");
        closeBoth();
      });
      socket.on("close", closeBoth);
      client.pipe(socket);
      socket.pipe(client);
    });
  };
  attempt(0);
  return { destroy: closeBoth };
}
