// GET /v1/webapi/sessions/:id/recording: a recorded session's content for playback (asciicast v2
// as the node recorded it). Auth decides who may read it: admins any, other users their own;
// someone else's recording is "not found". The body streams from auth with back-pressure.
import { Readable } from "node:stream";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { sessionOf } from "./plugins/session.ts";
import { commonErrors, errorResponses, sessionSecurity } from "./schemas.ts";
import type { TerminalAuthApi } from "./terminal-auth.ts";

export interface RecordingRouteOptions {
  terminalAuth: TerminalAuthApi;
}

const Params = Type.Object({
  // The shape auth gives recording ids and checks (server/auth/recordings.ts).
  id: Type.String({ pattern: "^[A-Za-z0-9_-]{8,64}$" }),
});

const contentTypeOf = (format: string): string =>
  format === "asciicast-v2" ? "application/x-asciicast" : "application/octet-stream";

export function recordingRoutes(opts: RecordingRouteOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.get<{ Params: Static<typeof Params> }>(
      "/v1/webapi/sessions/:id/recording",
      {
        schema: {
          summary: "A recorded session's content (asciicast v2) for playback",
          tags: ["lists"],
          ...sessionSecurity,
          params: Params,
          response: {
            200: {
              description: "the recording as stored (X-Recording-Format names the format)",
              content: { "application/x-asciicast": { schema: { type: "string" } } },
            },
            ...errorResponses(401, 403, 404, ...commonErrors),
          },
        },
        preHandler: app.requireSession,
      },
      async (request, reply) => {
        const rec = await opts.terminalAuth.getRecording(sessionOf(request).sessionId, request.params.id);
        reply
          .header("content-type", contentTypeOf(rec.info.format))
          .header("x-recording-format", rec.info.format)
          .header("content-disposition", `inline; filename="${rec.info.id}.cast"`);
        return reply.send(Readable.from(rec.body, { objectMode: false }));
      },
    );
  };
}
