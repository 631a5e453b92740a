// Every error of every route ends here: one status mapping, one body, no internals in 5xx.
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { errorBody, mapError } from "../http-errors.ts";

export const errorHandlerPlugin = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((err, request, reply) => {
      const mapped = mapError(err);
      if (mapped.internal) request.log.error({ err }, "request failed");
      else request.log.info({ code: mapped.body.error.code, status: mapped.status }, "request refused");
      return reply.code(mapped.status).type("application/json; charset=utf-8").send(mapped.body);
    });
    app.setNotFoundHandler((request, reply) => {
      return reply
        .code(404)
        .type("application/json; charset=utf-8")
        .send(errorBody("not_found", `no route for ${request.method} ${request.url.split("?")[0]}`));
    });
  },
  { name: "svc-error-handler" },
);
