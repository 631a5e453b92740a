// Application access, how app sessions end and who may touch them, through the real gRPC API over
// TLS: LogoutApps (own sessions, one app or all), DeleteAppSession, the cascade of a user's
// deletion, the expiry sweep run by two auth replicas on one backend (one end event), proxy-only
// RPCs refusing nodes and users, and bad inputs that change nothing.
import { createHash } from "node:crypto";
import { type Client, type Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseResource } from "../core/resources/index.ts";
import { agentMetadata, callUnary, userMetadata } from "../server/auth/client.ts";
import { authServiceDefinition } from "../server/auth/proto.ts";
import {
  type AppsEnv,
  auditOf,
  launch,
  PROXY_MD,
  startAppsEnv,
  user,
  webSession,
} from "./auth-apps-fixture.ts";
import { statusOf } from "./auth-fixture.ts";

let a: AppsEnv;

beforeAll(async () => {
  a = await startAppsEnv();
});
afterAll(async () => {
  await a?.close();
});

const ref = (id: string) => createHash("sha256").update(id).digest("hex").slice(0, 8);
const get = (id: string, host = "grafana.proxy.test") =>
  callUnary(a.proxy, "GetAppSession", { session_id: id, public_addr: host }, PROXY_MD());
const endReasons = async (id: string) =>
  (await auditOf(a, "app.session.end"))
    .filter((e) => e.fields["session"] === ref(id))
    .map((e) => e.fields["reason"]);

describe("ending app sessions", () => {
  it("LogoutApps ends the caller's own sessions, of one app or all, with app.session.end", async () => {
    const web = await webSession(a, "fred");
    const g1 = await launch(a, web, "grafana");
    const g2 = await launch(a, web, "billing");
    const other = await launch(a, await webSession(a, "dana"), "grafana");
    const one = await callUnary(a.env.client, "LogoutApps", { app_name: "billing" }, userMetadata(web));
    expect(one.ended).toBe(1);
    expect((await statusOf(get(g2.session_id, "billing.proxy.test"))).code).toBe(status.NOT_FOUND);
    expect((await get(g1.session_id)).username).toBe("fred");
    const all = await callUnary(a.env.client, "LogoutApps", {}, userMetadata(web));
    expect(all.ended).toBe(1);
    expect((await statusOf(get(g1.session_id))).code).toBe(status.NOT_FOUND);
    // dana's session is not fred's to end.
    expect((await get(other.session_id)).username).toBe("dana");
    expect(await endReasons(g1.session_id)).toEqual(["logout"]);
    expect(await endReasons(g2.session_id)).toEqual(["logout"]);
    const ev = (await auditOf(a, "app.session.end")).find((e) => e.fields["session"] === ref(g1.session_id));
    expect(ev?.user_name).toBe("fred");
    expect(JSON.stringify(ev)).not.toContain(g1.session_id);
  });

  it("DeleteAppSession ends one session once (again: no error, no second event)", async () => {
    const g = await launch(a, await webSession(a, "dana"), "grafana");
    await callUnary(a.proxy, "DeleteAppSession", { session_id: g.session_id }, PROXY_MD());
    expect((await statusOf(get(g.session_id))).code).toBe(status.NOT_FOUND);
    await callUnary(a.proxy, "DeleteAppSession", { session_id: g.session_id }, PROXY_MD());
    expect(await endReasons(g.session_id)).toEqual(["logout"]);
  });

  it("deleting the user ends the app sessions of all its web sessions", async () => {
    await a.source.apply(parseResource(user("temp", ["dev-apps"])));
    const g1 = await launch(a, await webSession(a, "temp"), "grafana");
    const g2 = await launch(a, await webSession(a, "temp"), "vault");
    await a.source.remove("User", "temp");
    // The source's delete event revokes the web sessions in the background: wait for the end events.
    for (let i = 0; i < 100 && (await endReasons(g2.session_id)).length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await endReasons(g1.session_id)).toEqual(["web_session_ended"]);
    expect(await endReasons(g2.session_id)).toEqual(["web_session_ended"]);
    expect((await statusOf(get(g1.session_id))).code).toBe(status.NOT_FOUND);
  });

  it("an expired session is swept with one app.session.end by two replicas on one backend", async () => {
    const replica = await a.replica();
    const expires = new Date(a.clock.now().getTime() + 5 * 60_000);
    const g = await launch(a, await webSession(a, "dana", expires), "grafana");
    const live = await launch(a, await webSession(a, "dana"), "grafana");
    const first = a.env.auth.service.apps;
    const second = replica.auth.service.apps;
    if (!first || !second) throw new Error("app access is not wired");
    expect(await first.store.sweep()).toBe(0);
    a.clock.advance(5 * 60_000 + 1000);
    expect((await statusOf(get(g.session_id))).code).toBe(status.NOT_FOUND);
    const swept = await Promise.all([first.store.sweep(), second.store.sweep(), first.store.sweep()]);
    expect(swept.reduce((x, y) => x + y, 0)).toBe(1);
    expect(await endReasons(g.session_id)).toEqual(["expired"]);
    expect((await get(live.session_id)).username).toBe("dana");
  });
});

describe("who may call the proxy RPCs", () => {
  it("refuses a node and a user with PERMISSION_DENIED, before looking at the request", async () => {
    const web = await webSession(a, "dana");
    const c = await callUnary(a.env.client, "CreateAppSession", { app_name: "grafana" }, userMetadata(web));
    const node = agentMetadata("node-1");
    const asUser = userMetadata(web);
    for (const [client, md] of [
      [a.node, node],
      [a.env.client, asUser],
    ] as const) {
      const ex = await statusOf(
        callUnary(client, "ExchangeAppSession", { code: c.code, public_addr: "grafana.proxy.test" }, md),
      );
      expect(ex.code).toBe(status.PERMISSION_DENIED);
    }
    // The code is still there for the proxy.
    const g = await callUnary(
      a.proxy,
      "ExchangeAppSession",
      { code: c.code, public_addr: "grafana.proxy.test" },
      PROXY_MD(),
    );
    for (const [client, md] of [
      [a.node, node],
      [a.env.client, asUser],
    ] as const) {
      const got = await statusOf(
        callUnary(
          client,
          "GetAppSession",
          { session_id: g.session_id, public_addr: "grafana.proxy.test" },
          md,
        ),
      );
      expect(got.code).toBe(status.PERMISSION_DENIED);
      const del = await statusOf(callUnary(client, "DeleteAppSession", { session_id: g.session_id }, md));
      expect(del.code).toBe(status.PERMISSION_DENIED);
    }
    expect((await get(g.session_id)).username).toBe("dana");
  });
});

/** A raw unary call whose request bytes end with an unknown field (number 15, a string). */
function withUnknownField(rpc: string, request: unknown, md: Metadata): Promise<{ code: number }> {
  const def = (
    authServiceDefinition as unknown as Record<
      string,
      { path: string; requestSerialize(v: unknown): Buffer; responseDeserialize(b: Buffer): unknown }
    >
  )[rpc];
  if (!def) throw new Error(`no method ${rpc}`);
  const extra = Buffer.from([0x7a, 3, 0x61, 0x62, 0x63]);
  const ser = (v: unknown) => Buffer.concat([def.requestSerialize(v), extra]);
  return new Promise((resolve) => {
    (a.proxy as unknown as Client).makeUnaryRequest(
      def.path,
      ser,
      def.responseDeserialize,
      request,
      md,
      { deadline: Date.now() + 10_000 },
      (err: ServiceError | null) => resolve({ code: err ? err.code : status.OK }),
    );
  });
}

describe("bad inputs", () => {
  it("empty, oversized or malformed codes and IDs are INVALID_ARGUMENT, unknown ones NOT_FOUND; nothing changes", async () => {
    const web = await webSession(a, "dana");
    const c = await callUnary(a.env.client, "CreateAppSession", { app_name: "grafana" }, userMetadata(web));
    const g = await launch(a, web, "grafana");
    const startsBefore = (await auditOf(a, "app.session.start")).length;
    const endsBefore = (await auditOf(a, "app.session.end")).length;
    const host = "grafana.proxy.test";
    const exchange = (code: string, public_addr = host) =>
      statusOf(callUnary(a.proxy, "ExchangeAppSession", { code, public_addr }, PROXY_MD()));
    expect((await exchange("")).code).toBe(status.INVALID_ARGUMENT);
    expect((await exchange("A".repeat(100_000))).code).toBe(status.INVALID_ARGUMENT);
    expect((await exchange(`${c.code.slice(0, 42)}!`)).code).toBe(status.INVALID_ARGUMENT);
    expect((await exchange("A".repeat(43))).code).toBe(status.NOT_FOUND);
    expect((await exchange(c.code, "")).code).toBe(status.INVALID_ARGUMENT);
    expect((await exchange(c.code, "GRAFANA.proxy.test:443")).code).toBe(status.INVALID_ARGUMENT);
    expect(
      (await withUnknownField("ExchangeAppSession", { code: "", public_addr: host }, PROXY_MD())).code,
    ).toBe(status.INVALID_ARGUMENT);
    expect(
      (await withUnknownField("ExchangeAppSession", { code: "B".repeat(43), public_addr: host }, PROXY_MD()))
        .code,
    ).toBe(status.NOT_FOUND);
    const getS = (id: string) =>
      statusOf(callUnary(a.proxy, "GetAppSession", { session_id: id, public_addr: host }, PROXY_MD()));
    expect((await getS("")).code).toBe(status.INVALID_ARGUMENT);
    expect((await getS("x".repeat(5000))).code).toBe(status.INVALID_ARGUMENT);
    expect((await getS("C".repeat(43))).code).toBe(status.NOT_FOUND);
    // A code is not a session ID.
    expect((await getS(c.code)).code).toBe(status.NOT_FOUND);
    const del = (id: string) =>
      statusOf(callUnary(a.proxy, "DeleteAppSession", { session_id: id }, PROXY_MD()));
    expect((await del("")).code).toBe(status.INVALID_ARGUMENT);
    expect((await del("../../web-sessions/x")).code).toBe(status.INVALID_ARGUMENT);
    const long = await statusOf(
      callUnary(a.env.client, "CreateAppSession", { app_name: "g".repeat(300) }, userMetadata(web)),
    );
    expect(long.code).toBe(status.INVALID_ARGUMENT);
    const logout = await statusOf(
      callUnary(a.env.client, "LogoutApps", { app_name: "g".repeat(300) }, userMetadata(web)),
    );
    expect(logout.code).toBe(status.INVALID_ARGUMENT);
    // Nothing changed: no event, the code and the session still work.
    expect((await auditOf(a, "app.session.start")).length).toBe(startsBefore);
    expect((await auditOf(a, "app.session.end")).length).toBe(endsBefore);
    expect((await get(g.session_id)).username).toBe("dana");
    expect((await exchange(c.code)).code).toBe(status.OK);
  });
});
