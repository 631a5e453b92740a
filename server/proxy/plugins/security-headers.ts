// Security headers on every response, errors and 404s included. The policy is helmet's (the engine
// @fastify/helmet wraps), evaluated ONCE at start-up into a fixed header set, because the policy
// is static and running helmet's middleware chain per request cost ~40 % of a ping's CPU time.
// The CSP fits the web console (docs/console.md): scripts and styles from our origin only, no
// inline script or style, the WebSocket to our own origin, no framing.
import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { FastifyInstance } from "fastify";
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

export const securityHeadersPlugin = fp(
  async (app: FastifyInstance, opts: SecurityHeadersOptions) => {
    const headers = Object.freeze(computeSecurityHeaders(opts.publicUrl));
    // onRequest runs for every request, 404s and parse errors included; registered before every
    // other hook (app.ts), so answers refused by a hook (414, 503, 429, 401) carry them too.
    // Routes may override cache-control (public key material is cacheable); answers carrying
    // sessions never are. A callback, not an async function: no promise per request.
    app.addHook("onRequest", (_request, reply, done) => {
      reply.headers(headers);
      done();
    });
  },
  { name: "svc-security-headers" },
);
