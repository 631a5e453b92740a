// The OpenID provider process of the tests: the certified `oidc-provider` package over HTTPS on a
// loopback port, with its own login page (the provider's interaction routes, below), password
// users with email/groups/logins claims, PKCE required for every client, and controls to rotate
// the signing key and to make the token endpoint hand out a broken ID token (attack tests).
// Started by oidc.ts through startHarnessProcess; never imported by the tests themselves.
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import {
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
} from "jose";
import Provider, { type KoaContextWithOIDC } from "oidc-provider";
import type { MisbehaveMode, OidcServerConfig, OidcTestUser } from "./oidc-types.ts";
import { serveHarnessProcess } from "./serve.ts";

let config: OidcServerConfig;
let issuer = "";
let provider: Provider;
let signingKey: JWK & { kid: string };
let mode: MisbehaveMode = "none";
let modeSeconds = 120;
const stats = { jwksFetches: 0, tokenRequests: 0, idTokensTampered: 0 };
const cookieKeys = [randomBytes(32).toString("base64url")];

async function newSigningKey(): Promise<JWK & { kid: string }> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: randomBytes(8).toString("hex"), alg: "RS256", use: "sig" };
}

function html(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${html(title)}</title></head><body><h1>${html(title)}</h1>${body}</body></html>`;
}

function loginForm(uid: string, clientId: string, error?: string): string {
  return page(
    "Test OpenID Provider: sign in",
    `<p>Sign in to continue to <b>${html(clientId)}</b>.</p>${error ? `<p id="error">${html(error)}</p>` : ""}` +
      `<form id="login" method="post" action="/interaction/${html(uid)}/login" autocomplete="off">` +
      `<label>Username <input name="login" required></label> ` +
      `<label>Password <input name="password" type="password" required></label> ` +
      `<button type="submit" name="submit" value="login">Sign in</button></form>` +
      `<form id="abort" method="post" action="/interaction/${html(uid)}/abort">` +
      `<button type="submit" name="cancel" value="cancel">Cancel</button></form>`,
  );
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function findUser(login: string): OidcTestUser | undefined {
  return config.users.find((u) => u.username === login);
}

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.byteLength;
      if (size > 16 * 1024) req.destroy(new Error("form too large"));
      else chunks.push(c);
    });
    req.on("end", () => resolve(new URLSearchParams(Buffer.concat(chunks).toString("utf8"))));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(body);
}

/** The provider's own interaction pages: login (checked password) and consent (granted at once). */
async function interaction(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const [, , uid, action] = path.split("/");
  if (uid !== details.uid) throw new Error("interaction mismatch");
  const clientId = String(details.params["client_id"] ?? "");
  if (req.method === "GET" && action === undefined) {
    if (details.prompt.name === "login") return send(res, 200, loginForm(details.uid, clientId));
    // Consent: every configured client is first-party here, so what it asked for is granted.
    const accountId = details.session?.accountId;
    if (accountId === undefined) throw new Error("consent without a session");
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId });
    if (grant === undefined) throw new Error("grant vanished");
    const missing = details.prompt.details;
    if (Array.isArray(missing["missingOIDCScope"])) grant.addOIDCScope(missing["missingOIDCScope"].join(" "));
    if (Array.isArray(missing["missingOIDCClaims"])) grant.addOIDCClaims(missing["missingOIDCClaims"]);
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  if (req.method === "POST" && action === "login") {
    const form = await readForm(req);
    const user = findUser(form.get("login") ?? "");
    if (user === undefined || !sameSecret(user.password, form.get("password") ?? ""))
      return send(res, 401, loginForm(details.uid, clientId, "Wrong username or password."));
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: user.username } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (req.method === "POST" && action === "abort") {
    await readForm(req);
    await provider.interactionFinished(
      req,
      res,
      { error: "access_denied", error_description: "End-User aborted interaction" },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  send(res, 404, page("Not found", ""));
}

function b64url(v: unknown): string {
  return Buffer.from(JSON.stringify(v)).toString("base64url");
}

/** Rewrites a genuine ID token the way the current misbehave mode says. */
async function tamper(idToken: string): Promise<string> {
  const header = decodeProtectedHeader(idToken);
  const claims: Record<string, unknown> = { ...decodeJwt(idToken) };
  const now = Math.floor(Date.now() / 1000);
  let key: JWK & { kid: string } = signingKey;
  switch (mode) {
    case "wrong-audience":
      claims["aud"] = "someone-else";
      claims["azp"] = undefined;
      break;
    case "wrong-issuer":
      claims["iss"] = `${issuer}/elsewhere`;
      break;
    case "wrong-nonce":
      claims["nonce"] = randomBytes(16).toString("base64url");
      break;
    case "no-nonce":
      claims["nonce"] = undefined;
      break;
    case "expired":
      claims["iat"] = now - modeSeconds - 600;
      claims["exp"] = now - modeSeconds;
      break;
    case "future-iat":
      claims["iat"] = now + modeSeconds;
      claims["exp"] = now + modeSeconds + 600;
      break;
    case "unsigned":
      return `${b64url({ alg: "none", typ: header.typ ?? "JWT" })}.${b64url(claims)}.`;
    case "unknown-key":
      key = await newSigningKey();
      break;
    case "bad-signature":
      // The kid the provider publishes, but a different private key: the signature cannot verify.
      key = { ...(await newSigningKey()), kid: signingKey.kid };
      break;
    case "none":
      return idToken;
  }
  stats.idTokensTampered++;
  const body = Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== undefined));
  return await new SignJWT(body)
    .setProtectedHeader({ alg: "RS256", kid: key.kid, typ: header.typ ?? "JWT" })
    .sign(await importJWK(key, "RS256"));
}

function makeProvider(): Provider {
  const p = new Provider(issuer, {
    clients: config.clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      redirect_uris: c.redirect_uris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: c.token_endpoint_auth_method ?? "client_secret_basic",
    })),
    jwks: { keys: [signingKey] },
    cookies: { keys: cookieKeys },
    pkce: { required: () => true },
    // The claims go into the ID token itself, so a relying party needs no userinfo call.
    conformIdTokenClaims: false,
    scopes: ["openid", "email", "profile", "groups", "logins"],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "preferred_username"],
      groups: ["groups"],
      logins: ["logins"],
    },
    features: { devInteractions: { enabled: false } },
    ttl: { IdToken: config.idTokenTtlSeconds ?? 3600, AuthorizationCode: 600 },
    findAccount: (_ctx: KoaContextWithOIDC, id: string) => {
      const user = findUser(id);
      if (user === undefined) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, ...user.claims }),
      };
    },
    renderError: (ctx: KoaContextWithOIDC, out: Record<string, unknown>) => {
      ctx.type = "html";
      ctx.body = page(
        "Test OpenID Provider: error",
        `<pre id="error">${html(String(out["error"]))}: ${html(String(out["error_description"] ?? ""))}</pre>`,
      );
    },
  });
  p.use(async (ctx, next) => {
    if (ctx.path === "/jwks") stats.jwksFetches++;
    if (ctx.path === "/token") stats.tokenRequests++;
    await next();
    const body = ctx.body as { id_token?: unknown } | undefined;
    if (ctx.path === "/token" && mode !== "none" && body && typeof body.id_token === "string")
      ctx.body = { ...body, id_token: await tamper(body.id_token) };
  });
  return p;
}

async function start(c: OidcServerConfig): Promise<Record<string, unknown>> {
  config = c;
  signingKey = await newSigningKey();
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer({ key: c.tls.key, cert: c.tls.cert }, (req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path.startsWith("/interaction/")) {
      interaction(req, res, path).catch((err: unknown) => {
        if (!res.headersSent) send(res, 400, page("Interaction failed", html(String(err))));
      });
      return;
    }
    handler?.(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = makeProvider();
  handler = provider.callback();
  const swap = (): void => {
    // A new provider instance with the new key set; the in-memory adapter's storage is shared by
    // every instance in the process, so sessions and codes carry over the rotation.
    provider = makeProvider();
    handler = provider.callback();
  };
  rotate = async () => {
    signingKey = await newSigningKey();
    swap();
    return { kid: signingKey.kid };
  };
  return { issuer, kid: signingKey.kid };
}

let rotate: () => Promise<{ kid: string }> = async () => {
  throw new Error("not started");
};

const MODES: readonly MisbehaveMode[] = [
  "none",
  "wrong-audience",
  "wrong-issuer",
  "wrong-nonce",
  "no-nonce",
  "expired",
  "future-iat",
  "unsigned",
  "unknown-key",
  "bad-signature",
];

serveHarnessProcess<OidcServerConfig>(start, async (op, args) => {
  if (op === "rotate") return await rotate();
  if (op === "stats") return { ...stats, kid: signingKey.kid };
  if (op === "misbehave") {
    const a = args as { mode: MisbehaveMode; seconds?: number };
    if (!MODES.includes(a.mode)) throw new Error(`unknown mode ${String(a.mode)}`);
    mode = a.mode;
    modeSeconds = a.seconds ?? 120;
    return { mode };
  }
  throw new Error(`unknown op ${op}`);
});
