// Login throttling cannot be turned against a user (docs/auth.md, "Login throttling"): through a
// real proxy (behind a trusted load balancer, so X-Forwarded-For names the client) and a real auth
// server on SQLite. An attacker failing 50 times for the admin is slowed with 429 + Retry-After,
// the admin keeps the live session and still logs in from an address it used before, the audit
// shows the throttle, and X-Forwarded-For from a peer that is not a trusted proxy is ignored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteBackend } from "../core/backend/sqlite.ts";
import { ManualClock, systemClock } from "../core/clock.ts";
import { LoginThrottle, type ThrottleEvent } from "../server/auth/login-throttle.ts";
import { PASSWORD, type ProxyFixture, startProxyFixture, startProxySide, USERS } from "./proxy-fixture.ts";
import type { HttpResponse, HttpsClient } from "./proxy-https-client.ts";
import { enrolDevice, mfaLogin } from "./proxy-webauthn-steps.ts";

const ATTACKER = "10.6.6.6";
const KNOWN = "10.0.0.2";
const FRESH = "10.0.0.3";

let fx: ProxyFixture;
let untrusted: Awaited<ReturnType<typeof startProxySide>>;

beforeAll(async () => {
  fx = await startProxyFixture(
    { rateLimit: { perAddress: 1000, perUsername: 1000, windowMs: 60_000 }, trustedProxies: ["127.0.0.1"] },
    // A long first wait keeps the counts exact however slow the machine is.
    { lockout: { maxFailures: 5, lockoutMs: 15 * 60_000, baseDelayMs: 30_000, perAddressFailures: 8 } },
  );
  // A second proxy on the same auth that trusts nobody: X-Forwarded-For is only text to it.
  untrusted = await startProxySide({
    authAddress: fx.auth.address,
    hostCaPem: fx.hostCaPem,
    proxyClient: await proxyClientOf(fx),
    proxyServer: fx.proxyTls,
    resources: fx.source,
    overrides: { rateLimit: { perAddress: 1000, perUsername: 1000, windowMs: 60_000 } },
  });
}, 120_000);

afterAll(async () => {
  await untrusted?.close();
  await fx?.close();
});

/** The fixture's proxy gRPC client certificate, read back from its config (the same CA). */
async function proxyClientOf(f: ProxyFixture): Promise<{ certPem: string; keyPem: string }> {
  const { generateEcdsaP256, issueTlsClientCert, privateKeyToPem, serviceIdentityUri } = await import(
    "../core/certs/x509.ts"
  );
  const key = generateEcdsaP256();
  const certPem = await issueTlsClientCert(f.cas.hostCa, {
    publicKey: key.publicKey,
    commonName: "proxy-2",
    uri: serviceIdentityUri("proxy", "proxy-2"),
    clock: systemClock,
  });
  return { certPem, keyPem: privateKeyToPem(key.privateKey) };
}

const login = (
  client: HttpsClient,
  from: string,
  username: string,
  password: string,
): Promise<HttpResponse> =>
  client.send({
    method: "POST",
    path: "/v1/webapi/login",
    headers: { "x-forwarded-for": from },
    body: { username, password },
  });

describe("login throttling through the proxy", () => {
  it("50 failures from one address slow the attacker but neither sign the admin out nor stop a known address", async () => {
    const first = await login(fx.client, KNOWN, USERS.admin, PASSWORD);
    expect(first.status, first.text).toBe(200);
    const session = (first.json as { session_id: string }).session_id;

    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await login(fx.client, ATTACKER, USERS.admin, `wrong guess number ${i}`);
      statuses.push(r.status);
      if (r.status === 429) {
        expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
        expect((r.json as { error: { code: string } }).error.code).toBe("limit_exceeded");
      }
    }
    // Five passwords checked, then every attempt waits (30 s first, doubling).
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(45);

    // The live session is untouched, and the admin logs in from the address it used before.
    const view = await fx.client.send({
      path: "/v1/webapi/session",
      headers: { authorization: `Bearer ${session}` },
    });
    expect(view.status).toBe(200);
    expect((await login(fx.client, KNOWN, USERS.admin, PASSWORD)).status).toBe(200);
    // From an address never used for the name, even the right password waits, told how long.
    const fresh = await login(fx.client, FRESH, USERS.admin, PASSWORD);
    expect(fresh.status).toBe(429);
    expect(Number(fresh.headers["retry-after"])).toBeGreaterThan(20);

    const throttled = await fx.backend.searchAudit({
      type: "login.throttled",
      user: USERS.admin,
      limit: 10,
      offset: 0,
    });
    expect(throttled.totalCount).toBe(1);
    expect(throttled.items[0]?.fields).toMatchObject({
      scope: "user",
      client_address: ATTACKER,
      failures: 5,
    });
    expect((await fx.backend.searchAudit({ type: "user.locked", limit: 10, offset: 0 })).totalCount).toBe(0);
    const refused = await fx.backend.searchAudit({
      type: "user.login",
      user: USERS.admin,
      limit: 500,
      offset: 0,
    });
    expect(refused.items.filter((e) => e.fields["reason"] === "throttled")).toHaveLength(46);
  });

  it("one address guessing many names is stopped for every name, the right password included", async () => {
    const guesser = "10.9.9.9";
    for (let i = 0; i < 8; i++) {
      expect((await login(fx.client, guesser, `name-${i}`, "not the password at all")).status).toBe(401);
    }
    const r = await login(fx.client, guesser, USERS.user, PASSWORD);
    expect(r.status).toBe(429);
    expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
    const audit = await fx.backend.searchAudit({ type: "login.throttled", limit: 50, offset: 0 });
    expect(
      audit.items.filter((e) => e.fields["scope"] === "address" && e.fields["client_address"] === guesser),
    ).toHaveLength(1);
    // Another address is not affected.
    expect((await login(fx.client, "10.0.0.7", USERS.user, PASSWORD)).status).toBe(200);
  });

  it("a WebAuthn user's second step is not stopped by someone else's failures for the name", async () => {
    const first = await login(fx.client, KNOWN, USERS.mfa, PASSWORD);
    expect(first.status, first.text).toBe(200);
    const { authenticator, mfaSession } = await enrolDevice(
      fx,
      (first.json as { session_id: string }).session_id,
    );
    // (A second attacker address: the first one's own counter is spent by now.)
    for (let i = 0; i < 6; i++) await login(fx.client, "10.6.6.7", USERS.mfa, `wrong guess ${i}`);
    expect((await login(fx.client, FRESH, USERS.mfa, PASSWORD)).status).toBe(429);
    // From the address it used before (the enrolment's logins came from the proxy's own peer).
    const again = await mfaLogin(fx, authenticator);
    expect(again.status, again.text).toBe(200);
    const view = await fx.client.send({
      path: "/v1/webapi/session",
      headers: { authorization: `Bearer ${mfaSession}` },
    });
    expect(view.status).toBe(200);
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    // Claiming the admin's known address through a proxy that trusts nobody: auth sees the
    // proxy's peer (127.0.0.1), never known for the admin, so the name's wait applies.
    const r = await login(untrusted.client, KNOWN, USERS.admin, PASSWORD);
    expect(r.status).toBe(429);
    const last = await fx.backend.searchAudit({
      type: "user.login",
      user: USERS.admin,
      limit: 500,
      offset: 0,
    });
    const addresses = last.items.map((e) => e.fields["client_address"]);
    expect(addresses).toContain("127.0.0.1");
  });
});

describe("LoginThrottle on its own clock", () => {
  it("doubles the wait up to the cap, audits the start and the releases", async () => {
    const clock = new ManualClock();
    const backend = await openSqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 });
    const events: ThrottleEvent[] = [];
    const t = new LoginThrottle(
      backend,
      clock,
      { maxFailures: 2, lockoutMs: 5000, baseDelayMs: 1000, windowMs: 60_000 },
      async (e) => {
        events.push(e);
      },
    );
    const ctx = { user_name: "u", client_address: "a" };
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await t.reserve("user", "u", ctx);
      if (!r.ok) throw new Error("refused");
      await t.fail("user", "u", r.token, ctx);
      const until = await t.waitingUntil("user", "u");
      waits.push(until ? until.getTime() - clock.now().getTime() : 0);
      const refused = await t.reserve("user", "u", ctx);
      if (until) expect(refused).toMatchObject({ ok: false, retryAfterMs: waits[i] });
      else if (refused.ok) await t.release("user", "u", refused.token, ctx);
      clock.advance(waits[i] ?? 0);
    }
    expect(waits).toEqual([0, 1000, 2000, 4000, 5000, 5000]);
    expect(events.map((e) => e.event_type)).toEqual(["login.throttled"]);
    // A right password clears the name's failures and audits the release.
    const right = await t.reserve("user", "u", ctx);
    if (!right.ok) throw new Error("refused");
    await t.succeed("user", "u", right.token, ctx);
    expect(events.at(-1)).toMatchObject({
      event_type: "login.released",
      fields: { reason: "successful login" },
    });
    // An address keeps its failures after a success; they go when the window passes (audited then).
    for (let i = 0; i < 20; i++) {
      const r = await t.reserve("address", "a", ctx);
      if (!r.ok) throw new Error("refused");
      await t.fail("address", "a", r.token, ctx);
    }
    expect((await t.reserve("address", "a", ctx)).ok).toBe(false);
    clock.advance(61_000);
    expect((await t.reserve("address", "a", ctx)).ok).toBe(true);
    expect(events.at(-1)).toMatchObject({
      event_type: "login.released",
      fields: { scope: "address", reason: "window passed" },
    });
    // Slots of a caller that died mid-check (a killed replica) stop counting after 30 s.
    for (let i = 0; i < 20; i++) expect((await t.reserve("address", "b", ctx)).ok).toBe(true);
    expect(await t.reserve("address", "b", ctx)).toMatchObject({ ok: false, busy: true });
    clock.advance(31_000);
    expect((await t.reserve("address", "b", ctx)).ok).toBe(true);
    await backend.close();
  });
});
