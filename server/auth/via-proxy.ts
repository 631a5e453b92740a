// Reaching auth's gRPC service through the proxy's one public port (docs/agent.md, "One public
// address"): the proxy routes a TLS connection that offers only ALPN h2 (what grpc-js offers) or
// names auth's server name in SNI straight through to auth, so mutual TLS stays end to end. A
// client given only `--proxy host:port` learns that name from the proxy's ping and dials gRPC at
// the proxy with it as the TLS name. Ping is read over unverified TLS on purpose: the name it
// yields is only a claim, which the gRPC handshake then checks against the pinned host CA.
import { Agent, type RequestOptions, request } from "node:https";
import { BadParameterError, PreconditionFailedError, UnavailableError } from "../../core/errors.ts";

/** Where a client dials auth's gRPC service. */
export interface AuthRoute {
  /** "host:port" the gRPC channel connects to (auth itself, or the proxy's public port) */
  address: string;
  /** TLS name to expect on auth's certificate when it differs from the address host */
  serverName?: string;
  /** set when the route goes through this proxy ("host:port") */
  proxy?: string;
}

const PING_PATH = "/v1/webapi/ping";
/** A ping answer is a few hundred bytes; anything far larger is not a ping. */
const MAX_PING_BYTES = 64 * 1024;
const HOST_PORT = /^(?:\[[^\]]+\]|[^:\s]+):\d{1,5}$/;

/** Checks "host:port" of a --proxy flag. */
export function checkProxyAddress(address: string): string {
  const a = address.trim();
  if (!HOST_PORT.test(a) || Number(a.slice(a.lastIndexOf(":") + 1)) > 65535)
    throw new BadParameterError(`--proxy ${JSON.stringify(address)} must be host:port`);
  return a;
}

/** An error's message on one line (OpenSSL's carry a newline and a source location). */
const oneLine = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim().slice(0, 300);

const hint = (proxy: string) =>
  `pass --auth <host:port> to reach auth directly, or check that ${proxy} is the proxy's public address`;

function getPing(proxy: string, timeoutMs: number): Promise<unknown> {
  const colon = proxy.lastIndexOf(":");
  const host = proxy.slice(0, colon).replace(/^\[|\]$/g, "");
  const port = Number(proxy.slice(colon + 1));
  const options: RequestOptions = {
    host,
    port,
    path: PING_PATH,
    method: "GET",
    // Unverified: see the file comment. No client certificate, no secret is sent.
    rejectUnauthorized: false,
    // No SNI and ALPN http/1.1: the proxy's router sends this to its own HTTPS server even when
    // the proxy's host name is also auth's TLS name (which would route to auth).
    servername: "",
    agent: new Agent({ ALPNProtocols: ["http/1.1"], keepAlive: false, maxSockets: 1 }),
    timeout: timeoutMs,
    headers: { accept: "application/json" },
  };
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (d: Buffer) => {
        size += d.length;
        if (size > MAX_PING_BYTES) {
          req.destroy(new Error("the answer is too large for a ping"));
          return;
        }
        chunks.push(d);
      });
      res.on("end", () => {
        if (res.statusCode !== 200) {
          reject(new Error(`HTTP ${res.statusCode ?? 0}`));
          return;
        }
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown);
        } catch {
          reject(new Error("the answer is not JSON"));
        }
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}

/** tls_routing.auth_server_name of a ping answer, "" when the proxy has none. */
function authServerNameOf(ping: unknown): string {
  const routing = (ping as { tls_routing?: unknown } | null)?.tls_routing;
  const name = (routing as { auth_server_name?: unknown } | null | undefined)?.auth_server_name;
  return typeof name === "string" ? name.trim() : "";
}

/**
 * The route to auth through the proxy at `proxy` ("host:port"): asks its ping for the TLS name
 * that routes to auth. Throws UnavailableError when the proxy does not answer and
 * PreconditionFailedError when it answers without routing to auth; both name the proxy.
 */
export async function authRouteViaProxy(
  proxy: string,
  opts: { timeoutMs?: number } = {},
): Promise<AuthRoute & { proxy: string; serverName: string }> {
  const address = checkProxyAddress(proxy);
  let ping: unknown;
  try {
    ping = await getPing(address, opts.timeoutMs ?? 15_000);
  } catch (err) {
    throw new UnavailableError(
      `the proxy at ${address} did not answer its ping (${oneLine(err)}): ${hint(address)}`,
    );
  }
  const serverName = authServerNameOf(ping);
  if (serverName === "")
    throw new PreconditionFailedError(
      `the proxy at ${address} does not route gRPC to auth (its ping has no tls_routing.auth_server_name): ${hint(address)}`,
    );
  return { address, serverName, proxy: address };
}
