// Security headers on every response, errors and 404s included. The policy is helmet's (the engine
// @fastify/helmet wraps), evaluated ONCE at start-up into a fixed header set, because the policy
// is static and running helmet's middleware chain per request cost ~40 % of a ping's CPU time.
// The CSP fits the web console (docs/console.md): scripts and styles from our origin only, no
// inline script or style, the WebSocket to our own origin, no framing.
import { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { Socket } from "node:net";
import type { FastifyInstance, FastifyReply } from "fastify";
import fp from "fastify-plugin";
import helmet, { type HelmetOptions } from "helmet";

export interface SecurityHeadersOptions {
  publicUrl: string;
}

export function helmetOptions(publicUrl: string): HelmetOptions {
  const wsOrigin = `wss://${new URL(publicUrl).host}`;
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'", wsOrigin],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
      },
    },
    strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true },
    // same-origin keeps the Referer for our own requests (a CSRF fallback) and hides it elsewhere
    referrerPolicy: { policy: "same-origin" },
    crossOriginResourcePolicy: { policy: "same-origin" },
    xFrameOptions: { action: "deny" },
  };
}

/** Runs helmet once against a detached response and keeps the headers it set. */
export function computeSecurityHeaders(publicUrl: string): Record<string, string> {
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  let failure: unknown;
  helmet(helmetOptions(publicUrl))(res.req, res, (err) => {
    failure = err;
  });
  if (failure !== undefined) throw failure;
  const headers: Record<string, string> = { "cache-control": "no-store" };
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return headers;
}

/**
 * The symbol under which fastify keeps a reply's headers: a plain object it passes to Node's
 * `writeHead`. fastify does not export it from its entry point; its symbols module is the same
 * instance fastify itself loads. Undefined if a fastify release renames it (the plugin then falls
 * back to `reply.headers`, and a test fails).
 */
export const replyHeadersSymbol = (
  createRequire(import.meta.url)("fastify/lib/symbols.js") as { kReplyHeaders?: symbol }
).kReplyHeaders;

type ReplyHeaderSlot = Record<symbol, Record<string, string | number | string[]> | undefined>;

export const securityHeadersPlugin = fp(
  async (app: FastifyInstance, opts: SecurityHeadersOptions) => {
    const headers = Object.freeze(computeSecurityHeaders(opts.publicUrl));
    // Each reply starts from a spread copy of the prepared object. fastify's own way,
    // `reply.headers`, adds the headers one by one to a new `{}`. Every `{}` in the process shares
    // V8's first hidden class, whose transitions fill up at start-up (compiled schemas, parsed
    // JSON); until a full GC frees them, every reply got a hidden class of its own (measured: 0 of
    // 140,000 replies shared one) and every property access on it missed V8's caches. A spread
    // copy keeps the prepared object's hidden class in either state. docs/performance.md, "Issue
    // 17, session ten".
    const key = replyHeadersSymbol;
    // onRequest runs for every request, 404s and parse errors included; registered before every
    // other hook (app.ts), so answers refused by a hook (414, 503, 429, 401) carry them too.
    // Routes may override cache-control (public key material is cacheable); answers carrying
    // sessions never are. A callback, not an async function: no promise per request.
    app.addHook(
      "onRequest",
      key === undefined
        ? (_request, reply, done) => {
            reply.headers(headers);
            done();
          }
        : (_request, reply, done) => {
            const slot = reply as unknown as ReplyHeaderSlot;
            const before = slot[key];
            const copy: Record<string, string | number | string[]> = { ...headers };
            // Nothing sets a header before the first onRequest hook today; kept if one does.
            if (before !== undefined) for (const name in before) copy[name] = before[name] ?? "";
            slot[key] = copy;
            done();
          },
    );
  },
  { name: "svc-security-headers" },
);

/** The header object fastify will send for this reply (tests; undefined without the symbol). */
export function replyHeaderObject(reply: FastifyReply): object | undefined {
  const key = replyHeadersSymbol;
  return key === undefined ? undefined : (reply as unknown as ReplyHeaderSlot)[key];
}
