// HTTPS JSON calls from `svc` to the proxy's web API, trusting exactly the CA from the profile
// (or nothing, with --insecure-skip-verify). Error bodies ({"error": {"code", "message"}}) come
// back as typed core errors so the exit code follows the server's verdict.
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

/** One request; resolves with any HTTP status (callers decide), rejects only on transport failure. */
export function proxyRequest(
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
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = text.length > 0 ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () =>
      req.destroy(new UnavailableError(`proxy ${target.proxy} did not answer in time`)),
    );
    req.on("error", (err: Error & { code?: string }) => {
      if (err instanceof SvcError) reject(err);
      else if (err.code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(err.code)) {
        reject(
          new UnavailableError(
            `cannot verify the proxy's TLS certificate (${err.code}); pass --ca with the cluster's host CA (the data folder's host-ca.pem)`,
          ),
        );
      } else reject(new UnavailableError(`cannot reach the proxy at ${target.proxy}: ${err.message}`));
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
