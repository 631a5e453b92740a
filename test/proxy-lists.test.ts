// Listing routes for each kind of caller (anonymous, user, admin, user with MFA), the access
// decisions auth makes, and the pagination rules, through real HTTPS and a real auth server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecordingWriter } from "../server/auth/recordings.ts";
import { PASSWORD, type ProxyFixture, startProxyFixture, USERS } from "./proxy-fixture.ts";
import type { HttpResponse } from "./proxy-https-client.ts";
import { enrolDevice } from "./proxy-webauthn-steps.ts";

let fx: ProxyFixture;
const bearer: Record<"user" | "admin" | "mfa", string> = { user: "", admin: "", mfa: "" };

async function loginBearer(username: string): Promise<string> {
  const res = await fx.client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username, password: PASSWORD },
  });
  expect(res.status, res.text).toBe(200);
  return (res.json as { session_id: string }).session_id;
}

async function seedRecording(
  id: string,
  user: string,
  protocol: string,
  startMs: number,
  node = "node-1",
): Promise<void> {
  const w = new RecordingWriter(fx.backend, {
    id,
    user_name: user,
    protocol,
    node,
    login: user,
    start_unix_ms: startMs,
    end_unix_ms: startMs + 1000,
    format: "asciicast-v2",
  });
  await w.begin();
  await w.write(Buffer.from('{"version": 2}\n'));
  await w.finish();
}

// the seeded recordings' first start time (second-aligned, so RFC 3339 bounds are exact)
const t0 = Math.floor(Date.now() / 1000) * 1000 - 3600_000;

beforeAll(async () => {
  fx = await startProxyFixture();
  for (let i = 0; i < 7; i++) await seedRecording(`alice-rec-${i}`, USERS.user, "ssh", t0 + i * 1000);
  await seedRecording("admin-rec-0", USERS.admin, "ssh", t0);
  await seedRecording("admin-rec-1", USERS.admin, "kube", t0 + 500, "node-2");
  await fx.auth.service.nodes.heartbeat("agent-1", {
    hostname: "node-1",
    addresses: ["127.0.0.1:3022"],
    labels: { env: "test" },
    version: "0.1.0",
  });
  bearer.user = await loginBearer(USERS.user);
  bearer.admin = await loginBearer(USERS.admin);
  // carol enrols a device, then logs in through the WebAuthn step
  const first = await loginBearer(USERS.mfa);
  const { mfaSession } = await enrolDevice(fx, first);
  bearer.mfa = mfaSession;
});
afterAll(async () => {
  await fx?.close();
});

const get = (path: string, who?: keyof typeof bearer): Promise<HttpResponse> =>
  fx.client.send({ path, headers: who ? { authorization: `Bearer ${bearer[who]}` } : {} });
const codeOf = (res: HttpResponse) => (res.json as { error?: { code: string } }).error?.code;

describe("every authenticated route refuses anonymous callers", () => {
  for (const path of [
    "/v1/webapi/session",
    "/v1/webapi/sessions",
    "/v1/webapi/nodes",
    "/v1/webapi/users",
    "/v1/webapi/roles",
    "/v1/webapi/audit",
    "/v1/webapi/mfa/devices",
  ]) {
    it(`GET ${path} -> 401`, async () => {
      const res = await get(path);
      expect(res.status).toBe(401);
      expect(codeOf(res)).toBe("not_authenticated");
    });
  }
});

describe("admin-only routes (the decision comes from auth)", () => {
  for (const path of ["/v1/webapi/users", "/v1/webapi/roles", "/v1/webapi/audit"]) {
    it(`GET ${path}: user and MFA user 403, admin 200`, async () => {
      for (const who of ["user", "mfa"] as const) {
        const res = await get(path, who);
        expect(res.status, `${who}: ${res.text}`).toBe(403);
        expect(codeOf(res)).toBe("access_denied");
      }
      const ok = await get(path, "admin");
      expect(ok.status, ok.text).toBe(200);
    });
  }

  it("users list names, roles, traits and MFA state, without secrets", async () => {
    const res = await get("/v1/webapi/users", "admin");
    const items = (
      res.json as { items: Array<{ name: string; roles: string[]; webauthn_enrolled: boolean }> }
    ).items;
    expect(items.map((u) => u.name).sort()).toEqual([USERS.user, USERS.mfa, USERS.admin].sort());
    expect(items.find((u) => u.name === USERS.mfa)?.webauthn_enrolled).toBe(true);
    expect(items.find((u) => u.name === USERS.user)?.webauthn_enrolled).toBe(false);
    expect(res.text).not.toMatch(/argon2|password/i);
  });

  it("roles list the preset roles with their specs", async () => {
    const res = await get("/v1/webapi/roles", "admin");
    const items = (res.json as { items: Array<{ name: string; spec: { allow?: object } }> }).items;
    expect(items.map((r) => r.name).sort()).toEqual(["access", "admin"]);
    expect(items[0]?.spec.allow).toBeDefined();
  });

  it("audit answers {items, total_count} newest first, filters by type and user", async () => {
    const res = await get(`/v1/webapi/audit?type=user.login&user=${USERS.user}&limit=500`, "admin");
    expect(res.status, res.text).toBe(200);
    const body = res.json as {
      items: Array<{ event_type: string; user_name: string; time: string }>;
      total_count: number;
    };
    expect(body.total_count).toBeGreaterThanOrEqual(1);
    expect(body.items.length).toBe(body.total_count);
    for (const e of body.items) {
      expect(e.event_type).toBe("user.login");
      expect(e.user_name).toBe(USERS.user);
    }
    const times = body.items.map((e) => Date.parse(e.time));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it("audit time range: a window in the future is empty; start after end is 400", async () => {
    const future = new Date(Date.now() + 3600_000).toISOString();
    const res = await get(`/v1/webapi/audit?start_time=${encodeURIComponent(future)}`, "admin");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ items: [], total_count: 0 });
    const past = new Date(Date.now() - 3600_000).toISOString();
    const bad = await get(
      `/v1/webapi/audit?start_time=${encodeURIComponent(future)}&end_time=${encodeURIComponent(past)}`,
      "admin",
    );
    expect(bad.status).toBe(400);
    const notTime = await get("/v1/webapi/audit?start_time=yesterday", "admin");
    expect(notTime.status).toBe(400);
  });
});

describe("nodes", () => {
  it("any user sees the nodes their roles allow, with labels and status", async () => {
    for (const who of ["user", "admin", "mfa"] as const) {
      const res = await get("/v1/webapi/nodes", who);
      expect(res.status, res.text).toBe(200);
      const items = (res.json as { items: Array<{ hostname: string; labels: object; status: string }> })
        .items;
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ hostname: "node-1", labels: { env: "test" }, status: "online" });
    }
  });
});

describe("recordings (GET /v1/webapi/sessions)", () => {
  type Page = { items: Array<{ id: string; user: string; protocol: string }>; total_count: number };

  it("a user sees only their own recordings, whatever the filter says", async () => {
    const own = await get("/v1/webapi/sessions", "user");
    expect(own.status, own.text).toBe(200);
    const page = own.json as Page;
    expect(page.total_count).toBe(7);
    expect(page.items.every((r) => r.user === USERS.user)).toBe(true);
    const other = await get(`/v1/webapi/sessions?user=${USERS.admin}`, "user");
    expect((other.json as Page).total_count).toBe(0);
    const mfa = await get("/v1/webapi/sessions", "mfa");
    expect((mfa.json as Page).total_count).toBe(0);
  });

  it("an admin sees everyone's and can filter by user and protocol", async () => {
    expect(((await get("/v1/webapi/sessions", "admin")).json as Page).total_count).toBe(9);
    const byUser = (await get(`/v1/webapi/sessions?user=${USERS.admin}`, "admin")).json as Page;
    expect(byUser.total_count).toBe(2);
    const byProto = (await get("/v1/webapi/sessions?protocol=kube", "admin")).json as Page;
    expect(byProto.items.map((r) => r.id)).toEqual(["admin-rec-1"]);
  });

  it("filters by node and by a [start_time, end_time) window on the session's start; a user's own only", async () => {
    const ids = async (q: string, who: "user" | "admin" = "admin"): Promise<string[]> => {
      const res = await get(`/v1/webapi/sessions?${q}`, who);
      expect(res.status, `${q}: ${res.text}`).toBe(200);
      return (res.json as Page).items.map((r) => r.id);
    };
    const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    expect(await ids("node=node-2")).toEqual(["admin-rec-1"]);
    expect(await ids("node=node-2", "user")).toEqual([]);
    expect(await ids("node=nowhere")).toEqual([]);
    expect(await ids(`start_time=${iso(t0 + 1000)}&end_time=${iso(t0 + 3000)}`)).toEqual([
      "alice-rec-2",
      "alice-rec-1",
    ]);
    // end exclusive: [t0, t0 + 500) holds the two started at t0, not the one at t0 + 500
    expect((await ids(`start_time=${iso(t0)}&end_time=${iso(t0 + 500)}`)).sort()).toEqual([
      "admin-rec-0",
      "alice-rec-0",
    ]);
    expect(await ids(`start_time=${iso(t0)}&end_time=${iso(t0 + 1000)}&user=${USERS.admin}`)).toEqual([
      "admin-rec-1",
      "admin-rec-0",
    ]);
    expect(await ids(`start_time=${iso(t0 + 6000)}`, "user")).toEqual(["alice-rec-6"]);
    expect(await ids(`end_time=${iso(t0 + 1000)}`, "user")).toEqual(["alice-rec-0"]);
    const backwards = await get(`/v1/webapi/sessions?start_time=${iso(t0 + 1)}&end_time=${iso(t0)}`, "admin");
    expect(backwards.status).toBe(400);
    expect(codeOf(backwards)).toBe("bad_parameter");
    expect((await get("/v1/webapi/sessions?start_time=yesterday", "admin")).status).toBe(400);
  });

  it("pagination: default 50, limit/offset edges", async () => {
    const all = (await get("/v1/webapi/sessions", "user")).json as Page;
    expect(all.items).toHaveLength(7);
    const p1 = (await get("/v1/webapi/sessions?limit=3&offset=0", "user")).json as Page;
    const p3 = (await get("/v1/webapi/sessions?limit=3&offset=6", "user")).json as Page;
    expect(p1.items.map((r) => r.id)).toEqual(all.items.slice(0, 3).map((r) => r.id));
    expect(p3.items.map((r) => r.id)).toEqual(all.items.slice(6).map((r) => r.id));
    expect(p3.total_count).toBe(7);
    const past = (await get("/v1/webapi/sessions?offset=7", "user")).json as Page;
    expect(past).toEqual({ items: [], total_count: 7 });
    expect((await get("/v1/webapi/sessions?offset=100000", "user")).status).toBe(200);
    expect((await get("/v1/webapi/sessions?limit=500", "user")).status).toBe(200);
    expect((await get("/v1/webapi/sessions?limit=1", "user")).json).toMatchObject({ total_count: 7 });
  });

  it("out-of-range and wrongly typed paging parameters are 400 (an offset past int32 too: no wrap-around)", async () => {
    for (const q of [
      "limit=501",
      "limit=0",
      "limit=-1",
      "offset=-1",
      "limit=abc",
      "offset=1.5",
      "offset=2147483648",
      "offset=4294967296",
    ]) {
      for (const path of [`/v1/webapi/sessions?${q}`, `/v1/webapi/audit?${q}`]) {
        const res = await get(path, "admin");
        expect(res.status, `${path}: ${res.text}`).toBe(400);
        expect(codeOf(res)).toBe("bad_parameter");
      }
    }
    const last = await get("/v1/webapi/sessions?offset=2147483647", "admin");
    expect(last.json).toEqual({ items: [], total_count: 9 });
  });

  it("unknown query parameters are ignored; an empty filter is no filter", async () => {
    const all = (await get("/v1/webapi/sessions", "admin")).json as Page;
    for (const q of [
      "colour=red",
      "user=",
      "protocol=",
      "node=",
      "start_time=&end_time=",
      "user=&protocol=&node=&colour=",
    ]) {
      const res = await get(`/v1/webapi/sessions?${q}`, "admin");
      expect(res.status, `${q}: ${res.text}`).toBe(200);
      expect(res.json, q).toEqual(all);
    }
    const audit = (await get("/v1/webapi/audit?limit=500", "admin")).json as { total_count: number };
    for (const q of [
      "colour=red",
      "type=",
      "user=",
      "start_time=&end_time=",
      "type=&user=&start_time=&x=1",
    ]) {
      const res = await get(`/v1/webapi/audit?limit=500&${q}`, "admin");
      expect(res.status, `${q}: ${res.text}`).toBe(200);
      expect((res.json as { total_count: number }).total_count, q).toBeGreaterThanOrEqual(audit.total_count);
    }
  });
});

describe("audit time bounds", () => {
  const at = (iso: string) =>
    fx.backend.appendAudit({ event_type: "test.bound", user_name: "t", time: new Date(iso) });
  const window = async (query: string): Promise<string[]> => {
    const res = await get(`/v1/webapi/audit?type=test.bound&limit=500&${query}`, "admin");
    expect(res.status, `${query}: ${res.text}`).toBe(200);
    return (res.json as { items: Array<{ time: string }> }).items.map((e) => e.time);
  };
  const q = (name: string, iso: string) => `${name}=${encodeURIComponent(iso)}`;

  beforeAll(async () => {
    await at("1969-12-31T23:59:59.000Z");
    await at("1970-01-01T00:00:00.000Z");
    await at("1970-01-01T00:00:01.000Z");
  });

  it("times at or before the epoch are real bounds, not none", async () => {
    expect(await window(q("end_time", "1970-01-01T00:00:00Z"))).toEqual(["1969-12-31T23:59:59.000Z"]);
    expect(await window(q("start_time", "1970-01-01T00:00:00Z"))).toEqual([
      "1970-01-01T00:00:01.000Z",
      "1970-01-01T00:00:00.000Z",
    ]);
    expect(await window(q("end_time", "1969-12-31T23:59:59Z"))).toEqual([]);
    expect(await window(q("start_time", "1969-01-01T00:00:00Z"))).toHaveLength(3);
  });

  it("start_time is inclusive, end_time exclusive: adjacent windows share no event", async () => {
    const a = await window(
      `${q("start_time", "1969-12-31T23:59:59Z")}&${q("end_time", "1970-01-01T00:00:00Z")}`,
    );
    const b = await window(
      `${q("start_time", "1970-01-01T00:00:00Z")}&${q("end_time", "1970-01-01T00:00:01Z")}`,
    );
    expect(a).toEqual(["1969-12-31T23:59:59.000Z"]);
    expect(b).toEqual(["1970-01-01T00:00:00.000Z"]);
    expect(
      await window(`${q("start_time", "1970-01-01T00:00:00Z")}&${q("end_time", "1970-01-01T00:00:00Z")}`),
    ).toEqual([]);
  });
});

describe("route x caller matrix", () => {
  const callers = [undefined, "user", "admin", "mfa"] as const;
  const expectedName = { user: USERS.user, admin: USERS.admin, mfa: USERS.mfa } as const;

  it("public routes answer 200 to every caller", async () => {
    for (const path of [
      "/v1/webapi/ping",
      "/v1/webapi/connectors/public",
      "/v1/webapi/spiffe/bundle.json",
      "/.well-known/openid-configuration",
      "/workload-identity/jwt-jwks.json",
      "/workload-identity/app-jwt-jwks.json",
      "/healthz",
      "/readyz",
      "/v1/webapi/openapi.json",
    ]) {
      for (const who of callers) {
        const res = await get(path, who);
        expect(res.status, `${who ?? "anonymous"} ${path}`).toBe(200);
      }
    }
  });

  it("GET /session names the caller; GET /mfa/devices lists only the caller's devices", async () => {
    for (const who of ["user", "admin", "mfa"] as const) {
      const session = await get("/v1/webapi/session", who);
      expect(session.status).toBe(200);
      expect((session.json as { username: string }).username).toBe(expectedName[who]);
      const devices = await get("/v1/webapi/mfa/devices", who);
      expect(devices.status).toBe(200);
      expect((devices.json as { items: unknown[] }).items).toHaveLength(who === "mfa" ? 1 : 0);
    }
  });

  it("a user cannot delete another user's device", async () => {
    const mine = await get("/v1/webapi/mfa/devices", "mfa");
    const id = (mine.json as { items: Array<{ id: string }> }).items[0]?.id ?? "";
    const res = await fx.client.send({
      method: "DELETE",
      path: `/v1/webapi/mfa/devices/${id}`,
      headers: { authorization: `Bearer ${bearer.user}` },
    });
    expect(res.status).toBe(404);
    expect(((await get("/v1/webapi/mfa/devices", "mfa")).json as { items: unknown[] }).items).toHaveLength(1);
  });
});
