// Lists, audit and agent RPCs through the real API: node visibility follows the roles, recordings
// are the caller's own unless RBAC says otherwise, audit is searchable and records who emitted.
import { type ClientWritableStream, Metadata, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import type { GetRecordingResponse__Output } from "../proto/generated/svc/v1/GetRecordingResponse.ts";
import type { UploadRecordingRequest } from "../proto/generated/svc/v1/UploadRecordingRequest.ts";
import { agentMetadata, callUnary, userMetadata } from "../server/auth/client.ts";
import { type AuthTestEnv, PASSWORD, startAuthEnv, statusOf } from "./auth-fixture.ts";

let env: AuthTestEnv;
let agent: AuthServiceClient;
const sid: Record<string, string> = {};

beforeAll(async () => {
  env = await startAuthEnv();
  agent = await env.agentClient("node-a");
  for (const u of ["alice", "bob", "eve"]) {
    const r = await callUnary(env.client, "AuthenticateLocal", {
      username: u,
      password: PASSWORD,
      client_address: "",
    });
    sid[u] = r.session?.session_id ?? "";
  }
});
afterAll(async () => {
  await env?.close();
});

const md = (u: string): Metadata => userMetadata(sid[u] ?? "");

function upload(
  id: string,
  user: string,
  start: number,
  chunks: Buffer[],
): Promise<{ code: number; size: number }> {
  return new Promise((resolve) => {
    const call: ClientWritableStream<UploadRecordingRequest> = agent.UploadRecording(
      agentMetadata("node-a"),
      (err, res) => resolve(err ? { code: err.code, size: 0 } : { code: 0, size: res?.size_bytes ?? 0 }),
    );
    call.write({
      metadata: {
        id,
        user_name: user,
        protocol: "ssh",
        login: user,
        start_unix_ms: start,
        end_unix_ms: start + 1000,
        format: "asciicast-v2",
      },
    });
    for (const c of chunks) call.write({ chunk: c });
    call.end();
  });
}

function download(id: string, m: Metadata): Promise<{ code: number; data: Buffer; user?: string }> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let user: string | undefined;
    const call = env.client.GetRecording({ id }, m);
    call.on("data", (msg: GetRecordingResponse__Output) => {
      if (msg.metadata) user = msg.metadata.user_name;
      if (msg.chunk) parts.push(msg.chunk);
    });
    call.on("error", (err: { code: number }) => resolve({ code: err.code, data: Buffer.alloc(0) }));
    call.on("end", () => resolve({ code: 0, data: Buffer.concat(parts), ...(user ? { user } : {}) }));
  });
}

describe("lists and audit", () => {
  it("lists nodes filtered by the roles' node labels, with status", async () => {
    const prod = await env.agentClient("node-p");
    await callUnary(
      agent,
      "Heartbeat",
      { hostname: "dev-1", addresses: ["10.0.0.1:3022"], labels: { env: "dev" }, version: "1" },
      agentMetadata("node-a"),
    );
    await callUnary(
      prod,
      "Heartbeat",
      { hostname: "prod-1", addresses: ["10.0.0.2:3022"], labels: { env: "prod" }, version: "1" },
      agentMetadata("node-p"),
    );
    const names = async (u: string) =>
      (await callUnary(env.client, "ListNodes", {}, md(u))).nodes.map((n) => n.hostname).sort();
    expect(await names("bob")).toEqual(["dev-1", "prod-1"]);
    expect(await names("eve")).toEqual(["prod-1"]);
    const one = (await callUnary(env.client, "ListNodes", {}, md("bob"))).nodes.find(
      (n) => n.hostname === "prod-1",
    );
    expect(one).toMatchObject({
      status: "online",
      labels: { env: "prod" },
      addresses: ["10.0.0.2:3022"],
      id: "node-p",
    });
    const bad = await statusOf(
      callUnary(
        agent,
        "Heartbeat",
        { hostname: "bad host", addresses: [], labels: {}, version: "" },
        agentMetadata("node-a"),
      ),
    );
    expect(bad.code).toBe(status.INVALID_ARGUMENT);
  });

  it("lists users and roles for admins only, without secrets", async () => {
    const users = await callUnary(env.client, "ListUsers", {}, md("alice"));
    expect(users.users.map((u) => u.name)).toEqual(["alice", "bob", "carl", "eve"]);
    expect(JSON.stringify(users)).not.toMatch(/argon2|phc/);
    expect(users.users.find((u) => u.name === "bob")).toMatchObject({
      roles: ["access"],
      webauthn_enrolled: false,
    });
    const roles = await callUnary(env.client, "ListRoles", {}, md("alice"));
    expect(roles.roles.map((r) => r.name)).toContain("admin");
    expect(JSON.parse(roles.roles.find((r) => r.name === "prod-viewer")?.spec_json ?? "{}")).toMatchObject({
      options: { max_session_ttl: "1h" },
    });
    expect((await statusOf(callUnary(env.client, "ListUsers", {}, md("bob")))).code).toBe(
      status.PERMISSION_DENIED,
    );
  });

  it("stores recordings; admins list and read all, others only their own", async () => {
    const data = Buffer.alloc(200_000, 7);
    data.write("hello", 0);
    expect(
      await upload("rec-bob-0001", "bob", 1000, [data.subarray(0, 70_000), data.subarray(70_000)]),
    ).toEqual({
      code: 0,
      size: data.length,
    });
    expect((await upload("rec-eve-0001", "eve", 2000, [Buffer.from("eve")])).code).toBe(0);
    expect((await upload("rec-eve-0001", "eve", 2000, [Buffer.from("again")])).code).toBe(
      status.ALREADY_EXISTS,
    );

    const list = (u: string, filter: { user?: string; limit?: number; offset?: number } = {}) =>
      callUnary(
        env.client,
        "ListRecordings",
        { limit: filter.limit ?? 0, offset: filter.offset ?? 0, user: filter.user ?? "", protocol: "" },
        md(u),
      );
    const all = await list("alice");
    expect(all.items.map((r) => r.id)).toEqual(["rec-eve-0001", "rec-bob-0001"]);
    expect(all.total_count).toBe(2);
    expect(all.items[1]).toMatchObject({ user_name: "bob", node: "dev-1", size_bytes: data.length });
    expect((await list("alice", { limit: 1, offset: 1 })).items.map((r) => r.id)).toEqual(["rec-bob-0001"]);
    expect((await list("bob")).items.map((r) => r.id)).toEqual(["rec-bob-0001"]);
    expect((await list("bob", { user: "eve" })).items).toEqual([]);
    expect((await statusOf(list("bob", { offset: -1 }))).code).toBe(status.INVALID_ARGUMENT);
    expect((await statusOf(list("bob", { limit: 501 }))).code).toBe(status.INVALID_ARGUMENT);
    expect((await list("bob", { limit: 500 })).total_count).toBe(1);

    const mine = await download("rec-bob-0001", md("bob"));
    expect(mine.code).toBe(0);
    expect(mine.user).toBe("bob");
    expect(mine.data.equals(data)).toBe(true);
    expect((await download("rec-eve-0001", md("bob"))).code).toBe(status.NOT_FOUND);
    expect((await download("rec-eve-0001", md("alice"))).data.toString()).toBe("eve");
  });

  it("records the emitter from the authenticated caller and searches newest first", async () => {
    const t0 = Date.now();
    await callUnary(
      agent,
      "EmitAuditEvent",
      { event_type: "session.start", user_name: "bob", success: true, fields_json: '{"node":"dev-1"}' },
      agentMetadata("node-a"),
    );
    await callUnary(
      agent,
      "EmitAuditEvent",
      { event_type: "session.end", user_name: "bob", fields_json: '{"emitted_by":"user:forged"}' },
      agentMetadata("node-a"),
    );
    const spoof = await statusOf(
      callUnary(
        env.client,
        "EmitAuditEvent",
        { event_type: "session.end", user_name: "alice", fields_json: "" },
        md("bob"),
      ),
    );
    expect(spoof.code).toBe(status.PERMISSION_DENIED);
    const reserved = await statusOf(
      callUnary(
        env.client,
        "EmitAuditEvent",
        { event_type: "cert.create", user_name: "", fields_json: "" },
        md("bob"),
      ),
    );
    expect(reserved.code).toBe(status.PERMISSION_DENIED);

    const page = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "", user: "bob", start_unix_ms: t0, limit: 0, offset: 0 },
      md("alice"),
    );
    expect(page.items.map((e) => e.event_type)).toEqual(["session.end", "session.start"]);
    expect(page.total_count).toBe(2);
    expect(JSON.parse(page.items[0]?.fields_json ?? "{}").emitted_by).toBe("agent:node-a");
    expect(JSON.parse(page.items[1]?.fields_json ?? "{}")).toEqual({
      node: "dev-1",
      emitted_by: "agent:node-a",
    });
    const limited = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "session.start", user: "", limit: 500, offset: 0 },
      md("alice"),
    );
    expect(limited.total_count).toBe(1);
    // one paging policy with the web API: above 500 is refused, never clamped
    const tooMany = await statusOf(
      callUnary(env.client, "SearchAuditEvents", { type: "", user: "", limit: 501, offset: 0 }, md("alice")),
    );
    expect(tooMany.code).toBe(status.INVALID_ARGUMENT);
    // an explicit 0 is the epoch, a real bound (unset is none): every event here is later
    const sinceEpoch = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "session.start", user: "", start_unix_ms: 0, limit: 0, offset: 0 },
      md("alice"),
    );
    expect(sinceEpoch.total_count).toBe(1);
    const beforeEpoch = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "session.start", user: "", end_unix_ms: 0, limit: 0, offset: 0 },
      md("alice"),
    );
    expect(beforeEpoch.total_count).toBe(0);
    const bobTries = await statusOf(
      callUnary(env.client, "SearchAuditEvents", { type: "", user: "", limit: 0, offset: 0 }, md("bob")),
    );
    expect(bobTries.code).toBe(status.PERMISSION_DENIED);
  });

  it("publishes key material and cluster info without a session", async () => {
    const keys = await callUnary(env.client, "GetPublicKeys", {}, new Metadata());
    expect(keys.user_ca_ssh_public_keys).toEqual([env.pki.userCaPublicLine]);
    expect(keys.host_ca_pems).toEqual([env.pki.hostCa.certPem]);
  });
});
