// What test/sso-attacks.test.ts needs besides the SSO fixture: a browser as an HTTP cookie jar
// (each attacker and victim is one), every answer kept for the secret scan, the platform's log
// lines captured from the fixture's own pino logger, and the secrets seen on the way.
import { createHash, randomBytes } from "node:crypto";
import { pino } from "pino";
import { expect } from "vitest";
import { SESSION_COOKIE } from "../server/proxy/credentials.ts";
import { SSO_COOKIE } from "../server/proxy/sso-cookie.ts";
import { cookieAttributes, type HttpResponse, type HttpsClient } from "./proxy-https-client.ts";

/** Every answer the proxy gave in the run, for the scan of secrets in bodies and headers. */
export const answers: HttpResponse[] = [];
/** Values that must appear in no answer body, audit event or log line. */
export const secrets = new Set<string>();

export const randomSecret = (): string => randomBytes(32).toString("base64url");
export const s256 = (verifier: string): string => createHash("sha256").update(verifier).digest("base64url");

/**
 * The platform's log lines. The fixture's pino logger (auth and proxy share it) writes at the
 * level of SVC_TEST_LOG_LEVEL: raise it before the platform starts, then `attach` its logger,
 * whose destination then keeps each line (instead of printing it).
 */
export function capturedLogs(): { lines: string[]; attach(logger: object): void } {
  const lines: string[] = [];
  process.env["SVC_TEST_LOG_LEVEL"] = "debug";
  return {
    lines,
    attach(logger: object) {
      const stream = (logger as Record<symbol, { write(s: string): boolean } | undefined>)[
        pino.symbols.streamSym
      ];
      if (!stream) throw new Error("the logger has no destination stream");
      stream.write = (s: string) => {
        lines.push(s);
        return true;
      };
    },
  };
}

/** One browser: its cookies for the proxy's origin, sent back on each request. */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly #client: HttpsClient;

  constructor(client: HttpsClient) {
    this.#client = client;
  }

  async send(path: string, o: { method?: string; form?: Record<string, string>; json?: unknown } = {}) {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.cookies.size > 0) headers["cookie"] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    let raw: string | undefined;
    if (o.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      raw = new URLSearchParams(o.form).toString();
    }
    const res = await this.#client.send({
      method: o.method ?? (o.form || o.json !== undefined ? "POST" : "GET"),
      path,
      headers,
      ...(raw !== undefined ? { raw } : {}),
      ...(o.json !== undefined ? { body: o.json } : {}),
    });
    answers.push(res);
    for (const line of res.setCookies) {
      const [pair = ""] = line.split(";");
      const i = pair.indexOf("=");
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (value === "") this.cookies.delete(name);
      else {
        this.cookies.set(name, value);
        secrets.add(value);
      }
    }
    return res;
  }

  get session(): string | undefined {
    return this.cookies.get(SESSION_COOKIE);
  }
}

/** A session cookie with a value in this answer. */
export function issuedSession(res: HttpResponse): boolean {
  return (cookieAttributes(res.setCookies, SESSION_COOKIE)?.get("value") ?? "") !== "";
}

/** The exact refusal: status, error code, no session, no redirect anywhere, binding cookie not left set. */
export function expectRefused(res: HttpResponse, status: number, code: string, why?: RegExp): void {
  expect(res.status, res.text).toBe(status);
  const error = (res.json as { error?: { code?: string; message?: string } } | undefined)?.error;
  expect(error?.code, res.text).toBe(code);
  if (why) expect(error?.message ?? "").toMatch(why);
  expect(issuedSession(res)).toBe(false);
  expect(res.headers.location).toBeUndefined();
  expect(cookieAttributes(res.setCookies, SSO_COOKIE)?.get("value") ?? "").toBe("");
}

/** The query of a callback (code, state...) as the provider sent it; its code is a secret. */
export function keepCode(query: string): string {
  const code = new URLSearchParams(query).get("code");
  if (code) secrets.add(code);
  return query;
}
