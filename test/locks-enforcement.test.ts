// Locks enforced at the edge (docs/locks.md, "Enforcement at nodes and proxies"), end to end with
// the real binaries (test/locks-kit.ts): `svcd start`, two `svcd agent` processes, plain OpenSSH
// sessions with the certificates `svc certs` writes, and the proxy's browser terminal over a real
// WebSocket. An admin locks a user, a role, a certificate's key id or a node (CreateLock, what
// `svcctl lock` calls); every assertion waits for what the lock must cause (a session ending, a
// refusal), never for a time.
import { readFile } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parseSshCertificate } from "../core/certs/ssh-cert.ts";
import { waitFor } from "./cli-fixture.ts";
import { type LiveSsh, type LockNode, type LocksWorld, PUBLIC_NAME, startLocksWorld } from "./locks-kit.ts";

const STEP = 180_000;

describe("locks enforced at nodes and the proxy", () => {
  let w: LocksWorld;
  let node1: LockNode;
  let node2: LockNode;
  const sessions: LiveSsh[] = [];
  const live = async (who: "alice" | "admin", node: LockNode): Promise<LiveSsh> => {
    const s = await w.openSsh(who === "alice" ? w.aliceCerts : w.adminCerts, node);
    sessions.push(s);
    return s;
  };
  const refusals = (node: LockNode): number =>
    (node.daemon.output().match(/login refused: locked/g) ?? []).length;

  beforeAll(async () => {
    w = await startLocksWorld({ nodes: 2 });
    [node1, node2] = w.nodes as [LockNode, LockNode];
  }, STEP);

  // A failed test must not leave its lock to the next one.
  afterEach(async () => {
    await w?.unlockAll().catch(() => undefined);
  });

  afterAll(async () => {
    for (const s of sessions) s.child.kill("SIGKILL");
    await w?.close();
  });

  it(
    "a user lock ends that user's live sessions on every node with its message; another user's survives; new logins are refused until the lock is removed",
    async () => {
      const a1 = await live("alice", node1);
      const a2 = await live("alice", node2);
      const other = await live("admin", node1);

      const name = await w.lock({ user: "alice" }, "compromised laptop, call security");
      await Promise.all([a1.exited, a2.exited]);
      expect(a1.stderr()).toContain("compromised laptop, call security");
      expect(a2.stderr()).toContain("compromised laptop, call security");
      await other.echo("admin-still-here");

      const before = refusals(node1);
      const refused = await w.ssh(w.aliceCerts, node1);
      expect(refused.code).toBe(255);
      expect(refused.stderr).toMatch(/Permission denied/);
      // The node refused it itself, before asking auth (its log line may trail the refusal).
      await waitFor(() => refusals(node1) > before, "the node's own refusal");
      expect(await w.loginWorks(w.adminCerts, node2)).toBe(true);

      await w.unlock(name);
      await waitFor(() => w.loginWorks(w.aliceCerts, node1), "alice let in after the unlock");
      expect(await w.loginWorks(w.aliceCerts, node2)).toBe(true);
      await other.echo("admin-still-here-2");
    },
    STEP,
  );

  it(
    "svc ssh through the proxy's node stream ends with the lock's message; another user's survives",
    async () => {
      const mine = await w.svcSsh("alice", node1);
      sessions.push(mine);
      const other = await w.svcSsh("admin", node1);
      sessions.push(other);
      await w.lock({ user: "alice" }, "stream locked for review");
      await mine.exited;
      expect(mine.stderr()).toContain("stream locked for review");
      await other.echo("admin-stream-alive");
    },
    STEP,
  );

  it(
    "the proxy itself closes a locked user's node stream (4403, the lock's message as reason)",
    async () => {
      // A raw node stream with no SSH login inside: the node has no session to end, so only the
      // proxy's own enforcement can close it (what ends a stream to a node that ignores locks).
      const alice = await w.session("alice");
      const url = `wss://127.0.0.1:${w.ports.proxy}/v1/webapi/ssh/dial?node=${node1.name}&login=root`;
      const ws = new WebSocket(url, {
        ca: w.hostCaPem,
        servername: PUBLIC_NAME,
        headers: { authorization: `Bearer ${alice}` },
      } as WebSocket.ClientOptions);
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      await new Promise<void>((resolve, reject) => {
        ws.on("message", (data, isBinary) => {
          if (!isBinary && JSON.parse(data.toString()).type === "ready") resolve();
        });
        ws.once("error", reject);
      });
      await w.lock({ user: "alice" }, "streams closed by the proxy");
      expect(await closed).toEqual({
        code: 4403,
        reason: 'user "alice" is locked: streams closed by the proxy',
      });
    },
    STEP,
  );

  it(
    "a role lock and a key id lock end the sessions they cover and no other",
    async () => {
      const other = await live("admin", node2);
      const byRole = await live("alice", node2);
      const roleLock = await w.lock({ role: "access" }, "access role suspended");
      await byRole.exited;
      expect(byRole.stderr()).toContain("access role suspended");
      await other.echo("survives-role-lock");
      expect((await w.ssh(w.aliceCerts, node1)).code).toBe(255);
      await w.unlock(roleLock);
      await waitFor(() => w.loginWorks(w.aliceCerts, node2), "role unlocked");

      const keyId = parseSshCertificate(await readFile(w.aliceCerts.certificate, "utf8")).keyId;
      expect(keyId).toMatch(/^user=alice session=/);
      const byKey = await live("alice", node1);
      const keyLock = await w.lock({ key_id: keyId }, "this certificate leaked");
      await byKey.exited;
      expect(byKey.stderr()).toContain("this certificate leaked");
      await other.echo("survives-key-lock");
      expect((await w.ssh(w.aliceCerts, node2)).code).toBe(255);
      await w.unlock(keyLock);
      await waitFor(() => w.loginWorks(w.aliceCerts, node1), "key id unlocked");
    },
    STEP,
  );

  it(
    "a locked node ends every session on it and refuses every login; other nodes serve",
    async () => {
      const onNode1 = await live("admin", node1);
      const onNode2 = await live("admin", node2);
      const name = await w.lock({ node: node1.id }, "node1 under maintenance");
      await onNode1.exited;
      expect(onNode1.stderr()).toContain("node1 under maintenance");
      await onNode2.echo("node2-serves");
      expect((await w.ssh(w.adminCerts, node1)).code).toBe(255);
      expect((await w.ssh(w.aliceCerts, node1)).code).toBe(255);
      expect(await w.loginWorks(w.aliceCerts, node2)).toBe(true);
      await w.unlock(name);
      await waitFor(() => w.loginWorks(w.adminCerts, node1), "node1 serves again", 120_000);
    },
    STEP,
  );

  it(
    "the proxy closes a locked user's terminal with the lock's message and refuses their web session; the same session works once unlocked",
    async () => {
      const alice = await w.session("alice");
      const admin = await w.session("admin");
      expect((await w.web("/v1/webapi/session", alice)).status).toBe(200);
      const term = await w.terminal(alice, node1);
      await term.waitControl("ready");
      const adminTerm = await w.terminal(admin, node1);
      await adminTerm.waitControl("ready");

      const name = await w.lock({ user: "alice" }, "account under review");
      const closed = await term.closed;
      expect(closed.code).toBe(4403);
      expect(term.controls).toContainEqual(
        expect.objectContaining({
          type: "error",
          code: "access_denied",
          message: expect.stringContaining("account under review"),
        }),
      );
      // Refused by the proxy from its snapshot (its wording), without asking auth: it has seen
      // this session before.
      const refused = await w.web("/v1/webapi/session", alice);
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body)).toMatchObject({
        error: { code: "access_denied", message: 'user "alice" is locked: account under review' },
      });
      adminTerm.type("echo admin-$((20+22))\n");
      await adminTerm.waitFor("admin-42");

      await w.unlock(name);
      // The session itself was never removed: the same bearer works again.
      await waitFor(
        async () => (await w.web("/v1/webapi/session", alice)).status === 200,
        "alice's session accepted again",
      );
      adminTerm.ws.close();
    },
    STEP,
  );

  it(
    "with auth stopped a node keeps refusing the locked user and reports a growing snapshot age; once auth is back and the lock is gone, the user is let in",
    async () => {
      await w.lock({ user: "alice" }, "locked while auth is away");
      await waitFor(async () => !(await w.loginWorks(w.aliceCerts, node1)), "alice refused");
      await w.stopPlatform();

      type Health = { status: string; trust: { connected: boolean; age_seconds: number | null } };
      const health = async (): Promise<Health> =>
        (await (await fetch(`http://127.0.0.1:${node1.diagPort}/healthz`)).json()) as Health;
      await waitFor(async () => (await health()).trust.connected === false, "stream down");
      const first = (await health()).trust.age_seconds ?? 0;
      await waitFor(async () => ((await health()).trust.age_seconds ?? 0) > first + 1, "age growing");
      const metrics = await (await fetch(`http://127.0.0.1:${node1.diagPort}/metrics`)).text();
      expect(metrics).toMatch(/^svc_agent_trust_stream_connected\{[^}]*\} 0$/m);
      const age = Number(/^svc_agent_trust_snapshot_age_seconds\{[^}]*\} (\S+)$/m.exec(metrics)?.[1]);
      expect(age).toBeGreaterThan(first);

      const before = refusals(node1);
      expect((await w.ssh(w.aliceCerts, node1)).code).toBe(255);
      // Refused by the node's own copy of the lock: auth is down, it could not have been asked.
      await waitFor(() => refusals(node1) > before, "the node's own refusal");

      await w.startPlatform();
      await waitFor(async () => (await health()).trust.connected, "stream back", 120_000);
      await w.unlockAll();
      await waitFor(() => w.loginWorks(w.aliceCerts, node1), "alice let in again", 120_000);
    },
    STEP,
  );
});
