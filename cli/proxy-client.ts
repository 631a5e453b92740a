// HTTPS JSON calls from `svc` to the proxy's web API, trusting exactly the CA from the profile
// (or nothing, with --insecure-skip-verify). Error bodies ({"error": {"code", "message"}}) come
// back as typed core errors so the exit code follows the server's verdict.
import type { IncomingMessage } from "node:http";
import { request } from "node:https";
import { type ErrorCode, SvcError, UnavailableError } from "../core/errors.ts";
import type { JsonValue } from "../core/json.ts";

export interface ProxyTarget {
  /** host:port */
  proxy: string;
  caPem?: string | undefined;
  insecure?: boolean | undefined;
}

export interface ProxyResponse {
  status: number;
  body: unknown;
}

const CODES = new Set<string>([
  "not_found",
  "access_denied",
  "not_authenticated",
  "already_exists",
  "bad_parameter",
  "compare_failed",
  "limit_exceeded",
  "precondition_failed",
  "unavailable",
  "not_implemented",
  "internal",
]);

/** The error an answer carries; `mfa_required` is reported as not_authenticated with its own text. */
export function errorOfResponse(r: ProxyResponse): SvcError {
  const e = (r.body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const message = typeof e?.message === "string" ? e.message : `HTTP ${r.status}`;
  const code = typeof e?.code === "string" && CODES.has(e.code) ? (e.code as ErrorCode) : undefined;
  if (code) return new SvcError(code, message);
  if (r.status === 401) return new SvcError("not_authenticated", message);
  if (r.status === 403) return new SvcError("access_denied", message);
  if (r.status === 404) return new SvcError("not_found", message);
  if (r.status === 429) return new SvcError("limit_exceeded", message);
  if (r.status === 503) return new SvcError("unavailable", message);
  return new SvcError("internal", message);
}

export function splitProxyAddress(proxy: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(proxy) ?? /^([^:/]+):(\d{1,5})$/.exec(proxy);
  const port = Number(m?.[2]);
  if (!m?.[1] || !(port >= 1 && port <= 65535)) {
    throw new SvcError("bad_parameter", `proxy address ${JSON.stringify(proxy)} must be host:port`);
  }
  return { host: m[1], port };
}

/** How far a failed attempt got: never reached the proxy, or may have reached it. */
type Reach = "not_sent" | "maybe_sent";
const reachOf = new WeakMap<Error, Reach>();

/** A whole answer's body: parsed JSON, the text when it is not JSON, undefined when empty. */
export function readBody(res: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (d: Buffer) => chunks.push(d));
    res.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      try {
        resolve(text.length > 0 ? JSON.parse(text) : undefined);
      } catch {
        resolve(text);
      }
    });
    res.on("error", reject);
  });
}

/** Methods that change nothing: safe to send twice. */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS"]);

/** The wait before the one retry: 0.5 to 1 s (jittered so many clients do not come back at once). */
export const RETRY_BACKOFF_MS = { min: 500, max: 1_000 } as const;

/**
 * One request; resolves with any HTTP status (callers decide), rejects only on transport failure.
 * Retried once, after 0.5-1 s (docs/cli.md "When the cluster restarts"), when the proxy or auth
 * is restarting: any method whose request never reached the proxy (refused or reset before the
 * TLS handshake ended), and reads (GET) on any transport failure or a 503 answer. A write that
 * may have reached the proxy is never sent twice.
 */
export async function proxyRequest(
  target: ProxyTarget,
  method: string,
  path: string,
  opts: { sessionId?: string | undefined; body?: JsonValue; timeoutMs?: number; retry?: boolean } = {},
): Promise<ProxyResponse> {
  const idempotent = IDEMPOTENT.has(method.toUpperCase());
  const backoff = () =>
    new Promise<void>((r) =>
      setTimeout(r, RETRY_BACKOFF_MS.min + Math.random() * (RETRY_BACKOFF_MS.max - RETRY_BACKOFF_MS.min)),
    );
  let first: ProxyResponse;
  try {
    first = await proxyRequestOnce(target, method, path, opts);
  } catch (err) {
    const reach = err instanceof Error ? reachOf.get(err) : undefined;
    if (opts.retry === false || reach === undefined || (reach === "maybe_sent" && !idempotent)) throw err;
    await backoff();
    return proxyRequestOnce(target, method, path, opts);
  }
  if (first.status === 503 && idempotent && opts.retry !== false) {
    await backoff();
    return proxyRequestOnce(target, method, path, opts);
  }
  return first;
}

function proxyRequestOnce(
  target: ProxyTarget,
  method: string,
  path: string,
  opts: { sessionId?: string | undefined; body?: JsonValue; timeoutMs?: number } = {},
): Promise<ProxyResponse> {
  const { host, port } = splitProxyAddress(target.proxy);
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { accept: "application/json" };
  if (payload !== undefined) headers["content-type"] = "application/json";
  if (opts.sessionId) headers.authorization = `Bearer ${opts.sessionId}`;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host,
        port,
        method,
        path,
        headers,
        ...(target.insecure ? { rejectUnauthorized: false } : { ca: target.caPem ?? [] }),
        timeout: opts.timeoutMs ?? 30_000,
      },
      (res) => {
        readBody(res).then((body) => resolve({ status: res.statusCode ?? 0, body }), reject);
      },
    );
    // Until the TLS handshake ends, no byte of the request has reached the proxy. A kept-alive
    // connection (the default agent reuses them) finished its handshake for an earlier request:
    // this one may have reached the proxy as soon as it was written.
    let connected = false;
    req.on("socket", (socket) => {
      if (req.reusedSocket) connected = true;
      else
        socket.once("secureConnect", () => {
          connected = true;
        });
    });
    const transport = (e: UnavailableError): UnavailableError => {
      reachOf.set(e, connected ? "maybe_sent" : "not_sent");
      return e;
    };
    req.on("timeout", () =>
      req.destroy(transport(new UnavailableError(`proxy ${target.proxy} did not answer in time`))),
    );
    req.on("error", (err: Error & { code?: string }) => {
      if (err instanceof SvcError) reject(err);
      else if (err.code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(err.code)) {
        reject(
          new UnavailableError(
            `cannot verify the proxy's TLS certificate (${err.code}); pass --ca with the cluster's host CA (the data folder's host-ca.pem)`,
          ),
        );
      } else
        reject(transport(new UnavailableError(`cannot reach the proxy at ${target.proxy}: ${err.message}`)));
    });
    req.end(payload);
  });
}

/** A call that must succeed with 2xx: the parsed body, or the typed error the answer carries. */
export async function proxyCall<T>(
  target: ProxyTarget,
  method: string,
  path: string,
  opts: { sessionId?: string | undefined; body?: JsonValue } = {},
): Promise<T> {
  const r = await proxyRequest(target, method, path, opts);
  if (r.status >= 200 && r.status < 300) return r.body as T;
  throw errorOfResponse(r);
}
