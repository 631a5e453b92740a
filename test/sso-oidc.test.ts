// OIDC protocol rules, each tried against a real OpenID provider (oidc-provider in its own
// process, test/harness/idp/) with Chromium on the provider's own login page: auth's oidcProtocol
// must accept the genuine answer and refuse every broken one (state, PKCE verifier, nonce,
// issuer, audience, signature, unknown key, expiry and issue time beyond the 60 s skew, the
// provider's own error, a replayed code), and follow a real key rotation.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemClock } from "../core/clock.ts";
import { SvcError } from "../core/errors.ts";
import type { Connector } from "../core/resources/index.ts";
import { oidcProtocol } from "../server/auth/sso/oidc.ts";
import type { PendingProtocolState, ProtocolDeps, SsoProtocol } from "../server/auth/sso/protocol.ts";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import {
  cancelAtOidcProvider,
  loginAtOidcProvider,
  type MisbehaveMode,
  type RunningOidcProvider,
  startOidcProvider,
} from "./harness/idp/oidc.ts";
import { loopbackTls } from "./harness/sts.ts";

let idp: RunningOidcProvider;
let chrome: RunningChromium;
let page: Page;
let rp: Server;
let callback = "";
let protocol: SsoProtocol;

const b64 = (n: number) => randomBytes(n).toString("base64url");

function connector(issuer: string): Connector {
  return {
    apiVersion: "svc.dev/v1",
    kind: "Connector",
    metadata: { name: "corp-oidc" },
    spec: {
      type: "oidc",
      display_name: "Corp OIDC",
      settings: {
        issuer_url: issuer,
        client_id: "svc",
        redirect_url: callback,
        scopes: ["email", "profile", "groups", "logins"],
      },
    },
  } as Connector;
}

beforeAll(async () => {
  // The relying party's callback: only a place for the browser to land with ?code=&state=.
  const tls = await loopbackTls();
  rp = createServer({ key: tls.key, cert: tls.cert }, (_req, res) => res.end("callback"));
  await new Promise<void>((r) => rp.listen(0, "127.0.0.1", () => r()));
  callback = `https://127.0.0.1:${(rp.address() as AddressInfo).port}/v1/webapi/sso/callback`;
  [idp, chrome] = await Promise.all([
    startOidcProvider({
      clients: [{ client_id: "svc", client_secret: "svc-client-secret", redirect_uris: [callback] }],
      users: [
        {
          username: "alice",
          password: "alice-pw",
          claims: {
            email: "alice@example.com",
            email_verified: true,
            preferred_username: "alice",
            groups: ["dev", "ops"],
            logins: ["alice", "deploy"],
          },
        },
      ],
    }),
    launchChromium({ ignoreHTTPSErrors: true }),
  ]);
  page = await chrome.context.newPage();
  const deps: ProtocolDeps = { clock: systemClock, caPem: idp.caPem, claimOnce: async () => true };
  protocol = await oidcProtocol(connector(idp.issuer), { value: "svc-client-secret" }, deps);
});

afterAll(async () => {
  await chrome?.close();
  await idp?.stop();
  rp?.close();
});

function pending(): PendingProtocolState {
  return { requestId: b64(32), nonce: b64(32), codeVerifier: b64(32), extra: {} };
}

/** One trip through the provider: the pending request and the callback's query string. */
async function round(): Promise<{ p: PendingProtocolState; query: string }> {
  const p = pending();
  const { url } = await protocol.loginUrl(p);
  await page.goto(url);
  // Signed in once per browser session: later rounds come straight back.
  if (!page.url().startsWith(callback)) await loginAtOidcProvider(page, "alice", "alice-pw");
  const got = new URL(page.url());
  expect(`${got.origin}${got.pathname}`).toBe(callback);
  return { p, query: got.search.slice(1) };
}

async function refusal(promise: Promise<unknown>): Promise<SvcError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the answer was accepted").toBeInstanceOf(SvcError);
  const e = err as SvcError;
  // Nothing of the token or the user is echoed into the error.
  expect(e.message).not.toMatch(/eyJ|alice|svc-client-secret/);
  return e;
}

async function withMode<T>(
  mode: MisbehaveMode,
  seconds: number | undefined,
  f: () => Promise<T>,
): Promise<T> {
  await idp.misbehave(mode, seconds);
  try {
    return await f();
  } finally {
    await idp.misbehave("none");
  }
}

describe("oidcProtocol against oidc-provider", () => {
  it("validates a genuine login into alice's identity", async () => {
    const { url } = await protocol.loginUrl(pending());
    const u = new URL(url);
    expect(u.searchParams.get("code_challenge_method")).toBe("S256");
    expect(u.searchParams.get("response_type")).toBe("code");
    const { p, query } = await round();
    const id = await protocol.validate({ callbackQuery: query }, p);
    expect(id.username).toBe("alice@example.com");
    expect(id.subject).toBe("alice");
    expect(id.claims).toMatchObject({ groups: ["dev", "ops"], logins: ["alice", "deploy"] });
    for (const c of ["iss", "aud", "nonce", "exp", "iat"]) expect(id.claims[c]).toBeUndefined();
  });

  it("refuses the answer for another request's state", async () => {
    const { p, query } = await round();
    const e = await refusal(protocol.validate({ callbackQuery: query }, { ...p, requestId: b64(32) }));
    expect(e.code).toBe("not_authenticated");
    expect(e.message).toMatch(/state|invalid response/);
  });

  it("refuses a PKCE verifier that is not the request's (the provider refuses the code)", async () => {
    const { p, query } = await round();
    const e = await refusal(protocol.validate({ callbackQuery: query }, { ...p, codeVerifier: b64(32) }));
    expect(e.code).toBe("not_authenticated");
    expect(e.message).toMatch(/invalid_grant/);
  });

  it("refuses a nonce that is not the request's", async () => {
    const { p, query } = await round();
    const e = await refusal(protocol.validate({ callbackQuery: query }, { ...p, nonce: b64(32) }));
    expect(e.code).toBe("not_authenticated");
    expect(e.message).toMatch(/nonce|claim value/);
  });

  // The reason is checked loosely: auth reports the library's summary ("unexpected JWT claim
  // value encountered"), which does not name the claim; each case changes one thing only.
  const broken: [MisbehaveMode, number | undefined, RegExp][] = [
    ["wrong-nonce", undefined, /nonce|claim value/],
    ["no-nonce", undefined, /nonce|invalid response/],
    ["wrong-issuer", undefined, /"iss"|claim value/],
    ["wrong-audience", undefined, /"aud"|claim value/],
    ["unsigned", undefined, /alg|invalid response/],
    ["expired", 61, /exp|timestamp/],
    ["expired", 3600, /exp|timestamp/],
  ];
  const spoiled = async (mode: MisbehaveMode, seconds: number | undefined, why: RegExp): Promise<void> => {
    const e = await withMode(mode, seconds, async () => {
      const { p, query } = await round();
      return await refusal(protocol.validate({ callbackQuery: query }, p));
    });
    expect(e.code).toBe("not_authenticated");
    expect(e.message).toMatch(why);
  };
  it.each(broken)("refuses an ID token the provider spoiled: %s %s", spoiled);

  // The signature against the provider's JWKS (enableNonRepudiationChecks) and an iat in the
  // future (beyond the 60 s skew) are refused too.
  const unverified: [MisbehaveMode, number | undefined, RegExp][] = [
    ["bad-signature", undefined, /signature|invalid response/],
    ["unknown-key", undefined, /key|invalid response/],
    ["future-iat", 61, /iat|issued|future|timestamp/],
    ["future-iat", 3600, /iat|issued|future|timestamp/],
  ];
  it.each(unverified)("refuses an ID token the provider spoiled: %s %s", spoiled);

  it("accepts clocks apart by less than the 60 s skew", async () => {
    for (const mode of ["expired", "future-iat"] as const) {
      const id = await withMode(mode, 30, async () => {
        const { p, query } = await round();
        return await protocol.validate({ callbackQuery: query }, p);
      });
      expect(id.username).toBe("alice@example.com");
    }
  });

  it("refuses a replayed code (the provider answers invalid_grant)", async () => {
    const { p, query } = await round();
    await protocol.validate({ callbackQuery: query }, p);
    const e = await refusal(protocol.validate({ callbackQuery: query }, p));
    expect(e.message).toMatch(/invalid_grant/);
  });

  it("passes on the provider's error=access_denied as a refusal", async () => {
    await chrome.context.clearCookies();
    const p = pending();
    await page.goto((await protocol.loginUrl(p)).url);
    await cancelAtOidcProvider(page);
    const query = new URL(page.url()).search.slice(1);
    expect(new URLSearchParams(query).get("error")).toBe("access_denied");
    const e = await refusal(protocol.validate({ callbackQuery: query }, p));
    expect(e.code).toBe("not_authenticated");
    expect(e.message).toMatch(/access_denied/);
  });

  it("follows a key rotation: the unknown kid makes it fetch the JWKS again and accept", async () => {
    const first = await round();
    await protocol.validate({ callbackQuery: first.query }, first.p);
    const before = await idp.stats();
    const { kid } = await idp.rotateKeys();
    expect(kid).not.toBe(before.kid);
    // openid-client fetches a JWKS again for an unknown kid only when its copy is at least 60 s
    // old (a bound on fetches a forger could cause); auth's process is moved past that.
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, now: Date.now() + 61_000 });
    try {
      const { p, query } = await round();
      const id = await protocol.validate({ callbackQuery: query }, p);
      expect(id.username).toBe("alice@example.com");
    } finally {
      vi.useRealTimers();
    }
    expect((await idp.stats()).jwksFetches).toBeGreaterThan(before.jwksFetches);
  });
});
