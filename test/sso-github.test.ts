// GitHub protocol rules against the GitHub stand-in (test/harness/idp/github.ts: a process that
// checks what GitHub documents it checks) with Chromium on its authorize page: auth's
// githubProtocol must turn a genuine answer into the user's login, orgs and teams, and be
// refused on a wrong client secret, a replayed code, a redirect_uri that is not the code's, a
// state or PKCE verifier that is not the request's, the user's Cancel, and a user outside `org`.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../core/clock.ts";
import { SvcError } from "../core/errors.ts";
import type { Connector } from "../core/resources/index.ts";
import { githubProtocol } from "../server/auth/sso/github.ts";
import type { PendingProtocolState, ProtocolDeps, SsoProtocol } from "../server/auth/sso/protocol.ts";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import {
  authorizeAtGithub,
  cancelAtGithub,
  type RunningGithubStandIn,
  startGithubStandIn,
} from "./harness/idp/github.ts";
import { loopbackTls } from "./harness/sts.ts";

let gh: RunningGithubStandIn;
let chrome: RunningChromium;
let page: Page;
let rp: Server;
let callback = "";
let deps: ProtocolDeps;
let protocol: SsoProtocol;

const b64 = (n: number) => randomBytes(n).toString("base64url");
const SECRET = "gh-client-secret";

function connector(settings: Record<string, unknown> = {}): Connector {
  return {
    apiVersion: "svc.dev/v1",
    kind: "Connector",
    metadata: { name: "github" },
    spec: {
      type: "github",
      display_name: "GitHub",
      settings: {
        client_id: "svc-gh",
        redirect_url: callback,
        endpoint_url: gh.url,
        api_endpoint_url: gh.apiUrl,
        org: "acme",
        ...settings,
      },
    },
  } as Connector;
}

beforeAll(async () => {
  const tls = await loopbackTls();
  rp = createServer({ key: tls.key, cert: tls.cert }, (_req, res) => res.end("callback"));
  await new Promise<void>((r) => rp.listen(0, "127.0.0.1", () => r()));
  callback = `https://127.0.0.1:${(rp.address() as AddressInfo).port}/v1/webapi/sso/callback`;
  [gh, chrome] = await Promise.all([
    startGithubStandIn({
      apps: [{ client_id: "svc-gh", client_secret: SECRET, callback_url: callback }],
      users: [
        {
          login: "octo",
          password: "octo-pw",
          id: 42,
          email: "octo@example.com",
          publicEmail: true,
          orgs: [{ login: "acme", teams: ["admins", "devs"] }, { login: "other" }],
        },
        { login: "stranger", password: "stranger-pw", id: 7, orgs: [{ login: "other", teams: ["x"] }] },
        {
          login: "busy",
          password: "busy-pw",
          id: 8,
          orgs: [{ login: "acme", teams: Array.from({ length: 130 }, (_, i) => `team-${i}`) }],
        },
      ],
    }),
    launchChromium({ ignoreHTTPSErrors: true }),
  ]);
  page = await chrome.context.newPage();
  deps = { clock: systemClock, caPem: gh.caPem, claimOnce: async () => true };
  protocol = await githubProtocol(connector(), { value: SECRET }, deps);
});

afterAll(async () => {
  await chrome?.close();
  await gh?.stop();
  rp?.close();
});

function pending(): PendingProtocolState {
  return { requestId: b64(32), nonce: b64(32), codeVerifier: b64(32), extra: {} };
}

/** One trip through the stand-in's authorize page; the pending request and the callback's query. */
async function round(
  login = "octo",
  via: SsoProtocol = protocol,
): Promise<{ p: PendingProtocolState; query: string; url: URL }> {
  const p = pending();
  await page.goto((await via.loginUrl(p)).url);
  if (!page.url().startsWith(callback)) await authorizeAtGithub(page, login, `${login}-pw`);
  const url = new URL(page.url());
  expect(url.href.startsWith(callback)).toBe(true);
  return { p, query: url.search.slice(1), url };
}

async function refusal(promise: Promise<unknown>): Promise<SvcError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the answer was accepted").toBeInstanceOf(SvcError);
  const e = err as SvcError;
  expect(e.message).not.toMatch(/gho_|gh-client-secret/);
  return e;
}

/**
 * Runs `f` and says what the stand-in saw meanwhile: token requests and tokens issued. auth's
 * error text does not carry GitHub's error code (it arrives in a 200 body), so these counts show
 * that a refusal came from the stand-in's check rather than from somewhere else.
 */
async function seen<T>(f: () => Promise<T>): Promise<{ result: T; asked: number; issued: number }> {
  const before = await gh.stats();
  const result = await f();
  const after = await gh.stats();
  return {
    result,
    asked: after.tokenRequests - before.tokenRequests,
    issued: after.tokensIssued - before.tokensIssued,
  };
}

describe("githubProtocol against the GitHub stand-in", () => {
  it("turns a genuine answer into the login, orgs and teams (org/team-slug)", async () => {
    const { url } = await protocol.loginUrl(pending());
    const u = new URL(url);
    expect(`${u.origin}${u.pathname}`).toBe(`${gh.url}/login/oauth/authorize`);
    expect(u.searchParams.get("code_challenge_method")).toBe("S256");
    expect(u.searchParams.get("scope")).toContain("read:org");
    const { p, query } = await round();
    const id = await protocol.validate({ callbackQuery: query }, p);
    expect(id.username).toBe("octo");
    expect(id.subject).toBe("42");
    expect(id.claims["login"]).toEqual(["octo"]);
    expect(id.claims["orgs"]).toEqual(["acme", "other"]);
    expect(id.claims["teams"]).toEqual(["acme/admins", "acme/devs"]);
    expect(id.claims["email"]).toEqual(["octo@example.com"]);
  });

  it("reads every page of a user's teams", async () => {
    const { p, query } = await round("busy");
    const id = await protocol.validate({ callbackQuery: query }, p);
    expect(id.claims["teams"]).toHaveLength(130);
    expect(id.claims["teams"]).toContain("acme/team-129");
  });

  it("refuses a user who is not a member of the connector's org", async () => {
    const { p, query } = await round("stranger");
    const e = await refusal(protocol.validate({ callbackQuery: query }, p));
    expect(e.code).toBe("access_denied");
    expect(e.message).toMatch(/not a member/);
  });

  it("is refused by GitHub with a wrong client secret", async () => {
    const wrong = await githubProtocol(connector(), { value: "not-the-secret" }, deps);
    const { p, query } = await round("octo", wrong);
    const {
      result: e,
      asked,
      issued,
    } = await seen(() => refusal(wrong.validate({ callbackQuery: query }, p)));
    expect(e.code).toBe("not_authenticated");
    expect([asked, issued]).toEqual([1, 0]);
    // The refusal was about the secret: with the right one the same code still works (the
    // stand-in leaves a code untouched for an unauthenticated client).
    expect((await protocol.validate({ callbackQuery: query }, p)).username).toBe("octo");
  });

  it("is refused by GitHub on a replayed code", async () => {
    const { p, query } = await round();
    await protocol.validate({ callbackQuery: query }, p);
    const {
      result: e,
      asked,
      issued,
    } = await seen(() => refusal(protocol.validate({ callbackQuery: query }, p)));
    expect(e.code).toBe("not_authenticated");
    expect([asked, issued]).toEqual([1, 0]);
  });

  it("is refused on a redirect_uri that is not the code's, or not registered for the app", async () => {
    // Both below the registered callback, so GitHub takes either at authorize; the code is bound to one.
    const other = await githubProtocol(
      connector({ redirect_url: `${callback}/other` }),
      { value: SECRET },
      deps,
    );
    const { p, query } = await round("octo", other);
    const {
      result: e,
      asked,
      issued,
    } = await seen(() => refusal(protocol.validate({ callbackQuery: query }, p)));
    expect(e.code).toBe("not_authenticated");
    expect([asked, issued]).toEqual([1, 0]);

    const foreign = await githubProtocol(
      connector({ redirect_url: "https://elsewhere.example/v1/webapi/sso/callback" }),
      { value: SECRET },
      deps,
    );
    const fp = pending();
    await page.goto((await foreign.loginUrl(fp)).url);
    // GitHub sends the browser back to the registered callback with the error.
    const answer = new URL(page.url());
    expect(answer.href.startsWith(callback)).toBe(true);
    expect(answer.searchParams.get("error")).toBe("redirect_uri_mismatch");
    const e2 = await refusal(foreign.validate({ callbackQuery: answer.search.slice(1) }, fp));
    expect(e2.code).toBe("not_authenticated");
    expect(e2.message).toMatch(/redirect_uri_mismatch/);
  });

  it("refuses another request's state and PKCE verifier", async () => {
    const a = await round();
    const e = await refusal(protocol.validate({ callbackQuery: a.query }, { ...a.p, requestId: b64(32) }));
    expect(e.code).toBe("not_authenticated");
    const b = await round();
    const e2 = await refusal(
      protocol.validate({ callbackQuery: b.query }, { ...b.p, codeVerifier: b64(32) }),
    );
    expect(e2.code).toBe("not_authenticated");
  });

  it("passes on the user's Cancel (error=access_denied) as a refusal", async () => {
    const p = pending();
    await page.goto((await protocol.loginUrl(p)).url);
    await cancelAtGithub(page);
    const query = new URL(page.url()).search.slice(1);
    const e = await refusal(protocol.validate({ callbackQuery: query }, p));
    expect(e.code).toBe("not_authenticated");
    expect(e.message).toMatch(/access_denied/);
  });
});
