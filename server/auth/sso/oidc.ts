// OpenID Connect through openid-client (a certified relying-party library): provider metadata by
// discovery from issuer_url; the authorization code flow with PKCE (S256); `state` = the pending
// request's id and a per-request `nonce`; the ID token's issuer, audience, signature (against the
// provider's JWKS: an unknown key id makes the library fetch the JWKS again, which is how key
// rotation is followed), expiry and nonce are checked by the library, iat here, with a clock
// tolerance of CLOCK_TOLERANCE_S seconds and auth's own clock. HTTPS only. Claims are the ID token's, filled
// in from the userinfo endpoint (the subject must match) for the ones the token lacks.
import * as oidc from "openid-client";
import {
  AccessDeniedError,
  BadParameterError,
  NotAuthenticatedError,
  PreconditionFailedError,
  UnavailableError,
} from "../../../core/errors.ts";
import type { Connector } from "../../../core/resources/index.ts";
import { type ProviderFetch, providerFetch } from "./http.ts";
import { claimStrings } from "./mapping.ts";
import type {
  ConnectorSecret,
  ExternalIdentity,
  PendingProtocolState,
  ProtocolDeps,
  ProtocolFactory,
  ProviderAnswer,
  SsoProtocol,
} from "./protocol.ts";

/** Bound on the clock difference accepted between auth and the provider (iat, exp, nbf). */
export const CLOCK_TOLERANCE_S = 60;
/** How long discovered provider metadata is used before it is fetched again. */
export const METADATA_TTL_MS = 60 * 60_000;

/** Claims of the protocol itself: not facts about the user, so neither traits nor rule input. */
const PROTOCOL_CLAIMS = new Set([
  "iss",
  "aud",
  "exp",
  "iat",
  "nbf",
  "nonce",
  "at_hash",
  "c_hash",
  "s_hash",
  "auth_time",
  "azp",
  "sid",
  "jti",
  "acr",
  "amr",
]);

/** Turns a library or network failure into a typed error whose text carries no token or secret. */
export function providerError(err: unknown, what: string): Error {
  if (err instanceof AccessDeniedError || err instanceof NotAuthenticatedError) return err;
  if (err instanceof oidc.AuthorizationResponseError) {
    const code = /^[A-Za-z0-9_.-]{1,64}$/.test(err.error) ? err.error : "error";
    return new NotAuthenticatedError(`the identity provider refused the login: ${code}`);
  }
  if (err instanceof oidc.WWWAuthenticateChallengeError) {
    // A 401 with a challenge (e.g. a wrong client secret): its error code, never its description.
    const error = err.cause.find((c) => c.parameters.error)?.parameters.error ?? `status ${err.status}`;
    const code = /^[A-Za-z0-9_. -]{1,64}$/.test(error) ? error : "error";
    return new NotAuthenticatedError(`${what}: the identity provider answered ${code}`);
  }
  if (err instanceof oidc.ResponseBodyError) {
    const code = /^[A-Za-z0-9_.-]{1,64}$/.test(err.error) ? err.error : "error";
    return new NotAuthenticatedError(`${what}: the identity provider answered ${code}`);
  }
  const e = err as { code?: unknown; message?: unknown; name?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  if (code.startsWith("OAUTH_") || e.name === "ClientError" || e.name === "OperationProcessingError") {
    // The library's messages name the check that failed ("unexpected JWT "aud" claim value"),
    // never a token's content.
    const msg = typeof e.message === "string" ? e.message.slice(0, 200) : "refused";
    return new NotAuthenticatedError(`${what}: ${msg}`);
  }
  if (err instanceof UnavailableError || err instanceof PreconditionFailedError) return err;
  return new UnavailableError(`${what}: the identity provider cannot be reached`);
}

function requireHttps(name: string, url: string | undefined): URL {
  let u: URL;
  try {
    u = new URL(url ?? "");
  } catch {
    throw new PreconditionFailedError(`connector setting ${name} is not a URL`);
  }
  if (u.protocol !== "https:") throw new PreconditionFailedError(`connector setting ${name} must be https`);
  return u;
}

/** The claims as string lists, protocol claims left out. */
function claimsOf(raw: Record<string, unknown>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (PROTOCOL_CLAIMS.has(k)) continue;
    const values = claimStrings(v);
    if (values.length > 0) out[k] = values;
  }
  return out;
}

interface Discovered {
  server: oidc.ServerMetadata;
  at: number;
  jwks?: oidc.ExportedJWKSCache;
}

const discoveredCache = new Map<string, Discovered>();

export const oidcProtocol: ProtocolFactory = async (
  connector: Connector,
  secret: ConnectorSecret | undefined,
  deps: ProtocolDeps,
): Promise<SsoProtocol> => {
  const s = connector.spec.settings;
  const issuer = requireHttps("issuer_url", s.issuer_url);
  const redirectUri = requireHttps("redirect_url", s.redirect_url).toString();
  if (!s.client_id) throw new PreconditionFailedError("connector setting client_id is missing");
  if (!secret) throw new PreconditionFailedError(`connector ${connector.metadata.name} has no client secret`);
  const clientId = s.client_id;
  const clientSecret = secret.value;
  const fetchFn: ProviderFetch = providerFetch(deps.caPem);
  const customFetch: oidc.CustomFetch = (url, options) =>
    fetchFn(url, options as unknown as RequestInit) as ReturnType<oidc.CustomFetch>;
  const usernameClaim = s.username_claim ?? "email";
  const scopes = ["openid", ...(s.scopes ?? ["email", "profile"]).filter((x) => x !== "openid")];
  const cacheKey = `${issuer.href}\n${deps.caPem ?? ""}`;

  /** Metadata discovered at most METADATA_TTL_MS ago (auth's clock), shared by the connector's requests. */
  const discovered = async (): Promise<Discovered> => {
    const now = deps.clock.now().getTime();
    const hit = discoveredCache.get(cacheKey);
    if (hit && now - hit.at < METADATA_TTL_MS) return hit;
    try {
      const config = await oidc.discovery(issuer, clientId, undefined, oidc.ClientSecretBasic(clientSecret), {
        [oidc.customFetch]: customFetch,
        timeout: 10,
      });
      const d: Discovered = { server: { ...config.serverMetadata() }, at: now };
      discoveredCache.set(cacheKey, d);
      return d;
    } catch (err) {
      throw providerError(err, "provider discovery failed");
    }
  };

  /** A Configuration on auth's clock (clockSkew) with the connector's credentials. */
  const configuration = (d: Discovered): oidc.Configuration => {
    const skewS = Math.round((deps.clock.now().getTime() - Date.now()) / 1000);
    const auth =
      d.server.token_endpoint_auth_methods_supported?.includes("client_secret_basic") === false &&
      d.server.token_endpoint_auth_methods_supported.includes("client_secret_post")
        ? oidc.ClientSecretPost(clientSecret)
        : oidc.ClientSecretBasic(clientSecret);
    const config = new oidc.Configuration(
      d.server,
      clientId,
      {
        redirect_uris: [redirectUri],
        response_types: ["code"],
        [oidc.clockSkew]: skewS,
        [oidc.clockTolerance]: CLOCK_TOLERANCE_S,
      },
      auth,
    );
    config[oidc.customFetch] = customFetch;
    config.timeout = 10;
    // The ID token's signature is checked against the provider's JWKS even though it came over
    // TLS from the token endpoint (which the spec would allow to skip): a token the provider's
    // keys did not sign is refused, whatever the connection.
    oidc.enableNonRepudiationChecks(config);
    if (d.jwks) oidc.setJwksCache(config, d.jwks);
    return config;
  };

  return {
    type: "oidc",
    async loginUrl(pending) {
      const d = await discovered();
      const config = configuration(d);
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: scopes.join(" "),
        state: pending.requestId,
        nonce: pending.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
        code_challenge_method: "S256",
      });
      return { url: url.toString() };
    },

    async validate(answer: ProviderAnswer, pending: PendingProtocolState): Promise<ExternalIdentity> {
      if (answer.callbackQuery === undefined) throw new BadParameterError("callback_query is required");
      const d = await discovered();
      const config = configuration(d);
      const current = new URL(redirectUri);
      current.search = answer.callbackQuery;
      current.hash = "";
      let claims: Record<string, unknown>;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.requestId,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
        const idClaims = tokens.claims();
        if (!idClaims) throw new NotAuthenticatedError("the identity provider sent no ID token");
        // The library bounds exp but not an iat in the future: the same tolerance applies.
        if (idClaims.iat > deps.clock.now().getTime() / 1000 + CLOCK_TOLERANCE_S)
          throw new NotAuthenticatedError("the ID token was issued in the future (iat)");
        claims = { ...idClaims };
        if (d.server.userinfo_endpoint && tokens.access_token) {
          const info = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
          // The ID token wins where both say something: it is signed.
          claims = { ...info, ...idClaims };
        }
      } catch (err) {
        throw providerError(err, "the identity provider's answer was refused");
      } finally {
        const jwks = oidc.getJwksCache(config);
        if (jwks) d.jwks = jwks;
      }
      const subject = String(claims["sub"] ?? "");
      // An address the provider says it has not verified (false, or the string "false" some
      // providers send) names nobody and maps to nothing: refused as the user name, and dropped
      // from the claims so that no claims_to_roles rule or {{external.email}} can use it.
      const verified = claims["email_verified"];
      if (verified === false || (typeof verified === "string" && verified.toLowerCase() === "false")) {
        if (usernameClaim === "email")
          throw new AccessDeniedError("the identity's email is not verified by the identity provider");
        delete claims["email"];
      }
      const named = claimStrings(claims[usernameClaim]);
      const username = named.length === 1 ? named[0] : undefined;
      if (!username) throw new AccessDeniedError(`the identity has no single "${usernameClaim}" claim`);
      return { username, subject, claims: claimsOf(claims) };
    },
  };
};
