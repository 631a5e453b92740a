// The world test/sso-attacks.test.ts attacks, on the SSO fixture: the three providers (given the
// OpenID provider's users), the connectors and roles below, a browser as an HTTP cookie jar (each
// attacker and victim is one), every answer kept for the secret scan, the platform's log lines
// captured from the fixture's own pino logger, and the secrets seen on the way.
// Connectors: corp-oidc (names by email), by-name (names by preferred_username), tmp-oidc (the
// one the lifecycle cases change and delete), all three mapping groups "devs" and email
// "*@corp.test" to access and groups "ops" to dev; gh (GitHub stand-in, org acme to access);
// corp-saml (SimpleSAMLphp, groups "eng" to access). Role dev: logins {{external.groups}} on
// env=dev nodes. Local user alice (password PASSWORD).
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { expect } from "vitest";
import type { Connector } from "../core/resources/index.ts";
import { SESSION_COOKIE } from "../server/proxy/credentials.ts";
import { SSO_COOKIE } from "../server/proxy/sso-cookie.ts";
import { type RunningGithubStandIn, startGithubStandIn } from "./harness/idp/github.ts";
import { type RunningOidcProvider, startOidcProvider } from "./harness/idp/oidc.ts";
import type { OidcTestUser } from "./harness/idp/oidc-types.ts";
import { freePort } from "./harness/ports.ts";
import { type RunningSamlIdp, startSamlIdp } from "./harness/saml-idp/saml-idp.ts";
import { cookieAttributes, type HttpResponse, type HttpsClient } from "./proxy-https-client.ts";

export type { HttpResponse };

import {
  connectorResource,
  PUBLIC_HOST,
  roleResource,
  type SsoPlatform,
  startSsoPlatform,
  userResource,
} from "./sso-fixture.ts";
import { signInAtProvider } from "./sso-provider-login.ts";

/** Every answer the proxy gave in the run, for the scan of secrets in bodies and headers. */
export const answers: HttpResponse[] = [];
/** Values that must appear in no answer body, audit event or log line. */
export const secrets = new Set<string>();
/** Secrets an answer body holds by design (the CLI's session id), checked in audit and logs only. */
export const logOnlySecrets: string[] = [];
/** A CLI's loopback listener (nothing listens: the tests read the redirect). */
export const LOOPBACK = "http://127.0.0.1:45999/callback";

export const randomSecret = (): string => randomBytes(32).toString("base64url");
export const s256 = (verifier: string): string => createHash("sha256").update(verifier).digest("base64url");

/**
 * The platform's log lines. The fixture's pino logger (auth and proxy share it) writes at the
 * level of SVC_TEST_LOG_LEVEL: raise it before the platform starts, then `attach` its logger,
 * whose destination then keeps each line (instead of printing it).
 */
export function capturedLogs(): { lines: string[]; attach(logger: object): void } {
  const lines: string[] = [];
  process.env["SVC_TEST_LOG_LEVEL"] = "debug";
  return {
    lines,
    attach(logger: object) {
      const stream = (logger as Record<symbol, { write(s: string): boolean } | undefined>)[
        pino.symbols.streamSym
      ];
      if (!stream) throw new Error("the logger has no destination stream");
      stream.write = (s: string) => {
        lines.push(s);
        return true;
      };
    },
  };
}

/** One browser: its cookies for the proxy's origin, sent back on each request. */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly #client: HttpsClient;

  constructor(client: HttpsClient) {
    this.#client = client;
  }

  async send(path: string, o: { method?: string; form?: Record<string, string>; json?: unknown } = {}) {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.cookies.size > 0) headers["cookie"] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    let raw: string | undefined;
    if (o.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      raw = new URLSearchParams(o.form).toString();
    }
    const res = await this.#client.send({
      method: o.method ?? (o.form || o.json !== undefined ? "POST" : "GET"),
      path,
      headers,
      ...(raw !== undefined ? { raw } : {}),
      ...(o.json !== undefined ? { body: o.json } : {}),
    });
    answers.push(res);
    for (const line of res.setCookies) {
      const [pair = ""] = line.split(";");
      const i = pair.indexOf("=");
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (value === "") this.cookies.delete(name);
      else {
        this.cookies.set(name, value);
        secrets.add(value);
      }
    }
    return res;
  }

  get session(): string | undefined {
    return this.cookies.get(SESSION_COOKIE);
  }
}

/** A session cookie with a value in this answer. */
export function issuedSession(res: HttpResponse): boolean {
  return (cookieAttributes(res.setCookies, SESSION_COOKIE)?.get("value") ?? "") !== "";
}

/** The exact refusal: status, error code, no session, no redirect anywhere, binding cookie not left set. */
export function expectRefused(res: HttpResponse, status: number, code: string, why?: RegExp): void {
  expect(res.status, res.text).toBe(status);
  const error = (res.json as { error?: { code?: string; message?: string } } | undefined)?.error;
  expect(error?.code, res.text).toBe(code);
  if (why) expect(error?.message ?? "").toMatch(why);
  expect(issuedSession(res)).toBe(false);
  expect(res.headers.location).toBeUndefined();
  expect(cookieAttributes(res.setCookies, SSO_COOKIE)?.get("value") ?? "").toBe("");
}

/** The query of a callback (code, state...) as the provider sent it; its code is a secret. */
export function keepCode(query: string): string {
  const code = new URLSearchParams(query).get("code");
  if (code) secrets.add(code);
  return query;
}

function oidcConnector(
  name: string,
  issuer: string,
  callback: string,
  secretFile: string,
  extra = {},
): Connector {
  return connectorResource(name, {
    type: "oidc",
    display_name: name,
    settings: {
      client_id: "svc",
      issuer_url: issuer,
      redirect_url: callback,
      scopes: ["openid", "email", "profile", "groups"],
      ...extra,
    },
    client_secret_ref: { file: secretFile },
    claims_to_roles: [
      { claim: "groups", value: "devs", roles: ["access"] },
      { claim: "groups", value: "ops", roles: ["dev"] },
      { claim: "email", value: "*@corp.test", roles: ["access"] },
    ],
  }) as Connector;
}

export class AttackWorld {
  readonly logs = capturedLogs();
  platform!: SsoPlatform;
  oidc!: RunningOidcProvider;
  github!: RunningGithubStandIn;
  saml!: RunningSamlIdp;
  /** the OIDC and GitHub redirect URI */
  callback = "";
  tmpConnector!: Connector;
  /** the GitHub client secret's file (client_secret_ref) */
  githubSecretFile = "";
  #dir = "";

  static async start(oidcUsers: OidcTestUser[]): Promise<AttackWorld> {
    const w = new AttackWorld();
    try {
      await w.#start(oidcUsers);
    } catch (err) {
      await w.close();
      throw err;
    }
    return w;
  }

  async #start(oidcUsers: OidcTestUser[]): Promise<void> {
    const oidcSecret = randomBytes(16).toString("hex");
    const githubSecret = randomBytes(16).toString("hex");
    secrets.add(oidcSecret).add(githubSecret);
    this.#dir = await mkdtemp(join(tmpdir(), "svc-sso-attacks-"));
    const port = await freePort();
    const origin = `https://${PUBLIC_HOST}:${port}`;
    const callback = `${origin}/v1/webapi/sso/callback`;
    this.callback = callback;
    const acsUrl = `${origin}/v1/webapi/sso/saml/acs`;
    const spEntityId = `${origin}/v1/webapi/sso/corp-saml/saml/metadata`;
    [this.oidc, this.github, this.saml] = await Promise.all([
      startOidcProvider({
        clients: [{ client_id: "svc", client_secret: oidcSecret, redirect_uris: [callback] }],
        users: oidcUsers,
      }),
      startGithubStandIn({
        apps: [{ client_id: "svc-gh", client_secret: githubSecret, callback_url: callback }],
        users: [
          {
            login: "octo",
            password: "octo-pw",
            id: 4242,
            email: "octo@corp.test",
            orgs: [{ login: "acme" }],
          },
        ],
      }),
      startSamlIdp({
        spEntityId,
        acsUrl,
        users: [{ username: "linus", password: "linus-pw", attributes: { uid: ["linus"], groups: ["eng"] } }],
      }),
    ]);
    const oidcFile = join(this.#dir, "oidc-secret");
    const githubFile = join(this.#dir, "github-secret");
    this.githubSecretFile = githubFile;
    await writeFile(oidcFile, oidcSecret, { mode: 0o600 });
    await writeFile(githubFile, githubSecret, { mode: 0o600 });
    const issuer = this.oidc.issuer;
    this.platform = await startSsoPlatform({
      proxyPort: port,
      providersCaPem: `${this.oidc.caPem}\n${this.github.caPem}`,
      rateLimit: { perAddress: 10_000, perUsername: 10_000, windowMs: 60_000 },
      passwordUsers: ["alice"],
      resources: [
        userResource("alice", ["access"]),
        roleResource("dev", { allow: { logins: ["{{external.groups}}"], node_labels: { env: "dev" } } }),
        oidcConnector("corp-oidc", issuer, callback, oidcFile),
        oidcConnector("by-name", issuer, callback, oidcFile, { username_claim: "preferred_username" }),
        connectorResource("gh", {
          type: "github",
          display_name: "GitHub",
          settings: {
            client_id: "svc-gh",
            redirect_url: callback,
            endpoint_url: this.github.url,
            api_endpoint_url: this.github.apiUrl,
          },
          client_secret_ref: { file: githubFile },
          claims_to_roles: [{ claim: "orgs", value: "acme", roles: ["access"] }],
        }),
        connectorResource("corp-saml", {
          type: "saml",
          display_name: "Corp SAML",
          settings: {
            entity_id: spEntityId,
            acs_url: acsUrl,
            sso_url: this.saml.ssoUrl,
            idp_certificate: this.saml.certPem,
          },
          claims_to_roles: [{ claim: "groups", value: "eng", roles: ["access"] }],
        }),
      ],
    });
    this.logs.attach(this.platform.proxy.app.log);
    this.tmpConnector = oidcConnector("tmp-oidc", issuer, callback, oidcFile);
    await this.platform.source.apply(this.tmpConnector);
  }

  async close(): Promise<void> {
    await this.platform?.close();
    await Promise.all([this.oidc?.stop(), this.github?.stop(), this.saml?.stop()]);
    if (this.#dir) await rm(this.#dir, { recursive: true, force: true });
  }

  browser(): Browser {
    return new Browser(this.platform.client);
  }

  /** The browser starts a login through `connector`: the provider URL it is sent to. */
  async start(b: Browser, connector: string): Promise<string> {
    const res = await b.send(`/v1/webapi/sso/${connector}/login?redirect_url=%2Fweb%2F`);
    expect(res.status, res.text).toBe(302);
    return String(res.headers.location);
  }

  /** Signs in at the OpenID provider or the GitHub stand-in: the callback query it answers. */
  async atProvider(authUrl: string, login: string): Promise<string> {
    const query = await signInAtProvider({
      authUrl,
      login,
      password: `${login}-pw`,
      caPem: `${this.oidc.caPem}\n${this.github.caPem}`,
      callback: this.callback,
    });
    return keepCode(query);
  }

  /** A whole browser login through an OIDC/GitHub connector, up to our callback's answer. */
  async browserLogin(b: Browser, connector: string, login: string): Promise<HttpResponse> {
    return b.send(`/v1/webapi/sso/callback?${await this.atProvider(await this.start(b, connector), login)}`);
  }

  /** A CLI login through corp-oidc up to the loopback code (a browser opens the URL and signs in). */
  async cliLogin(login: string): Promise<{ code: string; verifier: string }> {
    const verifier = randomSecret();
    const started = await this.browser().send("/v1/webapi/sso/corp-oidc/cli", {
      json: { redirect_url: LOOPBACK, code_challenge: s256(verifier) },
    });
    expect(started.status, started.text).toBe(200);
    const b = this.browser();
    const opened = await b.send(new URL((started.json as { login_url: string }).login_url).pathname);
    const query = await this.atProvider(String(opened.headers.location), login);
    const done = await b.send(`/v1/webapi/sso/callback?${query}`);
    expect(done.status, done.text).toBe(302);
    const to = new URL(String(done.headers.location));
    expect(`${to.origin}${to.pathname}`).toBe(LOOPBACK);
    const code = to.searchParams.get("code") ?? "";
    secrets.add(code);
    return { code, verifier };
  }
}

/**
 * A TCP relay that can hold new connections (accepted, nothing relayed) and later let them
 * through: a provider that answers only when the test says so, TLS and all.
 */
export async function holdingRelay(upstreamPort: number): Promise<{
  port: number;
  hold(): void;
  /** Resolves once a connection is being held. */
  held(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}> {
  let holding = false;
  const queue: Socket[] = [];
  const sockets = new Set<Socket>();
  let onHeld: (() => void) | undefined;
  const relay = (client: Socket) => {
    const upstream = connect({ host: "127.0.0.1", port: upstreamPort });
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server = createServer((client) => {
    sockets.add(client);
    if (!holding) return relay(client);
    client.pause();
    queue.push(client);
    onHeld?.();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    hold: () => {
      holding = true;
    },
    held: () =>
      queue.length > 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            onHeld = resolve;
          }),
    release: () => {
      holding = false;
      for (const client of queue.splice(0)) relay(client);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
