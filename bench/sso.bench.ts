// Single sign-on: a browser's OIDC login end to end against a real OpenID provider (oidc-provider
// in its own process), split into our part (the start route, the callback route, the first
// session request) and the provider's (its authorization endpoint, login form and redirects,
// walked over HTTP as a browser would), and the callback route's cost against a password login
// (POST /v1/webapi/login) measured in the same run, interleaved.
// The callback includes auth's back-channel calls to the provider (token endpoint, JWKS when not
// cached): they are part of what the callback costs, so they stay in "ours".
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningOidcProvider, startOidcProvider } from "../test/harness/idp/oidc.ts";
import { freePort } from "../test/harness/ports.ts";
import { cookieHeader } from "../test/proxy-https-client.ts";
import {
  connectorResource,
  PASSWORD,
  PUBLIC_HOST,
  type SsoPlatform,
  startSsoPlatform,
  userResource,
} from "../test/sso-fixture.ts";
import { signInAtProvider } from "../test/sso-provider-login.ts";
import type { BenchReport, BenchRow } from "./report.ts";
import { percentile } from "./report.ts";

const ITERATIONS = Number(process.env["SVC_BENCH_SSO_ITERATIONS"] ?? 40);
const WARMUP = 3;

interface Timings {
  start: number[];
  provider: number[];
  callback: number[];
  session: number[];
  total: number[];
  password: number[];
}

function row(name: string, xs: number[], note?: string): BenchRow {
  const p50 = percentile(xs, 50);
  return {
    name,
    perSecond: 1000 / p50,
    unit: "login",
    p50Ms: p50,
    p99Ms: percentile(xs, 99),
    ...(note ? { note } : {}),
  };
}

async function time<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const v = await fn();
  return [v, performance.now() - t];
}

/** One browser login through the connector; answers each leg's milliseconds. */
async function ssoLogin(p: SsoPlatform, oidc: RunningOidcProvider, callback: string) {
  const [start, startMs] = await time(() => p.client.send({ path: "/v1/webapi/sso/corp-oidc/login" }));
  if (start.status !== 302) throw new Error(`start: ${start.status} ${start.text}`);
  const binding = cookieHeader(start.setCookies);
  const [query, providerMs] = await time(() =>
    signInAtProvider({
      authUrl: String(start.headers.location),
      login: "ada",
      password: "ada-pw",
      caPem: oidc.caPem,
      callback,
    }),
  );
  const [back, callbackMs] = await time(() =>
    p.client.send({ path: `/v1/webapi/sso/callback?${query}`, headers: { cookie: binding } }),
  );
  if (back.status !== 302 || back.headers.location !== "/web/") {
    throw new Error(`callback: ${back.status} ${back.text}`);
  }
  const session = cookieHeader(back.setCookies.filter((c) => c.startsWith("__Host-svc_session=")));
  const [view, sessionMs] = await time(() =>
    p.client.send({ path: "/v1/webapi/session", headers: { cookie: session } }),
  );
  if (view.status !== 200) throw new Error(`session: ${view.status} ${view.text}`);
  return { startMs, providerMs, callbackMs, sessionMs };
}

async function passwordLogin(p: SsoPlatform): Promise<number> {
  const [res, ms] = await time(() =>
    p.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: "bench-user", password: PASSWORD },
    }),
  );
  if (res.status !== 200) throw new Error(`password login: ${res.status} ${res.text}`);
  return ms;
}

export default async function ssoBench(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-sso-"));
  const port = await freePort();
  const origin = `https://${PUBLIC_HOST}:${port}`;
  const callback = `${origin}/v1/webapi/sso/callback`;
  const secret = randomBytes(16).toString("hex");
  const oidc = await startOidcProvider({
    clients: [{ client_id: "svc", client_secret: secret, redirect_uris: [callback] }],
    users: [
      {
        username: "ada",
        password: "ada-pw",
        claims: { email: "ada@corp.test", email_verified: true, groups: ["devs"] },
      },
    ],
  });
  let platform: SsoPlatform | undefined;
  try {
    await writeFile(join(dir, "secret"), secret, { mode: 0o600 });
    platform = await startSsoPlatform({
      proxyPort: port,
      providersCaPem: oidc.caPem,
      // Measured here: the routes, not the per-address login budget.
      rateLimit: { perAddress: 1_000_000, perUsername: 1_000_000, windowMs: 60_000 },
      passwordUsers: ["bench-user"],
      resources: [
        userResource("bench-user", ["access"]),
        connectorResource("corp-oidc", {
          type: "oidc",
          display_name: "Corp OIDC",
          settings: {
            client_id: "svc",
            issuer_url: oidc.issuer,
            redirect_url: callback,
            scopes: ["openid", "email", "profile", "groups"],
          },
          client_secret_ref: { file: join(dir, "secret") },
          claims_to_roles: [{ claim: "groups", value: "devs", roles: ["access"] }],
        }),
      ],
    });
    const p = platform;
    const t: Timings = { start: [], provider: [], callback: [], session: [], total: [], password: [] };
    for (let i = 0; i < WARMUP; i++) {
      await ssoLogin(p, oidc, callback);
      await passwordLogin(p);
    }
    // Interleaved, so the machine's load drifts over both alike.
    for (let i = 0; i < ITERATIONS; i++) {
      const s = await ssoLogin(p, oidc, callback);
      t.start.push(s.startMs);
      t.provider.push(s.providerMs);
      t.callback.push(s.callbackMs);
      t.session.push(s.sessionMs);
      t.total.push(s.startMs + s.providerMs + s.callbackMs + s.sessionMs);
      t.password.push(await passwordLogin(p));
    }
    const ours = t.start.map((x, i) => x + (t.callback[i] ?? 0) + (t.session[i] ?? 0));
    const median = (xs: number[]) => percentile(xs, 50);
    return {
      title: `single sign-on, OIDC against oidc-provider (${ITERATIONS} logins after ${WARMUP} warm-up, one at a time, interleaved with password logins)`,
      rows: [
        row("SSO login end to end (browser, over HTTP)", t.total),
        row("  ours: start + callback + first session", ours),
        row("    start  GET /v1/webapi/sso/{c}/login", t.start, "CreateSSOAuthRequest"),
        row(
          "    callback  GET /v1/webapi/sso/callback",
          t.callback,
          "ValidateSSOResponse: incl. auth's token request to the provider",
        ),
        row("    first GET /v1/webapi/session", t.session),
        row("  provider: authorize, login form, redirects", t.provider),
        row("password login  POST /v1/webapi/login", t.password, "same run, baseline"),
      ],
      ratios: [
        { name: "ours / end to end (median)", ratio: median(ours) / median(t.total), lowerIsBetter: true },
        { name: "provider / end to end (median)", ratio: median(t.provider) / median(t.total) },
        {
          name: "callback / password login (median)",
          ratio: median(t.callback) / median(t.password),
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    await platform?.close();
    await oidc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
