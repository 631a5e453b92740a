// Request bodies are JSON or nothing. fastify's own JSON parser (prototype-poisoning checks
// included) does the work; an empty body with Content-Type: application/json is "no body", as
// many clients send that header on every POST. No other parsers: text/plain is 415 like any
// other non-JSON type.
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

export const bodyParsingPlugin = fp(
  async (app: FastifyInstance) => {
    const json = app.getDefaultJsonParser("error", "error");
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
      const text = typeof body === "string" ? body : body.toString("utf8");
      if (text.trim() === "") {
        done(null, undefined);
        return;
      }
      json(request, text, done);
    });
  },
  { name: "svc-body-parsing" },
);
