// Locks through the real auth server (TLS, interceptor, resource writer, real CAs): every target
// kind refused at every point auth decides, an unlocked identity unaffected, expiry lifting a
// lock, admins only, and WatchTrust pushing a new snapshot when a lock is made and when it ends.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ClientReadableStream } from "@grpc/grpc-js";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { saveProfile } from "../cli/profile.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { FolderSource } from "../core/sources/folder.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import type { TrustSnapshot__Output } from "../proto/generated/svc/v1/TrustSnapshot.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { startAuthServer } from "../server/auth/server.ts";
import { clientCert, makePki, silentLogger, statusOf, testResources } from "./auth-fixture.ts";
import { SoftKey } from "./auth-softkey.ts";
import { addBot, type MachineEnv, machineResources, PASSWORD, startMachineEnv } from "./bot-fixture.ts";
import { run } from "./cli-fixture.ts";
import { toYaml } from "./k8s-examples.ts";

let env: MachineEnv;
const streams: ClientReadableStream<TrustSnapshot__Output>[] = [];

const user = (name: string, roles: string[]) => ({
  apiVersion: API_VERSION,
  kind: "User",
  metadata: { name },
  spec: { roles, traits: { logins: [name] } },
});

beforeAll(async () => {
  env = await startMachineEnv({
    resources: [
      ...machineResources(),
      {
        apiVersion: API_VERSION,
        kind: "Role",
        metadata: { name: "ops" },
        spec: { allow: { logins: ["{{internal.logins}}"], node_labels: { "*": "*" } } },
      },
      user("carol", ["ops"]),
      user("dave", ["access"]),
      user("erin", ["access"]),
    ],
  });
  for (const u of ["carol", "dave", "erin"]) await setPassword(env.backend, u, PASSWORD);
});
afterAll(async () => {
  for (const s of streams) s.cancel();
  await env?.close();
});

async function login(name: string): Promise<string> {
  const r = await callUnary(env.client, "AuthenticateLocal", { username: name, password: PASSWORD });
  const id = r.session?.session_id;
  if (!id) throw new Error(`no session for ${name}`);
  return id;
}

async function admin() {
  return userMetadata(await env.adminSession());
}

async function certOf(session: string): Promise<{ cert: string; keyId: string }> {
  const key = generateSshKeyPair("ed25519");
  const r = await callUnary(
    env.client,
    "IssueUserCerts",
    { ssh_public_key: key.publicLine, ttl_seconds: 600 },
    userMetadata(session),
  );
  return { cert: r.ssh_certificate, keyId: r.key_id };
}

interface JoinedNode {
  id: string;
  hostname: string;
  client: AuthServiceClient;
}

let nodeSeq = 0;
async function joinNode(): Promise<JoinedNode> {
  const token = await callUnary(env.client, "CreateJoinToken", { ttl_seconds: 600 }, await admin());
  const hostname = `lock-node-${++nodeSeq}`;
  const host = generateSshKeyPair("ed25519");
  const tls = generateEcdsaP256();
  const r = await callUnary(env.client, "RegisterAgent", {
    token: token.token,
    hostname,
    host_ssh_public_key: host.publicLine,
    tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
    labels: { env: "dev" },
    addresses: ["127.0.0.1:3022"],
  });
  const client = env.clientWith({ certPem: r.tls_certificate_pem, keyPem: privateKeyToPem(tls.privateKey) });
  const node = { id: r.agent_id, hostname, client };
  await heartbeat(node);
  return node;
}

const heartbeat = (n: JoinedNode) =>
  callUnary(
    n.client,
    "Heartbeat",
    { hostname: n.hostname, addresses: ["127.0.0.1:3022"], labels: { env: "dev" }, version: "0.1.0" },
    agentMetadata(n.id),
  );

const sshLogin = (n: JoinedNode, cert: string, login: string) =>
  callUnary(n.client, "AuthorizeSshLogin", { ssh_certificate: cert, login }, agentMetadata(n.id));

async function createLock(req: Record<string, unknown>) {
  return callUnary(
    env.client,
    "CreateLock",
    { name: "", message: "", expires: "", ttl_seconds: 0, ...req },
    await admin(),
  );
}

async function deleteLock(name: string) {
  await callUnary(env.client, "DeleteLock", { name }, await admin());
}

/** A WatchTrust stream that records every snapshot; `next` waits for one matching `pick`. */
function watch(client: AuthServiceClient, md: ReturnType<typeof userMetadata>) {
  const seen: TrustSnapshot__Output[] = [];
  const waiters: {
    pick: (s: TrustSnapshot__Output) => boolean;
    resolve: (s: TrustSnapshot__Output) => void;
  }[] = [];
  const stream = client.WatchTrust({}, md);
  streams.push(stream);
  let failure: Error | undefined;
  stream.on("data", (s: TrustSnapshot__Output) => {
    seen.push(s);
    for (const w of [...waiters]) {
      if (w.pick(s)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(s);
      }
    }
  });
  stream.on("error", (err: Error) => {
    failure = err;
  });
  return {
    seen,
    stream,
    error: () => failure,
    /** The first snapshot from index `from` on that matches. */
    next(pick: (s: TrustSnapshot__Output) => boolean, from = 0): Promise<TrustSnapshot__Output> {
      const have = seen.slice(from).find(pick);
      if (have) return Promise.resolve(have);
      return new Promise((resolve) => waiters.push({ pick, resolve }));
    },
  };
}

const denied = (details: RegExp) => ({
  code: status.PERMISSION_DENIED,
  details: expect.stringMatching(details),
});

describe("CreateLock, ListLocks, DeleteLock", () => {
  it("are for admins only: an ordinary user may not create, list or watch", async () => {
    const bob = userMetadata(await login("bob"));
    const req = { name: "", target: { user: "dave" }, message: "", expires: "", ttl_seconds: 0 };
    expect(await statusOf(callUnary(env.client, "CreateLock", req, bob))).toMatchObject({
      code: status.PERMISSION_DENIED,
    });
    expect(await statusOf(callUnary(env.client, "ListLocks", {}, bob))).toMatchObject({
      code: status.PERMISSION_DENIED,
    });
    const w = watch(env.client, bob);
    await vi.waitFor(() => expect(w.error()).toBeDefined());
    expect((w.error() as Error & { code: number }).code).toBe(status.PERMISSION_DENIED);
    expect(w.seen).toEqual([]);
  });

  it("refuse bad input with a clear message; names are generated; audit records create and delete", async () => {
    const bad = async (req: Record<string, unknown>, re: RegExp) =>
      expect(await statusOf(createLock(req))).toMatchObject({
        code: status.INVALID_ARGUMENT,
        details: expect.stringMatching(re),
      });
    await bad({}, /exactly one of user, role, bot, node, key_id/);
    await bad({ target: { user: "dave", node: "n1" } }, /exactly one/);
    await bad({ target: { user: "dave" }, expires: "2001-01-01T00:00:00Z" }, /in the past/);
    await bad({ target: { user: "dave" }, expires: "tomorrow" }, /RFC 3339/);
    await bad({ target: { user: "dave" }, expires: "2099-01-01T00:00:00Z", ttl_seconds: 60 }, /not both/);
    await bad({ target: { user: "dave" }, name: "Not_A_Name" }, /DNS subdomain/);

    const l = await createLock({ target: { user: "nobody-yet" }, message: "pre-emptive", ttl_seconds: 3600 });
    expect(l.name).toMatch(/^lock-[0-9a-f]{12}$/);
    expect(l).toMatchObject({ target: { user: "nobody-yet" }, message: "pre-emptive", created_by: "alice" });
    expect(Date.parse(l.expires) - Date.now()).toBeGreaterThan(3500_000);
    expect(env.source.get("Lock", l.name)?.spec).toMatchObject({ target: { user: "nobody-yet" } });
    expect(await statusOf(createLock({ name: l.name, target: { user: "x" } }))).toMatchObject({
      code: status.ALREADY_EXISTS,
    });
    const list = await callUnary(env.client, "ListLocks", {}, await admin());
    expect(list.locks.map((x) => x.name)).toContain(l.name);
    await deleteLock(l.name);
    expect(await statusOf(deleteLock(l.name))).toMatchObject({ code: status.NOT_FOUND });
    const events = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "", user: "alice", limit: 50, offset: 0 },
      await admin(),
    );
    const types = events.items.map((e) => e.event_type);
    expect(types).toContain("lock.created");
    expect(types).toContain("lock.deleted");
  });
});

describe("enforcement in auth", () => {
  let node: JoinedNode;
  let other: JoinedNode;
  beforeAll(async () => {
    node = await joinNode();
    other = await joinNode();
  });

  it("a locked user: no login, session, certificate, terminal or node login; others unaffected", async () => {
    const session = await login("dave");
    const { cert } = await certOf(session);
    const bobSession = await login("bob");
    const bobCert = (await certOf(bobSession)).cert;
    const lock = await createLock({ target: { user: "dave" }, message: "under investigation" });

    const dave = userMetadata(session);
    expect(await statusOf(callUnary(env.client, "GetSession", {}, dave))).toMatchObject(
      denied(/^locked: under investigation$/),
    );
    const key = generateSshKeyPair("ed25519").publicLine;
    expect(
      await statusOf(callUnary(env.client, "IssueUserCerts", { ssh_public_key: key, ttl_seconds: 60 }, dave)),
    ).toMatchObject(denied(/^locked: under investigation$/));
    expect(
      await statusOf(
        callUnary(env.client, "AuthorizeNodeLogin", { hostname: node.hostname, login: "dave" }, dave),
      ),
    ).toMatchObject(denied(/locked/));
    expect(await statusOf(login("dave"))).toMatchObject(denied(/^locked: under investigation$/));
    // Without the password, nothing is told.
    expect(
      await statusOf(
        callUnary(env.client, "AuthenticateLocal", { username: "dave", password: "wrong password!" }),
      ),
    ).toMatchObject({ code: status.UNAUTHENTICATED, details: expect.not.stringContaining("locked") });
    expect(await statusOf(sshLogin(node, cert, "dave"))).toMatchObject(
      denied(/^locked: under investigation$/),
    );

    // bob is not locked.
    expect((await callUnary(env.client, "GetSession", {}, userMetadata(bobSession))).username).toBe("bob");
    expect((await sshLogin(node, bobCert, "bob")).name).toBe("bob");

    await deleteLock(lock.name);
    expect((await callUnary(env.client, "GetSession", {}, dave)).username).toBe("dave");
    expect((await sshLogin(node, cert, "dave")).name).toBe("dave");
  });

  it("a WebAuthn login: refused at the device step when locked after the password step", async () => {
    const rp = { rp_id: "localhost", rp_name: "svc test", origin: "https://localhost:3080" };
    const key = new SoftKey();
    const sid = await login("erin");
    const begin = await callUnary(
      env.client,
      "BeginWebAuthnRegistration",
      { relying_party: rp },
      userMetadata(sid),
    );
    await callUnary(
      env.client,
      "FinishWebAuthnRegistration",
      {
        challenge_id: begin.challenge_id,
        credential_json: key.register(begin.options_json, rp.origin),
        relying_party: rp,
        device_name: "key",
      },
      userMetadata(sid),
    );
    const first = await callUnary(env.client, "AuthenticateLocal", {
      username: "erin",
      password: PASSWORD,
      client_address: "",
      webauthn: rp,
    });
    const challenge = first.mfa_required?.challenge;
    expect(challenge?.challenge_id).toBeTruthy();
    const lock = await createLock({ target: { user: "erin" }, message: "device lost" });
    const finish = await statusOf(
      callUnary(env.client, "FinishWebAuthnLogin", {
        challenge_id: challenge?.challenge_id ?? "",
        credential_json: key.assert(challenge?.options_json ?? "", rp.origin),
        relying_party: rp,
        client_address: "",
      }),
    );
    expect(finish).toMatchObject(denied(/^locked: device lost$/));
    await deleteLock(lock.name);
    const again = await callUnary(env.client, "AuthenticateLocal", {
      username: "erin",
      password: PASSWORD,
      client_address: "",
      webauthn: rp,
    });
    const c = again.mfa_required?.challenge;
    const done = await callUnary(env.client, "FinishWebAuthnLogin", {
      challenge_id: c?.challenge_id ?? "",
      credential_json: key.assert(c?.options_json ?? "", rp.origin),
      relying_party: rp,
      client_address: "",
    });
    expect(done.session?.username).toBe("erin");
  });

  it("a locked role locks every user holding it", async () => {
    const carol = await login("carol");
    const { cert } = await certOf(carol);
    const lock = await createLock({ target: { role: "ops" }, message: "ops frozen" });
    expect(await statusOf(callUnary(env.client, "GetSession", {}, userMetadata(carol)))).toMatchObject(
      denied(/^locked: ops frozen$/),
    );
    expect(await statusOf(login("carol"))).toMatchObject(denied(/^locked: ops frozen$/));
    expect(await statusOf(sshLogin(node, cert, "carol"))).toMatchObject(denied(/^locked: ops frozen$/));
    expect((await callUnary(env.client, "GetSession", {}, userMetadata(await login("dave")))).username).toBe(
      "dave",
    );
    await deleteLock(lock.name);
    expect((await sshLogin(node, cert, "carol")).name).toBe("carol");

    // dave's certificate carries only "access"; once dave also holds "ops", an ops lock covers him.
    const daveCert = (await certOf(await login("dave"))).cert;
    await env.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "dave" },
      spec: { roles: ["access", "ops"], traits: { logins: ["dave"] } },
    });
    const opsLock = await createLock({ target: { role: "ops" }, message: "ops frozen" });
    try {
      expect(await statusOf(sshLogin(node, daveCert, "dave"))).toMatchObject(denied(/^locked: ops frozen$/));
    } finally {
      await deleteLock(opsLock.name);
      await env.source.apply({
        apiVersion: API_VERSION,
        kind: "User",
        metadata: { name: "dave" },
        spec: { roles: ["access"], traits: { logins: ["dave"] } },
      });
    }
  });

  it("a key id lock refuses that one certificate; another of the same user still works", async () => {
    const first = await certOf(await login("dave"));
    const second = await certOf(await login("dave"));
    expect(first.keyId).not.toBe(second.keyId);
    const lock = await createLock({ target: { key_id: first.keyId }, message: "key leaked" });
    expect(await statusOf(sshLogin(node, first.cert, "dave"))).toMatchObject(denied(/^locked: key leaked$/));
    expect((await sshLogin(node, second.cert, "dave")).name).toBe("dave");
    await deleteLock(lock.name);
  });

  it("a locked node: its calls refused, no logins to it; still listed; other nodes unaffected", async () => {
    const session = await login("dave");
    const { cert } = await certOf(session);
    const lock = await createLock({ target: { node: node.id }, message: "compromised host" });
    expect(await statusOf(heartbeat(node))).toMatchObject(denied(/^node is locked: compromised host$/));
    expect(await statusOf(sshLogin(node, cert, "dave"))).toMatchObject(
      denied(/^node is locked: compromised host$/),
    );
    expect(
      await statusOf(
        callUnary(
          env.client,
          "AuthorizeNodeLogin",
          { hostname: node.hostname, login: "dave" },
          userMetadata(session),
        ),
      ),
    ).toMatchObject(denied(/^node is locked: compromised host$/));
    const listed = await callUnary(env.client, "ListNodes", {}, userMetadata(session));
    expect(listed.nodes.map((n) => n.hostname)).toContain(node.hostname);
    // The locked node still hears about its own lock.
    const w = watch(node.client, agentMetadata(node.id));
    const snap = await w.next(() => true);
    expect(snap.locks.map((l) => l.name)).toContain(lock.name);

    await heartbeat(other);
    expect((await sshLogin(other, cert, "dave")).name).toBe("dave");
    await deleteLock(lock.name);
    await heartbeat(node);
    expect((await sshLogin(node, cert, "dave")).name).toBe("dave");
  });

  it("a locked bot: renewals and SVIDs refused, and its SSH certificate is refused by nodes", async () => {
    const token = await addBot(env, { name: "lockbot", roles: ["bot-ssh"], allowWorkloadSvids: true });
    const ssh = generateSshKeyPair("ed25519");
    const tls = generateEcdsaP256();
    const tlsPublicPem = String(tls.publicKey.export({ type: "spki", format: "pem" }));
    const creds = await callUnary(env.client, "BootstrapAgentIdentity", {
      token,
      ssh_public_key: ssh.publicLine,
      tls_public_key_pem: tlsPublicPem,
    });
    const bot = env.clientWith({
      certPem: creds.tls_certificate_pem,
      keyPem: privateKeyToPem(tls.privateKey),
    });
    const lock = await createLock({ target: { bot: "lockbot" }, message: "bot paused" });
    const renew = await statusOf(
      callUnary(
        bot,
        "RenewAgentIdentity",
        {
          name: "lockbot",
          renewal_token: creds.renewal_token,
          generation: creds.generation,
          ssh_public_key: generateSshKeyPair("ed25519").publicLine,
          tls_public_key_pem: tlsPublicPem,
        },
        agentMetadata("lockbot"),
      ),
    );
    expect(renew).toMatchObject(denied(/^locked: bot paused$/));
    const svid = await statusOf(
      callUnary(
        bot,
        "IssueWorkloadSVID",
        { spiffe_path: "/role/ci/x", tls_public_key_pem: tlsPublicPem, jwt_audiences: [], ttl_seconds: 0 },
        agentMetadata("lockbot"),
      ),
    );
    expect(svid).toMatchObject(denied(/^locked: bot paused$/));
    expect(await statusOf(sshLogin(node, creds.ssh_certificate, "root"))).toMatchObject(
      denied(/^locked: bot paused$/),
    );
    await deleteLock(lock.name);
    expect((await sshLogin(node, creds.ssh_certificate, "root")).name).toBe("lockbot");
  });
});

describe("expiry and WatchTrust", () => {
  it("serves nodes, proxies and admins; refuses other services", async () => {
    const proxyCert = await clientCert(env.cas.hostCa, { service: "proxy", name: "web" });
    const proxy = env.clientWith(proxyCert);
    const w = watch(proxy, agentMetadata("proxy:web"));
    const first = await w.next(() => true);
    const keys = await callUnary(env.client, "GetPublicKeys", {});
    expect(first.public_keys?.user_ca_ssh_public_keys).toEqual(keys.user_ca_ssh_public_keys);
    expect(first.public_keys?.host_ca_pems).toEqual(keys.host_ca_pems);
    expect(first.keepalive_seconds).toBe(15);
    expect(first.digest).toMatch(/^[0-9a-f]{64}$/);

    const opCert = await clientCert(env.cas.hostCa, { service: "operator", name: "op" });
    const op = watch(env.clientWith(opCert), agentMetadata("operator:op"));
    await vi.waitFor(() => expect(op.error()).toBeDefined());
    expect((op.error() as Error & { code: number }).code).toBe(status.PERMISSION_DENIED);
  });

  it("pushes a new snapshot when a lock is created and when it expires; expiry lifts the lock", async () => {
    const w = watch(env.client, await admin());
    const first = await w.next(() => true);
    const dave = userMetadata(await login("dave"));
    const lock = await createLock({ target: { user: "dave" }, message: "short", ttl_seconds: 2 });
    const withLock = await w.next((s) => s.locks.some((l) => l.name === lock.name));
    expect(withLock.digest).not.toBe(first.digest);
    expect(await statusOf(callUnary(env.client, "GetSession", {}, dave))).toMatchObject(
      denied(/^locked: short$/),
    );
    const from = w.seen.indexOf(withLock) + 1;
    const after = await w.next((s) => !s.locks.some((l) => l.name === lock.name), from);
    expect(after.digest).not.toBe(withLock.digest);
    expect((await callUnary(env.client, "GetSession", {}, dave)).username).toBe("dave");
    const list = await callUnary(env.client, "ListLocks", {}, await admin());
    expect(list.locks.map((l) => l.name)).not.toContain(lock.name);
    // The sweeper removes the expired resource.
    await vi.waitFor(() => expect(env.source.get("Lock", lock.name)).toBeUndefined(), { timeout: 5000 });
  });

  it("a Lock written into the resource source (kubectl apply, a folder file) is enforced", async () => {
    const dave = userMetadata(await login("dave"));
    await env.source.apply({
      apiVersion: API_VERSION,
      kind: "Lock",
      metadata: { name: "applied-lock" },
      spec: { target: { user: "dave" }, message: "applied by GitOps" },
    });
    expect(await statusOf(callUnary(env.client, "GetSession", {}, dave))).toMatchObject(
      denied(/^locked: applied by GitOps$/),
    );
    await env.source.remove("Lock", "applied-lock");
    expect((await callUnary(env.client, "GetSession", {}, dave)).username).toBe("dave");
  });
});

describe("WatchTrust streams", () => {
  it("a cancelled stream is dropped at once; auth shutting down ends the others cleanly", async () => {
    const feed = env.auth.service.trustFeed;
    const before = feed.watchers;
    const a = watch(env.client, await admin());
    const b = watch(env.client, await admin());
    await a.next(() => true);
    await b.next(() => true);
    expect(feed.watchers).toBe(before + 2);
    a.stream.cancel();
    await vi.waitFor(() => expect(feed.watchers).toBe(before + 1));
    const ended = new Promise<void>((resolve) => b.stream.on("end", () => resolve()));
    await env.stopAuth();
    await ended;
    expect(b.error()).toBeUndefined();
    expect(feed.watchers).toBe(0);
    await env.startAuth();
  });
});

/** Each svcctl run is a process start; a busy machine makes a dozen of them slow. */
const CLI_STEP = 240_000;

describe("svcctl lock", () => {
  let home: string;
  let bobHome: string;

  async function profileFor(name: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), `svc-locks-${name}-`));
    homes.push(dir);
    await saveProfile(
      {
        proxy: "127.0.0.1:1",
        ca_pem: env.hostCaPems.join(""),
        user: name,
        session_id: await login(name),
        auth: env.address,
      },
      { SVC_HOME: dir },
    );
    return dir;
  }
  const homes: string[] = [];
  const svcctl = (args: string[], svcHome = home) =>
    run("svcctl", ["--auth", env.address, ...args], { env: { SVC_HOME: svcHome, SVC_AUTH_ADDR: "" } });

  beforeAll(async () => {
    home = await profileFor("alice");
    bobHome = await profileFor("bob");
  });
  afterAll(async () => {
    for (const h of homes) await rm(h, { recursive: true, force: true });
  });

  it(
    "add, ls and rm as an admin types them; the lock is enforced meanwhile",
    async () => {
      const add = await svcctl(["lock", "add", "--user", "dave", "--message", "svcctl test", "--ttl", "1h"]);
      expect(add.code, add.stderr).toBe(0);
      const name = /^Lock (\S+) created: user=dave is refused everywhere until (\S+)\.$/m.exec(add.stdout);
      expect(name, add.stdout).not.toBeNull();
      expect(await statusOf(login("dave"))).toMatchObject(denied(/^locked: svcctl test$/));

      const ls = await svcctl(["lock", "ls", "--format", "json"]);
      expect(ls.code, ls.stderr).toBe(0);
      const listed = JSON.parse(ls.stdout) as { name: string; target: string; created_by: string }[];
      expect(listed).toContainEqual(
        expect.objectContaining({
          name: name?.[1],
          target: "user=dave",
          created_by: "alice",
          message: "svcctl test",
        }),
      );
      const table = await svcctl(["lock", "ls"]);
      expect(table.stdout).toMatch(/NAME\s+TARGET\s+EXPIRES/);
      expect(table.stdout).toContain("user=dave");

      const rm = await svcctl(["lock", "rm", name?.[1] ?? ""]);
      expect(rm.code, rm.stderr).toBe(0);
      expect(rm.stdout).toBe(`Lock ${name?.[1]} removed.\n`);
      expect(await login("dave")).toMatch(/.+/);
      const again = await svcctl(["lock", "rm", name?.[1] ?? ""]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toMatch(/not found/);

      const named = await svcctl([
        "lock",
        "add",
        "--node",
        "n-123",
        "--name",
        "freeze-n",
        "--expires",
        "2099-01-01T00:00:00Z",
        "--json",
      ]);
      expect(named.code, named.stderr).toBe(0);
      expect(JSON.parse(named.stdout)).toMatchObject({
        name: "freeze-n",
        target: "node=n-123",
        expires: "2099-01-01T00:00:00.000Z",
      });
      expect((await svcctl(["locks", "rm", "freeze-n"])).code).toBe(0);
    },
    CLI_STEP,
  );

  it(
    "usage errors and a non-admin are refused with their exit codes",
    async () => {
      const none = await svcctl(["lock", "add", "--message", "x"]);
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/exactly one of --user, --role, --bot, --node, --key-id/);
      const two = await svcctl(["lock", "add", "--user", "a", "--role", "b"]);
      expect(two.code).toBe(2);
      const both = await svcctl([
        "lock",
        "add",
        "--user",
        "a",
        "--ttl",
        "1h",
        "--expires",
        "2099-01-01T00:00:00Z",
      ]);
      expect(both.code).toBe(2);
      const past = await svcctl(["lock", "add", "--user", "a", "--expires", "2001-01-01T00:00:00Z"]);
      expect(past.code).not.toBe(0);
      expect(past.stderr).toMatch(/in the past/);
      const bob = await svcctl(["lock", "ls"], bobHome);
      expect(bob.code).toBe(4);
      const help = await svcctl(["lock", "add", "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/--key-id <id>/);
    },
    CLI_STEP,
  );
});

describe("embedded mode: a Lock file in the resource folder", () => {
  it("is enforced once the folder source reads it, and lifted when the file goes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-locks-folder-"));
    const pki = await makePki();
    const backend = new SqliteBackend({ path: ":memory:", clock: systemClock, sweepIntervalMs: 0 });
    const source = new FolderSource({ dir, debounceMs: 20 });
    await writeFile(join(dir, "resources.yaml"), toYaml(...testResources()));
    await source.start();
    await setPassword(backend, "bob", PASSWORD);
    const auth = await startAuthServer({
      backend,
      source,
      writer: source,
      clock: systemClock,
      logger: silentLogger,
      keys: pki.keys,
      cluster: { clusterName: "test", serverVersion: "0.1.0" },
      tls: { certPem: pki.serverCertPem, keyPem: pki.serverKeyPem, clientCaPems: [pki.hostCa.certPem] },
      port: 0,
    });
    const client = createAuthClient({
      address: auth.address,
      caPems: [pki.hostCa.certPem],
      serverName: "localhost",
    });
    try {
      const r = await callUnary(client, "AuthenticateLocal", { username: "bob", password: PASSWORD });
      const bob = userMetadata(r.session?.session_id ?? "");
      expect((await callUnary(client, "GetSession", {}, bob)).username).toBe("bob");
      const file = join(dir, "lock-bob.yaml");
      await writeFile(
        file,
        toYaml({
          apiVersion: API_VERSION,
          kind: "Lock",
          metadata: { name: "bob-by-file" },
          spec: { target: { user: "bob" }, message: "from the folder" },
        }),
      );
      await vi.waitFor(
        async () =>
          expect(await statusOf(callUnary(client, "GetSession", {}, bob))).toMatchObject(
            denied(/^locked: from the folder$/),
          ),
        { timeout: 10_000, interval: 50 },
      );
      await rm(file);
      await vi.waitFor(
        async () => expect((await callUnary(client, "GetSession", {}, bob)).username).toBe("bob"),
        {
          timeout: 10_000,
          interval: 50,
        },
      );
    } finally {
      client.close();
      await auth.close(1000);
      await source.stop();
      await backend.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
