// The test identity providers themselves: the OpenID provider process (oidc-provider) completes
// a code flow with PKCE through its own login page for a certified relying-party library, and
// its controls (key rotation, a spoiled ID token) act; the GitHub stand-in checks the client
// secret, the one-time code and the token like GitHub does.
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oidc from "openid-client";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import { fetchTrusting } from "./harness/idp/fetch.ts";
import {
  authorizeAtGithub,
  cancelAtGithub,
  type RunningGithubStandIn,
  startGithubStandIn,
} from "./harness/idp/github.ts";
import {
  cancelAtOidcProvider,
  loginAtOidcProvider,
  type RunningOidcProvider,
  startOidcProvider,
} from "./harness/idp/oidc.ts";

let idp: RunningOidcProvider;
let gh: RunningGithubStandIn;
let chrome: RunningChromium;
let callback: Server;
let cb = "";

beforeAll(async () => {
  callback = createServer((_req, res) => res.end("back at the relying party"));
  await new Promise<void>((r) => callback.listen(0, "127.0.0.1", () => r()));
  cb = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/cb`;
  [idp, gh, chrome] = await Promise.all([
    startOidcProvider({
      clients: [{ client_id: "rp", client_secret: "rp-secret", redirect_uris: [cb] }],
      users: [
        {
          username: "alice",
          password: "alice-pw",
          claims: {
            email: "alice@example.com",
            groups: ["dev", "ops"],
            logins: ["alice"],
            preferred_username: "al",
          },
        },
      ],
    }),
    startGithubStandIn({
      apps: [{ client_id: "gh-app", client_secret: "gh-secret", callback_url: cb }],
      users: [
        {
          login: "octo",
          password: "octo-pw",
          id: 42,
          email: "octo@example.com",
          orgs: [
            { login: "acme", teams: ["admins", "devs"] },
            { login: "other", public: true },
          ],
        },
      ],
    }),
    launchChromium({ ignoreHTTPSErrors: true }),
  ]);
});

afterAll(async () => {
  await chrome?.close();
  await Promise.all([idp?.stop(), gh?.stop()]);
  callback?.close();
});

async function freshPage(): Promise<Page> {
  for (const p of chrome.context.pages()) await p.close();
  await chrome.context.clearCookies();
  return await chrome.context.newPage();
}

describe("OpenID provider process", () => {
  async function rp(): Promise<oidc.Configuration> {
    const config = await oidc.discovery(
      new URL(idp.issuer),
      "rp",
      "rp-secret",
      oidc.ClientSecretBasic("rp-secret"),
      {
        [oidc.customFetch]: fetchTrusting(idp.caPem),
      },
    );
    return config;
  }

  async function signIn(config: oidc.Configuration, page: Page, login = true) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: cb,
      scope: "openid email profile groups logins",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    await page.goto(url.href);
    if (login) await loginAtOidcProvider(page, "alice", "alice-pw");
    else await page.waitForURL((u) => u.href.startsWith(cb), { waitUntil: "commit" });
    return { answer: new URL(page.url()), verifier, state, nonce };
  }

  it("signs alice in on its own page; the ID token carries her claims; the code works once", async () => {
    const config = await rp();
    const page = await freshPage();
    const { answer, verifier, state, nonce } = await signIn(config, page);
    const checks = { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce };
    const tokens = await oidc.authorizationCodeGrant(config, answer, checks);
    const claims = tokens.claims();
    expect(claims).toMatchObject({
      iss: idp.issuer,
      aud: "rp",
      sub: "alice",
      email: "alice@example.com",
      groups: ["dev", "ops"],
      logins: ["alice"],
      preferred_username: "al",
    });
    await expect(oidc.authorizationCodeGrant(config, answer, checks)).rejects.toMatchObject({
      error: "invalid_grant",
    });
  });

  it("refuses a wrong password on its page and answers Cancel with access_denied", async () => {
    const config = await rp();
    const page = await freshPage();
    await page.goto(
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: cb,
        scope: "openid",
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: "S256",
        state: "s1",
      }).href,
    );
    await expect(loginAtOidcProvider(page, "alice", "wrong")).rejects.toThrow(/Wrong username or password/);
    await cancelAtOidcProvider(page);
    const answer = new URL(page.url());
    expect(answer.searchParams.get("error")).toBe("access_denied");
    expect(answer.searchParams.get("state")).toBe("s1");
  });

  it("requires PKCE", async () => {
    const config = await rp();
    const page = await freshPage();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: cb, scope: "openid", state: "s2" });
    await page.goto(url.href);
    await page.waitForURL((u) => u.href.startsWith(cb), { waitUntil: "commit" });
    expect(new URL(page.url()).searchParams.get("error")).toBe("invalid_request");
  });

  it("rotates its signing key and spoils ID tokens on request", async () => {
    const before = await idp.stats();
    const { kid } = await idp.rotateKeys();
    expect(kid).not.toBe(before.kid);
    const jwks = (await (await fetchTrusting(idp.caPem)(`${idp.issuer}/jwks`)).json()) as {
      keys: { kid: string }[];
    };
    expect(jwks.keys.map((k) => k.kid)).toEqual([kid]);

    const config = await rp();
    const page = await freshPage();
    await idp.misbehave("wrong-nonce");
    try {
      const { answer, verifier, state, nonce } = await signIn(config, page);
      const err = await oidc
        .authorizationCodeGrant(config, answer, {
          pkceCodeVerifier: verifier,
          expectedState: state,
          expectedNonce: nonce,
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(String((err as Error | undefined)?.cause)).toMatch(/"nonce" claim/);
    } finally {
      await idp.misbehave("none");
    }
    expect((await idp.stats()).idTokensTampered).toBe(before.idTokensTampered + 1);
    // Still signed in at the provider: the next round needs no password and is genuine again.
    const again = await signIn(config, page, false);
    const tokens = await oidc.authorizationCodeGrant(config, again.answer, {
      pkceCodeVerifier: again.verifier,
      expectedState: again.state,
      expectedNonce: again.nonce,
    });
    expect(tokens.claims()?.sub).toBe("alice");
  });
});

describe("GitHub stand-in", () => {
  const post = (body: Record<string, string>, accept = "application/json") =>
    fetchTrusting(gh.caPem)(`${gh.url}/login/oauth/access_token`, {
      method: "POST",
      headers: { accept },
      body: new URLSearchParams(body),
    });

  async function code(verifier: string, state: string): Promise<URL> {
    const page = await freshPage();
    const u = new URL(`${gh.url}/login/oauth/authorize`);
    u.search = new URLSearchParams({
      client_id: "gh-app",
      redirect_uri: `${cb}/sub`,
      scope: "read:org user:email",
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    }).toString();
    await page.goto(u.href);
    await authorizeAtGithub(page, "octo", "octo-pw");
    return new URL(page.url());
  }

  it("exchanges a code once, with the right secret and verifier, for a token the API takes", async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    const answer = await code(verifier, "st");
    expect(answer.searchParams.get("state")).toBe("st");
    const c = answer.searchParams.get("code") ?? "";
    const base = { client_id: "gh-app", code: c, redirect_uri: `${cb}/sub`, code_verifier: verifier };
    expect(await (await post({ ...base, client_secret: "nope" })).json()).toMatchObject({
      error: "incorrect_client_credentials",
    });
    const ok = await post({ ...base, client_secret: "gh-secret" });
    expect(ok.status).toBe(200);
    const { access_token: token, scope } = (await ok.json()) as { access_token: string; scope: string };
    expect(token).toMatch(/^gho_/);
    expect(scope).toBe("read:org,user:email");
    const replay = await post({ ...base, client_secret: "gh-secret" }, "*/*");
    expect(replay.status).toBe(200);
    expect(new URLSearchParams(await replay.text()).get("error")).toBe("bad_verification_code");

    const get = (path: string, auth = `Bearer ${token}`) =>
      fetchTrusting(gh.caPem)(`${gh.apiUrl}${path}`, { headers: { authorization: auth } });
    expect(await (await get("/user", `token ${token}`)).json()).toMatchObject({ login: "octo", id: 42 });
    expect(await (await get("/user/teams")).json()).toMatchObject([
      { slug: "admins", organization: { login: "acme" } },
      { slug: "devs", organization: { login: "acme" } },
    ]);
    expect((await (await get("/user/orgs")).json()) as unknown[]).toHaveLength(2);
    expect((await get("/user", "Bearer gho_forged")).status).toBe(401);
  });

  it("refuses a wrong verifier (and burns the code), a foreign redirect_uri, and answers Cancel", async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    const c = (await code(verifier, "s")).searchParams.get("code") ?? "";
    const base = { client_id: "gh-app", client_secret: "gh-secret", code: c };
    expect(
      await (await post({ ...base, code_verifier: oidc.randomPKCECodeVerifier() })).json(),
    ).toMatchObject({
      error: "bad_verification_code",
    });
    expect(await (await post({ ...base, code_verifier: verifier })).json()).toMatchObject({
      error: "bad_verification_code",
    });

    const page = await freshPage();
    const challenge = await oidc.calculatePKCECodeChallenge(verifier);
    const q = (redirect: string) =>
      `${gh.url}/login/oauth/authorize?client_id=gh-app&state=x&code_challenge=${challenge}&code_challenge_method=S256&redirect_uri=${encodeURIComponent(redirect)}`;
    await page.goto(q("https://evil.example/cb"));
    expect(new URL(page.url()).searchParams.get("error")).toBe("redirect_uri_mismatch");
    expect(page.url().startsWith(cb)).toBe(true);
    await page.goto(q(cb));
    await cancelAtGithub(page);
    expect(new URL(page.url()).searchParams.get("error")).toBe("access_denied");
  });
});

describe("provider processes", () => {
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it("end on stop() and when the process that started them is SIGKILLed", async () => {
    const oidcModule = new URL("./harness/idp/oidc.ts", import.meta.url).href;
    const ghModule = new URL("./harness/idp/github.ts", import.meta.url).href;
    const script =
      `const { startOidcProvider } = await import(${JSON.stringify(oidcModule)});` +
      `const { startGithubStandIn } = await import(${JSON.stringify(ghModule)});` +
      "const stopped = await startGithubStandIn({ apps: [], users: [] }); await stopped.stop();" +
      "const a = await startOidcProvider({ clients: [], users: [] });" +
      "const b = await startGithubStandIn({ apps: [], users: [] });" +
      "process.stdout.write(JSON.stringify([stopped.pid, a.pid, b.pid]) + '\\n');" +
      "process.kill(process.pid, 'SIGKILL');";
    const out = await new Promise<string>((resolve) => {
      execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 30_000 }, (_err, stdout) =>
        resolve(stdout),
      );
    });
    const pids = JSON.parse(out.trim()) as number[];
    expect(pids).toHaveLength(3);
    expect(alive(pids[0] ?? 0)).toBe(false);
    // The IPC channel closes with the parent, and the watchdog checks every second.
    const deadline = Date.now() + 10_000;
    while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(pids.filter(alive)).toEqual([]);
  });
});
