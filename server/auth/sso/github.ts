// GitHub (and GitHub Enterprise) through the OAuth web flow: the user authorizes at
// `<endpoint_url>/login/oauth/authorize`; the code is traded at `<endpoint_url>/login/oauth/
// access_token` with the client secret, the redirect URI and the PKCE verifier (openid-client's
// OAuth 2 code grant, which also checks `state`); then `<api_endpoint_url>/user`, `/user/orgs` and
// `/user/teams` describe the user. GitHub issues no ID token, so the identity is only as good as
// the TLS connection to GitHub's API (HTTPS only). `settings.org`, when set, admits members of that
// organization only. Claims: login, orgs, teams ("org/team-slug"), email.
import * as oidc from "openid-client";
import { AccessDeniedError, BadParameterError, PreconditionFailedError } from "../../../core/errors.ts";
import type { Connector } from "../../../core/resources/index.ts";
import { providerFetch } from "./http.ts";
import { providerError } from "./oidc.ts";
import type {
  ConnectorSecret,
  ExternalIdentity,
  PendingProtocolState,
  ProtocolDeps,
  ProtocolFactory,
  ProviderAnswer,
  SsoProtocol,
} from "./protocol.ts";

export const GITHUB_ENDPOINT = "https://github.com";
export const GITHUB_API_ENDPOINT = "https://api.github.com";
/** read:org for organization and team membership, user:email for the address. */
const SCOPES = "read:user user:email read:org";
const MAX_PAGES = 10;

function httpsBase(name: string, url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PreconditionFailedError(`connector setting ${name} is not a URL`);
  }
  if (u.protocol !== "https:") throw new PreconditionFailedError(`connector setting ${name} must be https`);
  return u.toString().replace(/\/+$/, "");
}

export const githubProtocol: ProtocolFactory = async (
  connector: Connector,
  secret: ConnectorSecret | undefined,
  deps: ProtocolDeps,
): Promise<SsoProtocol> => {
  const s = connector.spec.settings;
  if (!s.client_id) throw new PreconditionFailedError("connector setting client_id is missing");
  if (!s.redirect_url) throw new PreconditionFailedError("connector setting redirect_url is missing");
  if (!secret) throw new PreconditionFailedError(`connector ${connector.metadata.name} has no client secret`);
  const web = httpsBase("endpoint_url", s.endpoint_url ?? GITHUB_ENDPOINT);
  const api = httpsBase("api_endpoint_url", s.api_endpoint_url ?? GITHUB_API_ENDPOINT);
  const redirectUri = httpsBase("redirect_url", s.redirect_url);
  const fetchFn = providerFetch(deps.caPem);
  const server: oidc.ServerMetadata = {
    issuer: web,
    authorization_endpoint: `${web}/login/oauth/authorize`,
    token_endpoint: `${web}/login/oauth/access_token`,
  };
  const configuration = (): oidc.Configuration => {
    // GitHub takes the client secret in the form body.
    const config = new oidc.Configuration(
      server,
      s.client_id ?? "",
      { redirect_uris: [redirectUri] },
      oidc.ClientSecretPost(secret.value),
    );
    config[oidc.customFetch] = (url, options) =>
      fetchFn(url, options as unknown as RequestInit) as ReturnType<oidc.CustomFetch>;
    config.timeout = 10;
    return config;
  };

  const apiGet = async (path: string, token: string): Promise<unknown[] | Record<string, unknown>> => {
    const res = await fetchFn(`${api}${path}`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        "user-agent": "svc-platform",
      },
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new AccessDeniedError(`GitHub API ${path.split("?")[0]} answered ${res.status}`);
    }
    return (await res.json()) as unknown[] | Record<string, unknown>;
  };

  const pages = async (path: string, token: string): Promise<Record<string, unknown>[]> => {
    const out: Record<string, unknown>[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const got = await apiGet(`${path}?per_page=100&page=${page}`, token);
      if (!Array.isArray(got)) break;
      out.push(...(got.filter((x) => x && typeof x === "object") as Record<string, unknown>[]));
      if (got.length < 100) break;
    }
    return out;
  };

  return {
    type: "github",
    async loginUrl(pending) {
      const url = oidc.buildAuthorizationUrl(configuration(), {
        redirect_uri: redirectUri,
        scope: SCOPES,
        state: pending.requestId,
        code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
        code_challenge_method: "S256",
        allow_signup: "false",
      });
      return { url: url.toString() };
    },

    async validate(answer: ProviderAnswer, pending: PendingProtocolState): Promise<ExternalIdentity> {
      if (answer.callbackQuery === undefined) throw new BadParameterError("callback_query is required");
      const current = new URL(redirectUri);
      current.search = answer.callbackQuery;
      let token: string;
      try {
        const tokens = await oidc.authorizationCodeGrant(configuration(), current, {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.requestId,
          idTokenExpected: false,
        });
        token = tokens.access_token;
      } catch (err) {
        throw providerError(err, "GitHub refused the code");
      }
      try {
        const user = await apiGet("/user", token);
        if (Array.isArray(user) || typeof user["login"] !== "string")
          throw new AccessDeniedError("GitHub API /user answered no login");
        const login = user["login"];
        const orgs = (await pages("/user/orgs", token))
          .map((o) => o["login"])
          .filter((x): x is string => typeof x === "string");
        const teams = (await pages("/user/teams", token)).flatMap((t) => {
          const org = (t["organization"] as Record<string, unknown> | undefined)?.["login"];
          return typeof org === "string" && typeof t["slug"] === "string" ? [`${org}/${t["slug"]}`] : [];
        });
        if (s.org && !orgs.some((o) => o.toLowerCase() === s.org?.toLowerCase()))
          throw new AccessDeniedError(`${login} is not a member of the GitHub organization ${s.org}`);
        const claims: Record<string, string[]> = { login: [login], orgs, teams };
        if (typeof user["email"] === "string" && user["email"] !== "") claims["email"] = [user["email"]];
        return { username: login, subject: String(user["id"] ?? login), claims };
      } catch (err) {
        throw providerError(err, "GitHub API");
      }
    },
  };
};
