// Raw TCP from a client to auth's gRPC port: the proxy copies bytes and reads none of them, so the
// client's TLS (and its client certificate) reaches auth untouched. Auth sees the proxy as peer.
import { connect, type Socket } from "node:net";
import type { Logger } from "pino";
import { splitHostPort } from "../../config.ts";

/** Where the proxy dials auth, and the TLS name on auth's certificate (what routes to it). */
export interface AuthPassthrough {
  /** "host:port" of auth's gRPC listener */
  address: string;
  /** the TLS server name on auth's certificate; clients send it as SNI */
  serverName: string;
}

/** How long dialling auth may take before the client is closed (it then retries). */
export const AUTH_CONNECT_TIMEOUT_MS = 5_000;

/**
 * Joins `client` (its ClientHello unshifted, paused) to a new connection to auth. Either side's
 * close or error closes both at once: a gRPC client sees the drop as UNAVAILABLE and retries.
 * Returns the upstream socket (the caller tracks both for close()).
 */
export function passToAuth(
  client: Socket,
  target: AuthPassthrough,
  o: { logger: Logger; connectTimeoutMs?: number },
): Socket {
  const { host, port } = splitHostPort(target.address);
  const upstream = connect({ host, port, noDelay: true });
  client.setNoDelay(true);
  const timer = setTimeout(
    () => upstream.destroy(new Error("auth did not accept the connection in time")),
    o.connectTimeoutMs ?? AUTH_CONNECT_TIMEOUT_MS,
  );
  timer.unref();
  upstream.once("connect", () => clearTimeout(timer));
  const closeBoth = (): void => {
    clearTimeout(timer);
    client.destroy();
    upstream.destroy();
  };
  upstream.on("error", (err) => {
    o.logger.debug({ err: err.message, auth: target.address }, "auth passthrough failed");
    closeBoth();
  });
  client.on("error", closeBoth);
  upstream.on("close", closeBoth);
  client.on("close", closeBoth);
  // Writes before "connect" are queued by net.Socket, so the hello is sent as soon as auth accepts.
  client.pipe(upstream);
  upstream.pipe(client);
  return upstream;
}
