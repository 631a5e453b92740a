// What one Heartbeat costs auth in backend work, through the real auth server over gRPC/TLS with
// a joined agent: the node's registration is read once by the interceptor and handed to the
// handler (never a second read in the same call), and a removed node is refused on its next call.
// The node record write is skipped for an unchanged beat within the skip window (1.5 intervals),
// and the status rule allows for that lag: NodeStore with a manual clock on a real SQLite backend.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../core/backend/backend.ts";
import { openSqliteBackend } from "../core/backend/index.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import { ManualClock } from "../core/clock.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { NodeStore } from "../server/auth/nodes.ts";
import { type AgentAuthEnv, startAgentAuthEnv } from "./agent-fixture.ts";
import { statusOf } from "./auth-fixture.ts";

let env: AgentAuthEnv;
/** backend reads and writes by key, since the last reset */
const gets: string[] = [];
const puts: string[] = [];

function counting(backend: Backend): Backend {
  return new Proxy(backend, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "get" && typeof value === "function")
        return (key: string, ...rest: unknown[]) => {
          gets.push(key);
          return value.call(target, key, ...rest);
        };
      if (prop === "put" && typeof value === "function")
        return (key: string, ...rest: unknown[]) => {
          puts.push(key);
          return value.call(target, key, ...rest);
        };
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

beforeAll(async () => {
  env = await startAgentAuthEnv({ wrapBackend: counting });
});

afterAll(async () => {
  await env?.close();
});

async function joinAgent(hostname: string) {
  const tls = generateEcdsaP256();
  const res = await callUnary(env.client, "RegisterAgent", {
    token: await env.addToken(`cost-${hostname}`),
    hostname,
    host_ssh_public_key: generateSshKeyPair("ed25519").publicLine,
    tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
    labels: {},
    addresses: ["127.0.0.1:3022"],
  });
  const id = res.agent_id ?? "";
  const client = createAuthClient({
    address: env.address,
    caPems: res.host_ca_pems ?? [],
    serverName: env.serverName,
    certPem: res.tls_certificate_pem ?? "",
    keyPem: privateKeyToPem(tls.privateKey),
  });
  const beat = () =>
    callUnary(
      client,
      "Heartbeat",
      { hostname, addresses: ["127.0.0.1:3022"], labels: {}, version: "t" },
      agentMetadata(id),
    );
  return { id, client, beat };
}

describe("Heartbeat backend cost", () => {
  it("reads the registration once for the checks (the interceptor's read is handed on)", async () => {
    const agent = await joinAgent("cost-1");
    try {
      gets.length = 0;
      puts.length = 0;
      await agent.beat();
      const regKey = `agents/${encodeURIComponent(agent.id)}`;
      const regReads = gets.filter((k) => k === regKey).length;
      // The interceptor's read serves checkHeartbeat too; a record write is followed by one more
      // read (a DeleteNode that ran meanwhile takes the record back out).
      const wrote = puts.includes(`nodes/${encodeURIComponent(agent.id)}`);
      expect(regReads).toBe(wrote ? 2 : 1);
      expect(wrote).toBe(true); // the first beat after the join
      // The next beat, unchanged and inside the skip window: no write, one registration read.
      gets.length = 0;
      puts.length = 0;
      await agent.beat();
      expect(puts).toEqual([]);
      expect(gets.filter((k) => k === regKey)).toHaveLength(1);
    } finally {
      agent.client.close();
    }
  });

  it("a removed node is refused on its next call (nothing is kept across calls)", async () => {
    const agent = await joinAgent("cost-2");
    try {
      await agent.beat();
      const admin = userMetadata(await env.login("alice"));
      await callUnary(env.client, "DeleteNode", { node: agent.id }, admin);
      expect(await statusOf(agent.beat())).toEqual({
        code: status.UNAUTHENTICATED,
        details: "this node has been removed",
      });
    } finally {
      agent.client.close();
    }
  });
});

describe("NodeStore.beat: the record write is skipped within the window", () => {
  const beat = { hostname: "skip-1", addresses: ["10.0.0.1:3022"], labels: { env: "dev" }, version: "1" };

  async function store() {
    const clock = new ManualClock();
    const backend = await openSqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 });
    const writes: string[] = [];
    const nodes = new NodeStore({ backend: countPuts(backend, writes), clock, intervalSeconds: 30 });
    return { clock, backend, nodes, writes };
  }

  function countPuts(backend: Backend, writes: string[]): Backend {
    return new Proxy(backend, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop === "put" && typeof value === "function")
          return (key: string, ...rest: unknown[]) => {
            writes.push(key);
            return value.call(target, key, ...rest);
          };
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  it("a beat inside the window does not write; one at the window's end does; a change always does", async () => {
    const { clock, backend, nodes, writes } = await store();
    try {
      expect(await nodes.beat("n1", beat)).toBe(true);
      const first = (await nodes.get("n1"))?.lastHeartbeat.getTime();
      clock.advance(30_000); // the next regular beat: inside the 45 s window
      expect(await nodes.beat("n1", beat)).toBe(false);
      expect((await nodes.get("n1"))?.lastHeartbeat.getTime()).toBe(first);
      clock.advance(14_999);
      expect(await nodes.beat("n1", beat)).toBe(false);
      clock.advance(1); // 45 s after the stored one
      expect(await nodes.beat("n1", beat)).toBe(true);
      expect((await nodes.get("n1"))?.lastHeartbeat.getTime()).toBe(clock.now().getTime());
      clock.advance(1_000);
      expect(await nodes.beat("n1", { ...beat, labels: { env: "prod" } })).toBe(true);
      expect((await nodes.get("n1"))?.labels).toEqual({ env: "prod" });
      expect(writes).toHaveLength(3);
      // A beat over another connection (the agent restarted) is written at once.
      clock.advance(1_000);
      expect(await nodes.beat("n1", { ...beat, labels: { env: "prod" } }, "conn-1")).toBe(true);
      clock.advance(1_000);
      expect(await nodes.beat("n1", { ...beat, labels: { env: "prod" } }, "conn-1")).toBe(false);
      clock.advance(1_000);
      expect(await nodes.beat("n1", { ...beat, labels: { env: "prod" } }, "conn-2")).toBe(true);
      expect((await nodes.get("n1"))?.lastHeartbeat.getTime()).toBe(clock.now().getTime());
      // A removed record is written again by the next beat.
      await nodes.remove("n1");
      clock.advance(1_000);
      expect(await nodes.beat("n1", beat)).toBe(true);
      expect(await nodes.get("n1")).toBeDefined();
    } finally {
      backend.close();
    }
  });

  it("status: online through skipped beats, offline 3 intervals plus the window after the stored beat", async () => {
    const { clock, backend, nodes } = await store();
    try {
      await nodes.beat("n1", beat); // stored at t0
      clock.advance(30_000);
      expect(await nodes.beat("n1", beat)).toBe(false); // the last beat, at t0 + 30 s; not stored
      // 90 s after the last beat (120 s after the stored one): still online, as without skipping.
      clock.advance(89_999);
      expect((await nodes.get("n1"))?.online).toBe(true);
      expect((await nodes.list()).find((n) => n.id === "n1")?.online).toBe(true);
      // Offline at t0 + 3 intervals + 45 s = 135 s after the stored beat (105 s after the last).
      clock.advance(15_001);
      expect((await nodes.get("n1"))?.online).toBe(false);
      expect((await nodes.list()).find((n) => n.id === "n1")?.online).toBe(false);
    } finally {
      backend.close();
    }
  });

  it("a failed batched write fails every beat in it, and each of them is written at its next beat", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-beat-batch-"));
    const path = join(dir, "s.db");
    const clock = new ManualClock();
    const backend = await openSqliteBackend({ path, clock, sweepIntervalMs: 0, busyTimeoutMs: 0 });
    const lock = new DatabaseSync(path);
    try {
      const nodes = new NodeStore({ backend, clock, intervalSeconds: 30 });
      const ids = ["f1", "f2", "f3", "f4"];
      const beatOf = (id: string) => ({ ...beat, hostname: id });
      // Same turn: one commit; another connection holds the write lock, so it fails (busy).
      lock.exec("BEGIN IMMEDIATE");
      const results = await Promise.allSettled(ids.map((id) => nodes.beat(id, beatOf(id), "conn")));
      lock.exec("ROLLBACK");
      expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected", "rejected"]);
      for (const id of ids) expect(await nodes.get(id)).toBeUndefined();
      // None is taken for written: the next beat of each writes (not skipped as unchanged).
      clock.advance(1_000);
      expect(await Promise.all(ids.map((id) => nodes.beat(id, beatOf(id), "conn")))).toEqual([
        true,
        true,
        true,
        true,
      ]);
      for (const id of ids) expect((await nodes.get(id))?.hostname).toBe(id);
    } finally {
      lock.close();
      await backend.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("heartbeat() (a join, the agentless probe) always writes, and its status is exactly 3 intervals", async () => {
    const { clock, backend, nodes, writes } = await store();
    try {
      await nodes.heartbeat("n2", beat);
      clock.advance(1_000);
      await nodes.heartbeat("n2", beat);
      expect(writes).toHaveLength(2);
      clock.advance(89_999);
      expect((await nodes.get("n2"))?.online).toBe(true);
      clock.advance(1);
      expect((await nodes.get("n2"))?.online).toBe(false);
    } finally {
      backend.close();
    }
  });
});
