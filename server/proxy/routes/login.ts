// Login (password step), the WebAuthn second step, current session and logout (spec 3, 4.1, 5).
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AccessDeniedError, NotAuthenticatedError } from "../../../core/errors.ts";
import type { IssuedSession, SessionInfo, WebAuthnLoginChallenge } from "../auth-client.ts";
import { relyingParty } from "../config.ts";
import { originAllowed } from "../credentials.ts";
import { errorBody } from "../http-errors.ts";
import { withRetryAfter } from "../plugins/login-rate-limit.ts";
import { sessionOf } from "../plugins/session.ts";
import {
  AssertionCredential,
  ChallengeId,
  commonErrors,
  ErrorBody,
  errorResponses,
  sessionSecurity,
  Timestamp,
  WebAuthnRequestOptions,
} from "../schemas.ts";
import { clearSessionCookies, setSessionCookies } from "../session-cookies.ts";
import { loopbackOnly } from "../sso-redirects.ts";
import { KeptBodies } from "./kept-body.ts";

const LoginBody = Type.Object(
  {
    // What auth accepts as a login name (server/auth/login.ts): no control characters, no "/".
    username: Type.String({ minLength: 1, maxLength: 253, pattern: "^[^\\u0000-\\u001f\\u007f/]+$" }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const Scope = Type.Union([Type.Literal("full"), Type.Literal("mfa_enrollment")], {
  description:
    'what the session may do: "full", or "mfa_enrollment" when the roles require MFA and the user has no device yet (only the session, logout and WebAuthn device routes answer; enrol, then log in again)',
});

export const SessionIssued = Type.Object({
  session_id: Type.String({
    description: "the bearer credential; also set as the __Host-svc_session cookie (the spec's svc_session)",
  }),
  expires_at: Timestamp,
  scope: Scope,
});

const MfaChallenge = Type.Object({
  challenge_id: Type.String({ description: "pass to /mfa/webauthn/login/finish" }),
  webauthn: WebAuthnRequestOptions,
});

const MfaPending = Type.Object({
  mfa_token: Type.String({
    description: "proof of the password step (5 min); /mfa/webauthn/login/begin takes it",
  }),
  challenge_id: Type.String({ description: "pass to /mfa/webauthn/login/finish" }),
  webauthn: WebAuthnRequestOptions,
});

const MfaRequired = Type.Object(
  { error: ErrorBody.properties.error, mfa: MfaPending },
  { description: "401 for a user with WebAuthn enrolled: no session until the challenge is answered" },
);

const BeginBody = Type.Object(
  { mfa_token: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);

/** The request id of an SSO login (docs/sso.md): base64url of 32 random bytes. */
export const SsoRequestId = Type.String({ pattern: "^[A-Za-z0-9_-]{16,128}$" });

const FinishBody = Type.Object(
  {
    challenge_id: ChallengeId,
    credential: AssertionCredential,
    // the `sso_request` of /web/login#sso_mfa=...&sso_request=... after an SSO login
    sso_request: Type.Optional(SsoRequestId),
  },
  { additionalProperties: false },
);

const CliRedirect = Type.Object(
  {
    redirect_url: Type.String({
      description:
        "after the WebAuthn step of a CLI SSO login: the CLI's loopback URL with its one-time code",
    }),
  },
  { additionalProperties: false },
);

const SessionView = Type.Object({
  username: Type.String(),
  roles: Type.Array(Type.String()),
  expires_at: Timestamp,
  mfa_verified: Type.Boolean({ description: "the login passed a second factor (WebAuthn)" }),
  scope: Scope,
  allowed: Type.Array(Type.String(), {
    description:
      'the admin capabilities ("resource:verb", e.g. "users:list") the user\'s roles grant now, as auth\'s access checker decides them; empty for a mfa_enrollment session. What the console shows: every route still checks on its own',
  }),
});

const sessionView = (info: SessionInfo): Static<typeof SessionView> => ({
  username: info.username,
  roles: info.roles,
  expires_at: info.expires.toISOString(),
  mfa_verified: info.mfaVerified,
  scope: info.scope,
  allowed: info.allowed,
});

/** The session cache hands out the same SessionInfo while it answers for the session. */
const sessionBodies = new KeptBodies<SessionInfo>();

function challengeBody(c: WebAuthnLoginChallenge): Static<typeof MfaChallenge> {
  return { challenge_id: c.challengeId, webauthn: c.options };
}

export async function loginRoutes(app: FastifyInstance): Promise<void> {
  const cfg = app.proxyConfig;
  const rp = relyingParty(cfg);
  const publicOrigin = rp.origin;

  // Login CSRF: a browser posting from another site sends its Origin; refuse it. Clients that send
  // no Origin (CLIs) are fine: they are not browsers riding on ambient credentials.
  async function sameOriginOnly(request: FastifyRequest): Promise<void> {
    const origin = request.headers.origin;
    if (!originAllowed(typeof origin === "string" ? origin : undefined, publicOrigin)) {
      throw new AccessDeniedError("cross-origin login refused");
    }
  }

  function issue(reply: FastifyReply, session: IssuedSession): Static<typeof SessionIssued> {
    // The cookies live exactly as long as the session auth issued (auth.session_ttl, 12 h by
    // default as the spec says), so the browser drops them when auth does.
    const left = Math.ceil((session.expires.getTime() - Date.now()) / 1000);
    setSessionCookies(reply, session.sessionId, Math.max(1, left));
    return {
      session_id: session.sessionId,
      expires_at: session.expires.toISOString(),
      scope: session.scope,
    };
  }

  app.post<{ Body: Static<typeof LoginBody> }>(
    "/v1/webapi/login",
    {
      schema: {
        summary: "Exchange username and password for a session (or a WebAuthn challenge)",
        tags: ["session"],
        body: LoginBody,
        response: {
          200: SessionIssued,
          401: Type.Union([MfaRequired, ErrorBody]),
          ...errorResponses(403, 429, ...commonErrors),
        },
      },
      preHandler: [sameOriginOnly, app.limitLoginAttempts],
    },
    async (request, reply) => {
      const result = await app.authApi
        .authenticateLocal({
          username: request.body.username,
          password: request.body.password,
          clientAddress: request.ip,
          relyingParty: rp,
        })
        .catch((err: unknown) => {
          throw withRetryAfter(reply, err);
        });
      if (result.kind === "mfa_required") {
        return reply.code(401).send({
          ...errorBody("mfa_required", "WebAuthn confirmation required"),
          mfa: { mfa_token: result.mfaToken, ...challengeBody(result.challenge) },
        });
      }
      return issue(reply, result.session);
    },
  );

  app.post<{ Body: Static<typeof BeginBody> }>(
    "/v1/webapi/mfa/webauthn/login/begin",
    {
      schema: {
        summary: "A fresh WebAuthn challenge for a login that passed the password step",
        tags: ["mfa"],
        body: BeginBody,
        response: { 200: MfaChallenge, ...errorResponses(401, 403, 404, 429, ...commonErrors) },
      },
      preHandler: [sameOriginOnly, app.limitLoginAttempts],
    },
    async (request) => {
      const challenge = await app.authApi.beginWebAuthnLogin({
        mfaToken: request.body.mfa_token,
        relyingParty: rp,
      });
      return challengeBody(challenge);
    },
  );

  app.post<{ Body: Static<typeof FinishBody> }>(
    "/v1/webapi/mfa/webauthn/login/finish",
    {
      schema: {
        summary: "Answer the WebAuthn challenge; issues the session",
        tags: ["mfa"],
        body: FinishBody,
        response: {
          200: Type.Union([SessionIssued, CliRedirect]),
          ...errorResponses(401, 403, 404, 429, ...commonErrors),
        },
      },
      preHandler: [sameOriginOnly, app.limitLoginAttempts],
    },
    async (request, reply) => {
      const result = await app.authApi.finishWebAuthnLogin({
        challengeId: request.body.challenge_id,
        response: request.body.credential,
        clientAddress: request.ip,
        relyingParty: rp,
        ...(request.body.sso_request !== undefined ? { ssoRequestId: request.body.sso_request } : {}),
      });
      // A CLI's SSO login: the session waits for the CLI under a one-time code; the page sends
      // the browser to the CLI's loopback listener (checked to be one) instead of signing it in.
      if (result.kind === "cli_redirect") return { redirect_url: loopbackOnly(result.redirectUrl) };
      return issue(reply, result.session);
    },
  );

  app.get(
    "/v1/webapi/session",
    {
      schema: {
        summary: "The caller's current session",
        tags: ["session"],
        ...sessionSecurity,
        response: { 200: SessionView, ...errorResponses(401, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request, reply) => sessionBodies.send(reply, sessionOf(request).info, sessionView),
  );

  app.post(
    "/v1/webapi/logout",
    {
      schema: {
        summary:
          "Invalidate the session server-side and clear the cookies (an expired or revoked session too); no body, or an empty one",
        tags: ["session"],
        ...sessionSecurity,
        response: {
          200: Type.Object({ logged_out: Type.Boolean() }),
          ...errorResponses(401, 403, ...commonErrors),
        },
      },
    },
    // Not requireSession: an expired or revoked session is logged out already, and its cookies
    // must still go. No credential at all stays 401.
    async (request, reply) => {
      const credential = app.checkedCredential(request);
      if (credential === undefined) throw new NotAuthenticatedError();
      await app.authApi.deleteSession(credential.sessionId).catch((err: unknown) => {
        if (!(err instanceof NotAuthenticatedError)) throw err;
      });
      clearSessionCookies(reply);
      return { logged_out: true };
    },
  );
}
