// Security headers on every response, errors and 404s included. The CSP fits the later terminal
// page: scripts and styles from our origin only (xterm.js sets inline styles, hence
// 'unsafe-inline' for style-src alone), the WebSocket to our own origin, no framing.
import helmet from "@fastify/helmet";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

export interface SecurityHeadersOptions {
  publicUrl: string;
}

export const securityHeadersPlugin = fp(
  async (app: FastifyInstance, opts: SecurityHeadersOptions) => {
    const origin = new URL(opts.publicUrl);
    const wsOrigin = `wss://${origin.host}`;
    await app.register(helmet, {
      global: true,
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          "default-src": ["'self'"],
          "script-src": ["'self'"],
          "style-src": ["'self'", "'unsafe-inline'"],
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
    });
    // Answers carry sessions and user data: never cache them anywhere.
    app.addHook("onSend", async (_request, reply, payload) => {
      if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
      return payload;
    });
  },
  { name: "svc-security-headers" },
);
