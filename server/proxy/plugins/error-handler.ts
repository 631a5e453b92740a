// Every error of every route ends here: one status mapping, one body, no internals in 5xx. Also
// the framework's own answers: unknown routes (404), a known path with another method (405 with
// Allow), over-long URLs (414), requests arriving while the proxy closes (503).
import type { IncomingMessage } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { UnavailableError } from "../../../core/errors.ts";
import { errorBody, HttpError, mapError } from "../http-errors.ts";

/** Longer URLs are 414; node refuses a request head over 16 KiB (431) before we see it. */
export const MAX_URL_LENGTH = 8 * 1024;

/**
 * A body refused before it was read (413, 415, malformed) is read to its end and dropped before
 * the answer goes out, up to these bounds: closing a TLS socket with unread input makes the
 * kernel reset the connection, and a client that sends its whole body before reading (most HTTP
 * libraries) then loses the answer and sees the connection drop.
 */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
export const DRAIN_MAX_MS = 10_000;

/** Resolves true once the request body has been read to its end, false past the bounds. */
function drainBody(raw: IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (complete: boolean) => {
      clearTimeout(timer);
      raw.removeListener("data", onData);
      if (!complete) raw.pause();
      resolve(complete);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DRAIN_MAX_BYTES) finish(false);
    };
    const timer = setTimeout(() => finish(false), DRAIN_MAX_MS);
    raw.on("data", onData);
    raw.once("end", () => finish(true));
    raw.once("close", () => finish(raw.complete));
    raw.resume();
  });
}

const BODY_ERRORS_OF_NO_ROUTE = new Set([
  "FST_ERR_ROUTE_MISSING_CONTENT_TYPE",
  "FST_ERR_CTP_INVALID_MEDIA_TYPE",
  "FST_ERR_CTP_INVALID_JSON_BODY",
  "FST_ERR_CTP_EMPTY_JSON_BODY",
]);

/** Route patterns ("/a/:id") per method, to tell 405 from 404. */
class RouteTable {
  readonly #routes: Array<{ method: string; segments: string[] }> = [];

  add(method: string, url: string): void {
    this.#routes.push({ method, segments: url.split("/") });
  }

  methodsFor(path: string): string[] {
    const parts = path.split("/");
    const methods = new Set<string>();
    for (const r of this.#routes) {
      if (r.segments.length !== parts.length) continue;
      const match = r.segments.every((s, i) =>
        s.startsWith(":") ? (parts[i] ?? "") !== "" : s === parts[i],
      );
      if (match) methods.add(r.method);
    }
    return [...methods].sort();
  }
}

export const errorHandlerPlugin = fp(
  async (app: FastifyInstance) => {
    const table = new RouteTable();
    app.addHook("onRoute", (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const m of methods) table.add(m, route.url);
    });

    // fastify's own 503 while closing has its own body; this one answers ours instead.
    let closing = false;
    app.addHook("preClose", async () => {
      closing = true;
    });

    // A callback, not an async function: no promise per request.
    app.addHook("onRequest", (request, reply, done) => {
      if (closing) {
        reply.header("connection", "close");
        done(new UnavailableError("the proxy is shutting down"));
      } else if (request.url.length > MAX_URL_LENGTH) {
        done(new HttpError(414, "uri_too_long", `URL longer than ${MAX_URL_LENGTH} characters`));
      } else {
        done();
      }
    });

    /** 404 for an unknown path; 405 with Allow for a known path and another method. */
    const notFound = (request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split("?")[0] ?? "";
      const allowed = table.methodsFor(path);
      if (allowed.length > 0) {
        return reply
          .code(405)
          .header("allow", allowed.join(", "))
          .type("application/json; charset=utf-8")
          .send(errorBody("method_not_allowed", `${request.method} is not allowed on ${path}`));
      }
      return reply
        .code(404)
        .type("application/json; charset=utf-8")
        .send(errorBody("not_found", `no route for ${request.method} ${path}`));
    };

    app.setErrorHandler(async (err, request, reply) => {
      // fastify reads the body of a request no route takes before its not-found handler (a
      // QUERY without Content-Type fails there): the method or path is what is wrong, not the body.
      if (request.is404 && BODY_ERRORS_OF_NO_ROUTE.has((err as { code?: string }).code ?? "")) {
        if (!request.raw.complete && !request.raw.destroyed && (await drainBody(request.raw))) {
          reply.removeHeader("connection");
        }
        return notFound(request, reply);
      }
      const mapped = mapError(err);
      if (mapped.internal) request.log.error({ err }, "request failed");
      else request.log.info({ code: mapped.body.error.code, status: mapped.status }, "request refused");
      // fastify closes the connection after a refused body; with the rest read, it may stay open.
      if (!request.raw.complete && !request.raw.destroyed && (await drainBody(request.raw))) {
        reply.removeHeader("connection");
      }
      return reply.code(mapped.status).type("application/json; charset=utf-8").send(mapped.body);
    });

    app.setNotFoundHandler(notFound);
  },
  { name: "svc-error-handler" },
);
