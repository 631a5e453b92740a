// Single sign-on through Connectors (docs/sso.md): the browser start, the CLI start and its
// browser leg, the identity provider's callbacks (OIDC and GitHub redirect, SAML POST), the CLI's
// code exchange and the SAML service-provider metadata. Auth does the protocol work and decides;
// the proxy binds the flow to the browser with a cookie, checks every redirect it answers, and
// sets the session cookies exactly as a password login does.
import formbody from "@fastify/formbody";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AccessDeniedError, NotFoundError } from "../../../core/errors.ts";
import { samlServiceProviderMetadata } from "../../auth/sso/saml.ts";
import type { IssuedSession, SsoValidated } from "../auth-client.ts";
import { relyingParty } from "../config.ts";
import { originAllowed } from "../credentials.ts";
import { mapError } from "../http-errors.ts";
import { commonErrors, ErrorBody, errorResponses, Timestamp } from "../schemas.ts";
import { setSessionCookies } from "../session-cookies.ts";
import { clearBindingCookie, newBinding, requestBindingHash, setBindingCookie } from "../sso-cookie.ts";
import {
  BROWSER_REDIRECT_PATTERN,
  browserRedirect,
  LOOPBACK_REDIRECT_PATTERN,
  loopbackOnly,
  loopbackRedirect,
  MAX_REDIRECT_LENGTH,
  providerRedirect,
} from "../sso-redirects.ts";
import { SessionIssued, SsoRequestId } from "./login.ts";

/** Connector names are resource names (DNS labels). */
const ConnectorName = Type.String({ pattern: "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$" });
const ConnectorParams = Type.Object({ connector: ConnectorName });

const BrowserStartQuery = Type.Object({
  redirect_url: Type.Optional(
    Type.String({
      maxLength: MAX_REDIRECT_LENGTH,
      pattern: BROWSER_REDIRECT_PATTERN,
      description: 'a path on this proxy to land on after login (default "/web/"); nothing else',
    }),
  ),
});

const CliStartBody = Type.Object(
  {
    redirect_url: Type.String({
      maxLength: MAX_REDIRECT_LENGTH,
      pattern: LOOPBACK_REDIRECT_PATTERN,
      description: "the CLI's loopback listener, http://127.0.0.1:<port>/... (or [::1], localhost)",
    }),
    code_challenge: Type.String({
      pattern: "^[A-Za-z0-9_-]{43}$",
      description: "base64url(SHA-256(code_verifier)), as PKCE's S256",
    }),
  },
  { additionalProperties: false },
);

const CliStarted = Type.Object({
  request_id: Type.String(),
  login_url: Type.String({ description: "open in a browser: /v1/webapi/sso/requests/<request_id>" }),
  expires_at: Timestamp,
});

/**
 * OIDC/GitHub callbacks carry code+state or error (+ iss, session_state...); auth reads them all.
 * Bounds: OAuth's code and error are printable ASCII (RFC 6749 VSCHAR); the state is our request
 * id. Even percent-encoded at their longest, they fit the 8 KiB URL limit together.
 */
const CallbackQuery = Type.Object(
  {
    state: Type.Optional(SsoRequestId),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: "^[\\x20-\\x7e]+$" })),
    error: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: "^[\\x20-\\x7e]+$" })),
  },
  { additionalProperties: true },
);

/** SAML HTTP-POST binding: the form the provider's page posts. */
const AcsBody = Type.Object(
  {
    SAMLResponse: Type.String({ minLength: 1, maxLength: 256 * 1024 }),
    RelayState: Type.String({ minLength: 1, maxLength: 512 }),
  },
  { additionalProperties: true },
);

const ExchangeBody = Type.Object(
  {
    // What auth issues (32 random bytes, base64url): a schema-valid code is one auth could accept.
    code: Type.String({ pattern: "^[A-Za-z0-9_-]{43}$" }),
    // RFC 7636's verifier alphabet and lengths
    code_verifier: Type.String({ pattern: "^[A-Za-z0-9._~-]{43,128}$" }),
  },
  { additionalProperties: false },
);

const Redirect = Type.Null({ description: "302 Found; Location says where" });
/** A body the SAML ACS accepts: the provider's form, up to this many bytes. */
export const ACS_BODY_LIMIT = 512 * 1024;

/** Browser-facing refusals: the one error body, or a small page when the browser asks for HTML. */
const browserErrors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      s,
      {
        description: "the error body; a small HTML page instead when the client accepts text/html",
        content: {
          "application/json": { schema: ErrorBody },
          "text/html": { schema: Type.String() },
        },
      },
    ]),
  );

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );

function wantsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? "";
  return /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept);
}

/** The page a browser sees when an SSO step is refused: what happened and the way back. */
function errorPage(status: number, message: string): string {
  const back = `/web/login#sso_error=${encodeURIComponent(message)}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in failed</title>
<link rel="stylesheet" href="/web/assets/style.css"></head>
<body><main class="form"><h1>Sign-in failed</h1>
<p class="error" id="sso-error" data-status="${status}">${escapeHtml(message)}</p>
<p><a id="back" href="${escapeHtml(back)}">Back to sign in</a></p></main></body></html>
`;
}

export async function ssoRoutes(app: FastifyInstance): Promise<void> {
  const cfg = app.proxyConfig;
  const rp = relyingParty(cfg);
  const publicOrigin = rp.origin;

  // Mapped by the one mapping (http-errors.ts); only the form of the body depends on Accept.
  // Anything not answered here goes on to the proxy's error handler (the JSON body).
  function browserErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    if (!wantsHtml(request)) throw err;
    const mapped = mapError(err);
    if (mapped.internal) request.log.error({ err }, "request failed");
    else request.log.info({ code: mapped.body.error.code, status: mapped.status }, "request refused");
    return reply
      .code(mapped.status)
      .type("text/html; charset=utf-8")
      .send(errorPage(mapped.status, mapped.body.error.message));
  }

  // The JSON routes a CLI calls: a browser on another site must not drive them (login CSRF).
  async function sameOriginOnly(request: FastifyRequest): Promise<void> {
    const origin = request.headers.origin;
    if (!originAllowed(typeof origin === "string" ? origin : undefined, publicOrigin)) {
      throw new AccessDeniedError("cross-origin request refused");
    }
  }

  function issue(reply: FastifyReply, session: IssuedSession): void {
    const left = Math.ceil((session.expires.getTime() - Date.now()) / 1000);
    setSessionCookies(reply, session.sessionId, Math.max(1, left));
  }

  /** Where the browser goes once auth has judged the provider's answer. */
  function afterValidation(reply: FastifyReply, result: SsoValidated): FastifyReply {
    switch (result.kind) {
      case "session": {
        const to = browserRedirect(result.redirectUrl, publicOrigin);
        issue(reply, result.session);
        return reply.redirect(to, 302);
      }
      case "mfa_required": {
        // In the fragment: never sent to a server, so the token stays out of access logs. A
        // browser login goes on to the page it started from once the key has answered.
        const fragment = new URLSearchParams({ sso_mfa: result.mfaToken, sso_request: result.requestId });
        const next = result.cli
          ? ""
          : `?next=${encodeURIComponent(browserRedirect(result.redirectUrl, publicOrigin))}`;
        return reply.redirect(`/web/login${next}#${fragment.toString()}`, 302);
      }
      case "cli_code":
        return reply.redirect(loopbackOnly(result.redirectUrl), 302);
    }
  }

  app.get<{ Params: Static<typeof ConnectorParams>; Querystring: Static<typeof BrowserStartQuery> }>(
    "/v1/webapi/sso/:connector/login",
    {
      // No HEAD: a link checker or preview must not start, bind or finish a sign-in.
      exposeHeadRoute: false,
      schema: {
        summary: "Start a browser sign-in through a connector: sets the binding cookie, 302 to the provider",
        tags: ["sso"],
        params: ConnectorParams,
        querystring: BrowserStartQuery,
        response: { 302: Redirect, ...browserErrors(404, 412, 429, ...commonErrors) },
      },
      preHandler: app.limitLoginAttempts,
      errorHandler: browserErrorHandler,
    },
    async (request, reply) => {
      const redirect = browserRedirect(request.query.redirect_url, publicOrigin);
      const binding = newBinding();
      const started = await app.authApi.createSsoAuthRequest({
        connector: request.params.connector,
        browserBindingHash: binding.hash,
        clientRedirectUrl: redirect,
        codeChallenge: "",
        clientAddress: request.ip,
      });
      const to = providerRedirect(started.redirectUrl);
      setBindingCookie(reply, binding.value);
      return reply.redirect(to, 302);
    },
  );

  app.post<{ Params: Static<typeof ConnectorParams>; Body: Static<typeof CliStartBody> }>(
    "/v1/webapi/sso/:connector/cli",
    {
      schema: {
        summary: "Start a CLI sign-in (RFC 8252 loopback): answers the URL to open in a browser",
        tags: ["sso"],
        params: ConnectorParams,
        body: CliStartBody,
        response: { 200: CliStarted, ...errorResponses(403, 404, 412, 429, ...commonErrors) },
      },
      preHandler: [sameOriginOnly, app.limitLoginAttempts],
    },
    async (request) => {
      const redirect = loopbackRedirect(request.body.redirect_url).href;
      const started = await app.authApi.createSsoAuthRequest({
        connector: request.params.connector,
        browserBindingHash: "",
        clientRedirectUrl: redirect,
        codeChallenge: request.body.code_challenge,
        clientAddress: request.ip,
      });
      return {
        request_id: started.requestId,
        login_url: new URL(`/v1/webapi/sso/requests/${encodeURIComponent(started.requestId)}`, publicOrigin)
          .href,
        expires_at: started.expires.toISOString(),
      };
    },
  );

  app.get<{ Params: { request_id: string } }>(
    "/v1/webapi/sso/requests/:request_id",
    {
      // No HEAD: a link checker or preview must not start, bind or finish a sign-in.
      exposeHeadRoute: false,
      schema: {
        summary: "A CLI's sign-in opened in a browser: binds it to this browser, 302 to the provider",
        tags: ["sso"],
        params: Type.Object({ request_id: SsoRequestId }),
        response: { 302: Redirect, ...browserErrors(401, 403, 404, 412, 429, ...commonErrors) },
      },
      preHandler: app.limitLoginAttempts,
      errorHandler: browserErrorHandler,
    },
    async (request, reply) => {
      const binding = newBinding();
      const bound = await app.authApi.bindSsoAuthRequest({
        requestId: request.params.request_id,
        browserBindingHash: binding.hash,
      });
      const to = providerRedirect(bound.redirectUrl);
      setBindingCookie(reply, binding.value);
      return reply.redirect(to, 302);
    },
  );

  /** Both callbacks: no binding cookie, no call to auth; the cookie goes whatever the outcome. */
  function bindingOf(request: FastifyRequest, reply: FastifyReply): string {
    const hash = requestBindingHash(request);
    clearBindingCookie(reply);
    if (hash === undefined) {
      throw new AccessDeniedError(
        "this sign-in was not started in this browser (no SSO binding cookie): start it again here",
      );
    }
    return hash;
  }

  app.get<{ Querystring: Static<typeof CallbackQuery> }>(
    "/v1/webapi/sso/callback",
    {
      // No HEAD: a link checker or preview must not start, bind or finish a sign-in.
      exposeHeadRoute: false,
      schema: {
        summary:
          "OIDC and GitHub redirect URI: auth checks the answer; 302 to the page, the WebAuthn step or the CLI",
        tags: ["sso"],
        querystring: CallbackQuery,
        response: { 302: Redirect, ...browserErrors(401, 403, 404, 412, 429, ...commonErrors) },
      },
      preHandler: app.limitLoginAttempts,
      errorHandler: browserErrorHandler,
    },
    async (request, reply) => {
      const hash = bindingOf(request, reply);
      // The query exactly as received: auth's OAuth library reads code, state, iss and error.
      const raw = request.raw.url ?? "";
      const q = raw.indexOf("?");
      const result = await app.authApi.validateSsoResponse({
        callbackQuery: q < 0 ? "" : raw.slice(q + 1),
        browserBindingHash: hash,
        clientAddress: request.ip,
        relyingParty: rp,
      });
      return afterValidation(reply, result);
    },
  );

  // The SAML POST binding needs a form parser; only this route gets one (every other route
  // keeps "JSON or 415").
  await app.register(async (acs) => {
    acs.removeAllContentTypeParsers();
    await acs.register(formbody, { bodyLimit: ACS_BODY_LIMIT });
    acs.post<{ Body: Static<typeof AcsBody> }>(
      "/v1/webapi/sso/saml/acs",
      {
        bodyLimit: ACS_BODY_LIMIT,
        schema: {
          summary:
            "SAML assertion consumer service (HTTP-POST binding): auth checks the response; 302 as the callback",
          tags: ["sso"],
          consumes: ["application/x-www-form-urlencoded"],
          body: AcsBody,
          response: { 302: Redirect, ...browserErrors(401, 403, 404, 412, 429, ...commonErrors) },
        },
        preHandler: app.limitLoginAttempts,
        errorHandler: browserErrorHandler,
      },
      async (request, reply) => {
        const hash = bindingOf(request, reply);
        const result = await app.authApi.validateSsoResponse({
          samlResponse: request.body.SAMLResponse,
          relayState: request.body.RelayState,
          browserBindingHash: hash,
          clientAddress: request.ip,
          relyingParty: rp,
        });
        return afterValidation(reply, result);
      },
    );
  });

  app.post<{ Body: Static<typeof ExchangeBody> }>(
    "/v1/webapi/sso/exchange",
    {
      schema: {
        summary: "The CLI trades its loopback code and PKCE verifier for the session",
        tags: ["sso"],
        body: ExchangeBody,
        response: { 200: SessionIssued, ...errorResponses(401, 403, 404, 429, ...commonErrors) },
      },
      preHandler: [sameOriginOnly, app.limitLoginAttempts],
    },
    async (request) => {
      const session = await app.authApi.exchangeSsoCode({
        code: request.body.code,
        codeVerifier: request.body.code_verifier,
      });
      return {
        session_id: session.sessionId,
        expires_at: session.expires.toISOString(),
        scope: session.scope,
      };
    },
  );

  app.get<{ Params: Static<typeof ConnectorParams> }>(
    "/v1/webapi/sso/:connector/saml/metadata",
    {
      schema: {
        summary: "SAML service-provider metadata of a connector, to configure the identity provider",
        tags: ["sso"],
        params: ConnectorParams,
        response: {
          200: {
            description: "SAML 2.0 EntityDescriptor",
            content: { "application/samlmetadata+xml": { schema: Type.String() } },
          },
          ...errorResponses(404, ...commonErrors),
        },
      },
    },
    async (request, reply) => {
      const connector = app.resources
        .list("Connector")
        .find((c) => c.metadata.name === request.params.connector);
      if (connector === undefined || connector.spec.type !== "saml") {
        throw new NotFoundError(`no SAML connector ${request.params.connector}`);
      }
      // Without the connector's secret (auth holds it): the metadata names no signing key.
      const xml = samlServiceProviderMetadata(connector);
      return reply.type("application/samlmetadata+xml; charset=utf-8").send(xml);
    },
  );
}
