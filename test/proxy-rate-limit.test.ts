// Login and MFA routes are limited per client address, MFA steps also per pending login (429 +
// Retry-After, the one error body); login names are not limited here (auth throttles them and
// exempts addresses the user is known from); other routes are not limited.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, type ProxyFixture, startProxyFixture, USERS } from "./proxy-fixture.ts";

let fx: ProxyFixture;
beforeAll(async () => {
  fx = await startProxyFixture({ rateLimit: { perAddress: 8, perUsername: 3, windowMs: 60_000 } });
});
afterAll(async () => {
  await fx?.close();
});

const login = (username: string, password = "wrong password, long enough") =>
  fx.client.send({ method: "POST", path: "/v1/webapi/login", body: { username, password } });

describe("login rate limits", () => {
  it("does not limit per login name: someone else's attempts cannot spend a user's budget", async () => {
    for (const name of ["carol", "Carol", "CAROL", "carol"]) expect((await login(name)).status).toBe(401);
    // 5th attempt from this address: still within the address budget.
    expect((await login(USERS.user, PASSWORD)).status).toBe(200);
  });

  it("per address: after 8 attempts in the window every username is refused, MFA routes included", async () => {
    // 5 attempts so far from this address (previous test); spend the rest on fresh names
    const names = ["u1", "u2", "u3"];
    for (const n of names) expect((await login(n)).status).toBe(401);
    const limited = await login(USERS.admin, PASSWORD);
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({
      error: { code: "limit_exceeded", message: "too many login attempts, try again later" },
    });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    const mfa = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/login/begin",
      body: { mfa_token: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
    });
    expect(mfa.status).toBe(429);
  });

  it("does not limit other routes", async () => {
    for (let i = 0; i < 20; i++) expect((await fx.client.send({ path: "/v1/webapi/ping" })).status).toBe(200);
  });
});

describe("behind a trusted load balancer", () => {
  let lb: ProxyFixture;
  beforeAll(async () => {
    lb = await startProxyFixture({
      rateLimit: { perAddress: 2, perUsername: 100, windowMs: 60_000 },
      trustedProxies: ["127.0.0.1"],
    });
  });
  afterAll(async () => {
    await lb?.close();
  });

  it("counts per forwarded client address", async () => {
    const from = (ip: string, username: string) =>
      lb.client.send({
        method: "POST",
        path: "/v1/webapi/login",
        headers: { "x-forwarded-for": ip },
        body: { username, password: "wrong password, long enough" },
      });
    expect((await from("10.0.0.1", "a1")).status).toBe(401);
    expect((await from("10.0.0.1", "a2")).status).toBe(401);
    expect((await from("10.0.0.1", "a3")).status).toBe(429);
    expect((await from("10.0.0.2", "a4")).status).toBe(401);
  });
});
