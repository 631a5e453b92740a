// WebAuthn enrolment for a logged-in user (the spec leaves it open): begin/finish registration,
// list, rename and remove devices. Challenge state lives in auth, so any replica can finish.
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { WebAuthnDevice } from "../auth-client.ts";
import { relyingParty } from "../config.ts";
import { sessionOf } from "../plugins/session.ts";
import {
  AttestationCredential,
  ChallengeId,
  commonErrors,
  errorResponses,
  sessionSecurity,
  Timestamp,
  WebAuthnCreationOptions,
} from "../schemas.ts";

const DeviceName = Type.String({ minLength: 1, maxLength: 64, pattern: "^[^\\u0000-\\u001f]+$" });
const BeginBody = Type.Object({}, { additionalProperties: false });
const BeginResult = Type.Object({ challenge_id: Type.String(), webauthn: WebAuthnCreationOptions });
const FinishBody = Type.Object(
  {
    challenge_id: ChallengeId,
    device_name: DeviceName,
    credential: AttestationCredential,
  },
  { additionalProperties: false },
);
const RenameBody = Type.Object({ name: DeviceName }, { additionalProperties: false });
const Device = Type.Object({
  id: Type.String(),
  name: Type.String(),
  added_at: Timestamp,
  last_used_at: Type.Optional(Timestamp),
});
// Credential ids are base64url (auth refuses anything else as malformed).
const DeviceParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256, pattern: "^[A-Za-z0-9_-]+$" }),
});

const deviceView = (d: WebAuthnDevice): Static<typeof Device> => ({
  id: d.id,
  name: d.name,
  added_at: d.addedAt.toISOString(),
  last_used_at: d.lastUsedAt?.toISOString(),
});

export async function webauthnDeviceRoutes(app: FastifyInstance): Promise<void> {
  const rp = relyingParty(app.proxyConfig);

  app.post<{ Body: Static<typeof BeginBody> }>(
    "/v1/webapi/mfa/webauthn/register/begin",
    {
      schema: {
        summary: "Start enrolling a WebAuthn device for the caller",
        tags: ["mfa"],
        ...sessionSecurity,
        body: BeginBody,
        // The body may be left out (preValidation below); plugins/openapi.ts tells the document (BODY_OPTIONAL).
        "x-body-optional": true,
        response: { 200: BeginResult, ...errorResponses(401, 403, 409, ...commonErrors) },
      },
      // No body (or an empty one) is the empty object: a POST without a body must work. A JSON
      // `null` is a body, and not an object: the schema refuses it.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      const c = await app.authApi.beginWebAuthnRegistration(sessionOf(request).sessionId, {
        relyingParty: rp,
      });
      return { challenge_id: c.challengeId, webauthn: c.options };
    },
  );

  app.post<{ Body: Static<typeof FinishBody> }>(
    "/v1/webapi/mfa/webauthn/register/finish",
    {
      schema: {
        summary: "Complete the enrolment with the authenticator's attestation",
        tags: ["mfa"],
        ...sessionSecurity,
        body: FinishBody,
        response: { 201: Device, ...errorResponses(401, 403, 404, 409, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request, reply) => {
      const device = await app.authApi.finishWebAuthnRegistration(sessionOf(request).sessionId, {
        challengeId: request.body.challenge_id,
        deviceName: request.body.device_name,
        response: request.body.credential,
        relyingParty: rp,
      });
      return reply.code(201).send(deviceView(device));
    },
  );

  app.get(
    "/v1/webapi/mfa/devices",
    {
      schema: {
        summary: "The caller's WebAuthn devices",
        tags: ["mfa"],
        ...sessionSecurity,
        response: {
          200: Type.Object({ items: Type.Array(Device) }),
          ...errorResponses(401, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request) => ({
      items: (await app.authApi.listWebAuthnDevices(sessionOf(request).sessionId)).map(deviceView),
    }),
  );

  app.delete<{ Params: Static<typeof DeviceParams> }>(
    "/v1/webapi/mfa/devices/:id",
    {
      schema: {
        summary: "Remove one of the caller's WebAuthn devices",
        tags: ["mfa"],
        ...sessionSecurity,
        params: DeviceParams,
        response: {
          200: Type.Object({ deleted: Type.String() }),
          ...errorResponses(401, 403, 404, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      await app.authApi.deleteWebAuthnDevice(sessionOf(request).sessionId, request.params.id);
      return { deleted: request.params.id };
    },
  );

  app.patch<{ Params: Static<typeof DeviceParams>; Body: Static<typeof RenameBody> }>(
    "/v1/webapi/mfa/devices/:id",
    {
      schema: {
        summary: "Rename one of the caller's WebAuthn devices",
        tags: ["mfa"],
        ...sessionSecurity,
        params: DeviceParams,
        body: RenameBody,
        response: { 200: Device, ...errorResponses(401, 403, 404, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request) =>
      deviceView(
        await app.authApi.renameWebAuthnDevice(
          sessionOf(request).sessionId,
          request.params.id,
          request.body.name,
        ),
      ),
  );
}
