// A local stand-in for GitHub's OAuth web flow and the few REST calls a login needs, run as its
// own process (github.ts starts it). It checks what GitHub documents that it checks: the app's
// client_id, a redirect_uri at or below the registered callback URL, the client secret, a
// one-time code bound to the app and redirect_uri that lapses after 10 minutes, the PKCE
// verifier, and a token on every API call; and it answers the way GitHub answers (token errors
// as 200 with `error=...`, API errors as JSON `message`, a User-Agent required).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { GithubServerConfig, GithubTestApp, GithubTestUser } from "./github-types.ts";
import { serveHarnessProcess } from "./serve.ts";

const CODE_TTL_MS = 10 * 60_000;
const API = "/api/v3";
const DOCS =
  "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors";

interface PendingAuthorize {
  app: GithubTestApp;
  redirectUri: string;
  state: string | null;
  scopes: string[];
  challenge: string | null;
  expires: number;
}
interface IssuedCode {
  app: GithubTestApp;
  redirectUri: string;
  user: GithubTestUser;
  scopes: string[];
  challenge: string | null;
  expires: number;
  used: boolean;
}

let config: GithubServerConfig;
const pendings = new Map<string, PendingAuthorize>();
const codes = new Map<string, IssuedCode>();
const tokens = new Map<string, { user: GithubTestUser; scopes: string[] }>();
const stats = { authorizeRequests: 0, tokenRequests: 0, tokensIssued: 0, apiRequests: 0 };
const KNOWN_SCOPES = new Set(["read:user", "user:email", "read:org", "user", "repo", "admin:org"]);

function html(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(
    `<!doctype html><html><head><meta charset="utf-8"><title>${html(title)}</title></head><body><h1>${html(title)}</h1>${body}</body></html>`,
  );
}

function redirect(res: ServerResponse, to: string): void {
  res.writeHead(302, { location: to, "cache-control": "no-store" });
  res.end();
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** GitHub: same scheme, host and port as the callback URL, and its path at or below the callback's. */
function redirectAllowed(app: GithubTestApp, uri: string): boolean {
  let u: URL;
  let cb: URL;
  try {
    u = new URL(uri);
    cb = new URL(app.callback_url);
  } catch {
    return false;
  }
  if (u.protocol !== cb.protocol || u.host !== cb.host || u.username || u.password) return false;
  const base = cb.pathname.endsWith("/") ? cb.pathname : `${cb.pathname}/`;
  return u.pathname === cb.pathname || u.pathname.startsWith(base);
}

function withParams(uri: string, params: Record<string, string | null>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== null) u.searchParams.set(k, v);
  return u.toString();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.byteLength;
      if (size > 64 * 1024) req.destroy(new Error("body too large"));
      else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function authorizePage(res: ServerResponse, id: string, app: GithubTestApp, error?: string): void {
  page(
    res,
    error ? 401 : 200,
    "Sign in to GitHub (test stand-in)",
    `<p>to continue to <b>${html(app.client_id)}</b></p>${error ? `<p id="error">${html(error)}</p>` : ""}` +
      `<form id="authorize" method="post" action="/login/oauth/authorize/decide" autocomplete="off">` +
      `<input type="hidden" name="authorization" value="${html(id)}">` +
      `<label>Username <input name="login" required></label> ` +
      `<label>Password <input name="password" type="password" required></label> ` +
      `<button type="submit" name="decision" value="authorize">Authorize</button></form>` +
      `<form id="cancel" method="post" action="/login/oauth/authorize/decide">` +
      `<input type="hidden" name="authorization" value="${html(id)}">` +
      `<button type="submit" name="decision" value="cancel">Cancel</button></form>`,
  );
}

function authorize(res: ServerResponse, q: URLSearchParams) {
  stats.authorizeRequests++;
  const app = config.apps.find((a) => a.client_id === q.get("client_id"));
  if (app === undefined) return page(res, 404, "Not Found", "<p>no such application</p>");
  const state = q.get("state");
  const redirectUri = q.get("redirect_uri") ?? app.callback_url;
  if (!redirectAllowed(app, redirectUri))
    return redirect(
      res,
      withParams(app.callback_url, {
        error: "redirect_uri_mismatch",
        error_description: "The redirect_uri MUST match the registered callback URL for this application.",
        error_uri: `${DOCS}#redirect-uri-mismatch`,
        state,
      }),
    );
  const challenge = q.get("code_challenge");
  const method = q.get("code_challenge_method") ?? (challenge === null ? null : "plain");
  if (challenge !== null && (method !== "S256" || !/^[A-Za-z0-9_-]{43}$/.test(challenge)))
    return page(res, 400, "Bad request", "<p>code_challenge must be S256 (43 base64url characters)</p>");
  if (challenge === null && config.requirePkce !== false)
    return page(res, 400, "Bad request", "<p>this stand-in requires PKCE (code_challenge, S256)</p>");
  const scopes = (q.get("scope") ?? "").split(/[\s,]+/).filter((s) => KNOWN_SCOPES.has(s));
  const id = randomBytes(16).toString("hex");
  pendings.set(id, { app, redirectUri, state, scopes, challenge, expires: Date.now() + CODE_TTL_MS });
  authorizePage(res, id, app);
}

async function decide(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = new URLSearchParams(await readBody(req));
  const id = form.get("authorization") ?? "";
  const p = pendings.get(id);
  if (p === undefined || p.expires < Date.now())
    return page(res, 400, "Bad request", "<p>authorization expired</p>");
  if (form.get("decision") === "cancel") {
    pendings.delete(id);
    return redirect(
      res,
      withParams(p.redirectUri, {
        error: "access_denied",
        error_description: "The user has denied your application access.",
        error_uri: `${DOCS}#access-denied`,
        state: p.state,
      }),
    );
  }
  const user = config.users.find((u) => u.login === form.get("login"));
  if (user === undefined || !sameSecret(user.password, form.get("password") ?? ""))
    return authorizePage(res, id, p.app, "Incorrect username or password.");
  pendings.delete(id);
  const code = randomBytes(10).toString("hex");
  codes.set(code, {
    app: p.app,
    redirectUri: p.redirectUri,
    user,
    scopes: p.scopes,
    challenge: p.challenge,
    expires: Date.now() + CODE_TTL_MS,
    used: false,
  });
  redirect(res, withParams(p.redirectUri, { code, state: p.state }));
}

function tokenAnswer(req: IncomingMessage, res: ServerResponse, fields: Record<string, string>): void {
  // GitHub answers form-encoded unless the client asks for JSON, and with 200 even for errors.
  if ((req.headers.accept ?? "").includes("application/json")) {
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
    res.end(JSON.stringify(fields));
  } else {
    res.writeHead(200, { "content-type": "application/x-www-form-urlencoded; charset=utf-8" });
    res.end(new URLSearchParams(fields).toString());
  }
}

function tokenError(req: IncomingMessage, res: ServerResponse, error: string, description: string): void {
  const anchor = error.replaceAll("_", "-");
  tokenAnswer(req, res, { error, error_description: description, error_uri: `${DOCS}#${anchor}` });
}

async function accessToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
  stats.tokenRequests++;
  const raw = await readBody(req);
  const type = req.headers["content-type"] ?? "";
  const params = new Map<string, string>();
  if (type.includes("application/json")) {
    const json = JSON.parse(raw) as Record<string, unknown>;
    for (const [k, v] of Object.entries(json)) if (typeof v === "string") params.set(k, v);
  } else for (const [k, v] of new URLSearchParams(raw)) params.set(k, v);
  // HTTP Basic client authentication (RFC 6749 2.3.1: both parts form-encoded) is accepted too.
  const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (basic?.[1]) {
    const [id, secret] = Buffer.from(basic[1], "base64").toString("utf8").split(":");
    if (id !== undefined && secret !== undefined) {
      params.set("client_id", decodeURIComponent(id.replaceAll("+", " ")));
      params.set("client_secret", decodeURIComponent(secret.replaceAll("+", " ")));
    }
  }
  const app = config.apps.find((a) => a.client_id === params.get("client_id"));
  if (app === undefined || !sameSecret(app.client_secret, params.get("client_secret") ?? ""))
    return tokenError(
      req,
      res,
      "incorrect_client_credentials",
      "The client_id and/or client_secret passed are incorrect.",
    );
  const code = codes.get(params.get("code") ?? "");
  if (code === undefined || code.used || code.expires < Date.now() || code.app !== app)
    return tokenError(req, res, "bad_verification_code", "The code passed is incorrect or expired.");
  code.used = true; // one attempt: a failed exchange burns the code as well
  const redirectUri = params.get("redirect_uri");
  if (redirectUri !== undefined && redirectUri !== code.redirectUri)
    return tokenError(
      req,
      res,
      "redirect_uri_mismatch",
      "The redirect_uri MUST match the registered callback URL for this application.",
    );
  if (code.challenge !== null) {
    const verifier = params.get("code_verifier") ?? "";
    const computed = createHash("sha256").update(verifier).digest("base64url");
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !sameSecret(computed, code.challenge))
      return tokenError(
        req,
        res,
        "bad_verification_code",
        "The code_verifier does not match the code_challenge.",
      );
  }
  const token = `gho_${randomBytes(18).toString("hex")}`;
  tokens.set(token, { user: code.user, scopes: code.scopes });
  stats.tokensIssued++;
  tokenAnswer(req, res, { access_token: token, token_type: "bearer", scope: code.scopes.join(",") });
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

function paginate<T>(res: ServerResponse, url: URL, items: T[], headers: Record<string, string>): void {
  const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get("per_page") ?? "30") || 30));
  const pageNo = Math.max(1, Number(url.searchParams.get("page") ?? "1") || 1);
  const slice = items.slice((pageNo - 1) * perPage, pageNo * perPage);
  const links: string[] = [];
  if (pageNo * perPage < items.length) {
    const next = new URL(url);
    next.searchParams.set("page", String(pageNo + 1));
    next.searchParams.set("per_page", String(perPage));
    links.push(`<${next.toString()}>; rel="next"`);
  }
  json(res, 200, slice, links.length > 0 ? { ...headers, link: links.join(", ") } : headers);
}

function api(req: IncomingMessage, res: ServerResponse, url: URL, path: string) {
  stats.apiRequests++;
  if (!req.headers["user-agent"]) {
    res.writeHead(403, { "content-type": "text/plain" });
    res.end(
      "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required).\n",
    );
    return;
  }
  const m = /^(?:Bearer|token)\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  if (m === null)
    return json(res, 401, {
      message: "Requires authentication",
      documentation_url: "https://docs.github.com/rest",
      status: "401",
    });
  const grant = tokens.get(m[1] ?? "");
  if (grant === undefined)
    return json(res, 401, {
      message: "Bad credentials",
      documentation_url: "https://docs.github.com/rest",
      status: "401",
    });
  const { user, scopes } = grant;
  const headers = { "x-oauth-scopes": scopes.join(", ") };
  const origin = `${url.protocol}//${url.host}`;
  const has = (...s: string[]) => s.some((x) => scopes.includes(x));
  const orgJson = (login: string) => ({
    login,
    id: idOf(login),
    node_id: Buffer.from(`O_${login}`).toString("base64"),
    url: `${origin}${API}/orgs/${login}`,
    description: null,
  });
  if (req.method !== "GET") return json(res, 404, { message: "Not Found", status: "404" });
  if (path === "/user")
    return json(
      res,
      200,
      {
        login: user.login,
        id: user.id,
        node_id: Buffer.from(`U_${user.login}`).toString("base64"),
        type: "User",
        site_admin: false,
        name: user.name ?? null,
        email: user.publicEmail ? (user.email ?? null) : null,
      },
      headers,
    );
  if (path === "/user/emails") {
    if (!has("user", "user:email")) return json(res, 404, { message: "Not Found", status: "404" }, headers);
    const list = user.email
      ? [{ email: user.email, primary: true, verified: true, visibility: "private" }]
      : [];
    return paginate(res, url, list, headers);
  }
  if (path === "/user/orgs") {
    const all = user.orgs ?? [];
    const visible = has("read:org", "user", "admin:org") ? all : all.filter((o) => o.public === true);
    return paginate(
      res,
      url,
      visible.map((o) => orgJson(o.login)),
      { ...headers, "x-accepted-oauth-scopes": "admin:org, read:org, repo, user, write:org" },
    );
  }
  if (path === "/user/teams") {
    if (!has("read:org", "user", "repo", "admin:org"))
      return json(res, 403, { message: "Resource not accessible by integration", status: "403" }, headers);
    const teams = (user.orgs ?? []).flatMap((o) =>
      (o.teams ?? []).map((slug) => ({
        id: idOf(`${o.login}/${slug}`),
        name: slug,
        slug,
        organization: orgJson(o.login),
      })),
    );
    return paginate(res, url, teams, headers);
  }
  json(res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest", status: "404" });
}

function idOf(s: string): number {
  return createHash("sha256").update(s).digest().readUInt32BE(0);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", `https://${req.headers.host ?? "127.0.0.1"}`);
  const path = url.pathname;
  if (path === "/login/oauth/authorize" && req.method === "GET") return authorize(res, url.searchParams);
  if (path === "/login/oauth/authorize/decide" && req.method === "POST") return await decide(req, res);
  if (path === "/login/oauth/access_token" && req.method === "POST") return await accessToken(req, res);
  if (path.startsWith(`${API}/`)) return api(req, res, url, path.slice(API.length));
  page(res, 404, "Not Found", "");
}

async function start(c: GithubServerConfig): Promise<Record<string, unknown>> {
  config = c;
  const server = createServer({ key: c.tls.key, cert: c.tls.cert }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { message: "Server Error" });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, apiUrl: `${url}${API}` };
}

serveHarnessProcess<GithubServerConfig>(start, async (op) => {
  if (op === "stats") return { ...stats };
  throw new Error(`unknown op ${op}`);
});
