// CA rotation through the real auth service: the embedded platform (`svcd start` in this
// process: auth over TLS 1.3, SQLite, the file CA store and rotation state), real gRPC clients,
// real ssh-keygen. For each CA type: what was issued before init verifies against the published
// trust in every phase until standby; what is issued from update_clients on is signed by the new
// key; after standby the old key is gone from GetPublicKeys, the SPIFFE bundle and the JWKS, and
// its certificates fail. Plus rollback, the refusal to end early, non-admins, automatic mode and
// a restart. SVIDs and JWTs are signed by a second CertificateAuthorities over the same data
// folder (what another auth replica signs with after it reloads the state).
import { execFile } from "node:child_process";
import { type KeyObject, sign } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { FileRotationStateStore } from "../core/ca/rotation-store.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, issueSpiffeSvid } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { OperatorAuthClient } from "../operator/auth-client.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import type { PublicKeys__Output } from "../proto/generated/svc/v1/PublicKeys.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { spiffeProofMessage } from "../server/auth/spiffe.ts";
import { type RunningPlatform, startEmbedded } from "../server/embedded/start.ts";
import {
  type IssueContext,
  issue as issueFor,
  pemBody,
  signingKeyOf as signingKeyFor,
} from "./ca-rotation-kit.ts";
import { run } from "./cli-fixture.ts";
import { HttpsClient } from "./proxy-https-client.ts";

const execFileP = promisify(execFile);
const PASSWORD = "ca-rotation-admin-password";
const clock = systemClock;

let dir: string;
let platform: RunningPlatform;
let replica: CertificateAuthorities;
let session: string;
let client: AuthServiceClient;

async function start(): Promise<void> {
  platform = await startEmbedded(
    {
      dataDir: join(dir, "data"),
      authListen: "127.0.0.1:0",
      proxyListen: "127.0.0.1:0",
      diagListen: "127.0.0.1:0",
    },
    { env: { SVC_ADMIN_PASSWORD_FILE: join(dir, "pw") }, logger: pino({ level: "silent" }) },
  );
  client = createAuthClient({
    address: platform.authAddress,
    caPems: [platform.hostCaPem],
    serverName: "localhost",
  });
  const r = await callUnary(client, "AuthenticateLocal", {
    username: "admin",
    password: PASSWORD,
    client_address: "",
  });
  session = r.session?.session_id ?? "";
  expect(session).not.toBe("");
}

/** GetPublicKeys, then a client trusting what it published (auth's certificate follows the host CA). */
async function published(): Promise<PublicKeys__Output> {
  const keys = await callUnary(client, "GetPublicKeys", {});
  client.close();
  client = createAuthClient({
    address: platform.authAddress,
    caPems: keys.host_ca_pems,
    serverName: "localhost",
  });
  return keys;
}

const admin = () => userMetadata(session);

async function rotate(type: string, phase: string, force = false) {
  const s = await callUnary(
    client,
    "RotateCertAuthority",
    { type, phase, mode: "manual", grace_period_seconds: 0, force },
    admin(),
  );
  await replica.reload();
  return s;
}

/** The typed error callUnary maps a gRPC status to (core/errors.ts codes). */
async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error("expected a refusal");
}

const issuedAgents: { id: string; certPem: string; keyPem: string }[] = [];
const ctx: IssueContext = {
  client: () => client,
  admin: () => admin(),
  replica: () => replica,
  agents: issuedAgents,
};
const issue = (type: string) => issueFor(ctx, type);
const signingKeyOf = (type: string, keys: PublicKeys__Output) => signingKeyFor(ctx, type, keys);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-ca-rotation-"));
  await writeFile(join(dir, "pw"), PASSWORD);
  await start();
  replica = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(platform.data.paths.ca), {
    clusterName: platform.data.config.cluster_name,
    trustDomain: "ca-rotation.test",
    clock,
    rotationStore: new FileRotationStateStore(platform.data.paths.ca),
  });
}, 120_000);

afterAll(async () => {
  client?.close();
  await platform?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("CA rotation through auth", () => {
  for (const type of ["user_ssh", "host_ssh", "host_x509", "spiffe", "jwt", "app"]) {
    it(`${type}: old certificates verify in every phase, new ones are signed by the new key, standby drops the old`, async () => {
      const keys0 = await published();
      const oldSigner = await signingKeyOf(type, keys0);
      const before = await issue(type);
      expect(await before.verify(keys0)).toBe(true);
      expect(await before.signer(keys0)).toBe(oldSigner);

      const init = await rotate(type, "init");
      expect(init.phase).toBe("init");
      expect(init.keys.map((k) => k.role)).toEqual(["active", "next"]);
      const keys1 = await published();
      expect(await before.verify(keys1)).toBe(true);
      // init: the old key still signs.
      expect(await (await issue(type)).signer(keys1)).toBe(oldSigner);

      const uc = await rotate(type, "update_clients");
      expect(uc.old_key_expires_at).not.toBe("");
      const keys2 = await published();
      const newSigner = await signingKeyOf(type, keys2);
      expect(newSigner).not.toBe(oldSigner);
      const during = await issue(type);
      expect(await during.signer(keys2)).toBe(newSigner);
      expect(await before.verify(keys2)).toBe(true);

      await rotate(type, "update_servers");
      const keys3 = await published();
      expect(await before.verify(keys3)).toBe(true);
      expect(await during.verify(keys3)).toBe(true);

      // Ending early is refused with the time the old key's certificates expire.
      const early = await refusal(rotate(type, "standby"));
      expect(early.code).toBe("precondition_failed");
      expect(early.message).toContain(uc.old_key_expires_at);
      const done = await rotate(type, "standby", true);
      expect(done.keys.map((k) => k.role)).toEqual(["active"]);

      const keys4 = await published();
      expect(await before.verify(keys4)).toBe(false);
      expect(await during.verify(keys4)).toBe(true);
      expect(await signingKeyOf(type, keys4)).toBe(newSigner);
      expect(JSON.stringify(keys4)).not.toContain(
        type === "jwt" || type === "app" ? `"kid":"${oldSigner}"` : (oldSigner.split(" ")[1] ?? oldSigner),
      );
    });
  }

  it("a node certificate from the new host X.509 CA is accepted by auth's TLS, and auth's own certificate is from it", async () => {
    const agent = issuedAgents.at(-1);
    expect(agent).toBeDefined();
    const keys = await published();
    const nodeClient = createAuthClient({
      address: platform.authAddress,
      caPems: [keys.host_ca_pems[0] ?? ""],
      serverName: "localhost",
      certPem: agent?.certPem ?? "",
      keyPem: agent?.keyPem ?? "",
    });
    try {
      const r = await callUnary(
        nodeClient,
        "CheckNodeRegistered",
        { agent_id: agent?.id ?? "" },
        agentMetadata(agent?.id ?? ""),
      );
      expect(r.registered).toBe(true);
      // An agent may not rotate CAs.
      const denied = await refusal(
        callUnary(
          nodeClient,
          "RotateCertAuthority",
          { type: "app", phase: "init", mode: "", grace_period_seconds: 0, force: false },
          agentMetadata(agent?.id ?? ""),
        ),
      );
      expect(["access_denied", "not_authenticated"]).toContain(denied.code);
    } finally {
      nodeClient.close();
    }
    // The embedded proxy followed too: its public certificate is from the new host CA, and a
    // login through it reaches auth (its client certificate and trust were re-issued).
    const publicAddr = platform.data.config.proxy.public_addr;
    const web = new HttpsClient(
      platform.proxyUrl,
      keys.host_ca_pems[0] ?? "",
      publicAddr.slice(0, publicAddr.lastIndexOf(":")),
    );
    const login = await web.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: "admin", password: PASSWORD },
    });
    expect(login.status, login.text).toBe(200);
    const anonymous = await refusal(callUnary(client, "ListCertAuthorities", {}));
    expect(anonymous.code).toBe("not_authenticated");
  });

  it("rollback signs with the old key again; ending it waits for the new key's certificates unless forced", async () => {
    const keys0 = await published();
    const oldSigner = await signingKeyOf("user_ssh", keys0);
    expect((await refusal(rotate("user_ssh", "rollback"))).code).toBe("precondition_failed");
    await rotate("user_ssh", "init");
    await rotate("user_ssh", "update_clients");
    const during = await issue("user_ssh");
    const back = await rotate("user_ssh", "rollback");
    expect(back.phase).toBe("rollback");
    const keys1 = await published();
    expect(keys1.user_ca_ssh_public_keys).toHaveLength(2);
    expect(await (await issue("user_ssh")).signer(keys1)).toBe(oldSigner);
    expect(await during.verify(keys1)).toBe(true);
    expect((await refusal(rotate("user_ssh", "standby"))).message).toMatch(/valid until/);
    await rotate("user_ssh", "standby", true);
    const keys2 = await published();
    expect(keys2.user_ca_ssh_public_keys).toEqual([oldSigner]);
    expect(await during.verify(keys2)).toBe(false);
  });

  it("ssh-keygen reads the signing CA of a certificate issued in update_clients as the new key", async () => {
    await rotate("user_ssh", "init");
    await rotate("user_ssh", "update_clients");
    const k = generateSshKeyPair("ed25519");
    const r = await callUnary(
      client,
      "IssueUserCerts",
      { ssh_public_key: k.publicLine, ttl_seconds: 600, node: "" },
      admin(),
    );
    const certFile = join(dir, "user-cert.pub");
    await writeFile(certFile, `${r.ssh_certificate}\n`);
    const { stdout } = await execFileP("ssh-keygen", ["-L", "-f", certFile]);
    const status = (await callUnary(client, "ListCertAuthorities", {}, admin())).authorities.find(
      (a) => a.type === "user_ssh",
    );
    const active = status?.keys.find((x) => x.role === "active");
    const previous = status?.keys.find((x) => x.role === "previous");
    expect(stdout).toContain(`Signing CA: ED25519 ${active?.fingerprint}`);
    expect(stdout).not.toContain(previous?.fingerprint ?? "none");
  });

  it("a restarted auth (same data folder) keeps the phase and the keys", async () => {
    const before = (await callUnary(client, "ListCertAuthorities", {}, admin())).authorities;
    expect(before.find((a) => a.type === "user_ssh")?.phase).toBe("update_clients");
    client.close();
    await platform.close();
    await start();
    const after = (await callUnary(client, "ListCertAuthorities", {}, admin())).authorities;
    expect(after).toEqual(before);
    await rotate("user_ssh", "update_servers");
    await rotate("user_ssh", "standby", true);
  });

  it("automatic mode moves on by itself after each grace period", async () => {
    const started = await callUnary(
      client,
      "RotateCertAuthority",
      { type: "app", phase: "", mode: "auto", grace_period_seconds: 1, force: false },
      admin(),
    );
    expect(started).toMatchObject({ phase: "init", mode: "auto" });
    expect(started.next_phase_at).not.toBe("");
    // Polled: the loop runs every 2 s; reaching update_servers means two automatic steps.
    const deadline = Date.now() + 30_000;
    let phase = "init";
    while (Date.now() < deadline && phase !== "update_servers") {
      await new Promise((r) => setTimeout(r, 250));
      phase =
        (await callUnary(client, "ListCertAuthorities", {}, admin())).authorities.find(
          (a) => a.type === "app",
        )?.phase ?? "";
    }
    expect(phase).toBe("update_servers");
    const events = await callUnary(
      client,
      "SearchAuditEvents",
      { type: "ca.rotated", user: "", limit: 100, offset: 0 },
      admin(),
    );
    const app = events.items.filter((e) => JSON.parse(e.fields_json || "{}").type === "app");
    const auto = app.map((e) => JSON.parse(e.fields_json)).filter((f) => f.who === "auth:automatic-rotation");
    expect(auto.map((f) => f.to)).toEqual(expect.arrayContaining(["update_clients", "update_servers"]));
    expect(app.some((e) => JSON.parse(e.fields_json).who === "user:admin")).toBe(true);
    // A manual command takes over.
    await rotate("app", "standby", true);
  });

  it("AuthenticateSPIFFE accepts an SVID of the old SPIFFE CA until the rotation ends", async () => {
    const td = platform.data.config.cluster_name;
    await writeFile(
      join(platform.data.paths.manifests, "ci-role.yaml"),
      [
        `apiVersion: ${API_VERSION}`,
        "kind: Role",
        "metadata: { name: ci }",
        "spec:",
        "  allow: { logins: [root], workload_spiffe_ids: [/role/ci/*] }",
        "",
      ].join("\n"),
    );
    const svid = async () => {
      const k = generateEcdsaP256();
      const pem = await issueSpiffeSvid(replica.spiffeCa, {
        publicKey: k.publicKey,
        spiffeId: `spiffe://${td}/role/ci/build`,
        trustDomain: td,
        clock,
      });
      return { pem, key: k.privateKey };
    };
    const authenticate = async (s: { pem: string; key: KeyObject }) => {
      const ssh = generateSshKeyPair("ed25519");
      const at = Date.now();
      return callUnary(client, "AuthenticateSPIFFE", {
        x509_svid_chain_pem: s.pem,
        ssh_public_key: ssh.publicLine,
        ttl_seconds: 0,
        proof_signature: sign("sha256", spiffeProofMessage(td, ssh.publicLine, at), s.key),
        proof_unix_ms: at,
      });
    };
    const before = await svid();
    // The folder source picks the role up within its polling interval.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await authenticate(before).catch((err: unknown) => err as Error);
      if (!(r instanceof Error)) break;
      if (Date.now() > deadline) throw r;
      await new Promise((res) => setTimeout(res, 200));
    }
    await rotate("spiffe", "init");
    await rotate("spiffe", "update_clients");
    const after = await svid();
    expect((await authenticate(before)).role).toBe("ci");
    expect((await authenticate(after)).role).toBe("ci");
    await rotate("spiffe", "update_servers");
    await rotate("spiffe", "standby", true);
    expect((await refusal(authenticate(before))).code).toBe("not_authenticated");
    expect((await authenticate(after)).role).toBe("ci");
  });

  it("svcctl export (offline) lists every trusted key during a rotation", async () => {
    await rotate("user_ssh", "init");
    await rotate("host_x509", "init");
    const keys = await published();
    const env = { SVC_HOME: dir };
    const userCa = await run("svcctl", ["export", "--type", "user-ca", "--data-dir", platform.data.root], {
      env,
    });
    expect(userCa.code, userCa.stderr).toBe(0);
    expect(userCa.stdout.trim().split("\n")).toEqual(keys.user_ca_ssh_public_keys.map((k) => k.trim()));
    const hostCa = await run(
      "svcctl",
      ["export", "--type", "host-ca", "--json", "--data-dir", platform.data.root],
      {
        env,
      },
    );
    expect(hostCa.code, hostCa.stderr).toBe(0);
    const j = JSON.parse(hostCa.stdout) as { tls_ca_pem: string };
    expect(pemBody(j.tls_ca_pem)).toBe(keys.host_ca_pems.map(pemBody).join(""));
    await rotate("user_ssh", "rollback");
    await rotate("user_ssh", "standby");
    await rotate("host_x509", "rollback");
    await rotate("host_x509", "standby");
    expect((await published()).user_ca_ssh_public_keys).toHaveLength(1);
  });

  it("the operator's client to auth follows a host_x509 rotation (new trust, a certificate of the new key)", async () => {
    const caDir = platform.data.paths.ca;
    const operator = () =>
      new OperatorAuthClient({
        address: platform.authAddress,
        serverName: "localhost",
        caStore: new FileCaKeyStore(caDir),
        rotationStore: new FileRotationStateStore(caDir),
        clusterName: platform.data.config.cluster_name,
        trustDomain: platform.data.config.cluster_name,
        name: "op-1",
        clock,
      });
    const before = operator();
    try {
      expect(await before.redemption("no-such-token")).toBeUndefined();
      await rotate("host_x509", "init");
      await rotate("host_x509", "update_clients");
      await rotate("host_x509", "update_servers");
      await rotate("host_x509", "standby", true);
      await published();
      // Its open connection keeps working; a new connection must trust the new CA and present a
      // certificate of the new key, since the old CA is gone everywhere.
      expect(await before.redemption("no-such-token")).toBeUndefined();
    } finally {
      before.close();
    }
    const after = operator();
    try {
      expect(await after.redemption("no-such-token")).toBeUndefined();
    } finally {
      after.close();
    }
  });

  it("svcctl ca status and rotate as an admin types them", async () => {
    const env = { SVC_HOME: join(dir, "admin-home") };
    const proxy = new URL(platform.proxyUrl).host;
    const login = await run(
      "svc",
      [
        "login",
        "--proxy",
        proxy,
        "--ca",
        join(platform.data.root, "host-ca.pem"),
        "--user",
        "admin",
        "--password-file",
        join(dir, "pw"),
      ],
      { env },
    );
    expect(login.code, login.stderr).toBe(0);
    const svcctl = (args: string[]) => run("svcctl", ["--auth", platform.authAddress, ...args], { env });
    const started = await svcctl(["ca", "rotate", "--type", "jwt", "--phase", "init", "--json"]);
    expect(started.code, started.stderr).toBe(0);
    expect(JSON.parse(started.stdout)).toMatchObject({ type: "jwt", phase: "init", mode: "manual" });
    const status = await svcctl(["ca", "status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^jwt\s+init\s+manual\s+active:\S+ next:\S+/m);
    const skipped = await svcctl(["ca", "rotate", "--type", "jwt", "--phase", "update_servers"]);
    expect(skipped.code).toBe(1);
    expect(skipped.stderr).toContain("the next phase is update_clients");
    const back = await svcctl(["ca", "rotate", "--type", "jwt", "--phase", "rollback"]);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain("jwt: phase rollback (manual)");
    expect((await svcctl(["ca", "rotate", "--type", "jwt", "--phase", "standby"])).code).toBe(0);
  });

  it("svcctl ca: --help, and a rotation without a phase is a usage error", async () => {
    const help = await run("svcctl", ["ca", "rotate", "--help"], { env: { SVC_HOME: dir } });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--phase");
    expect(help.stdout).toContain("--auto");
    const usage = await run("svcctl", ["ca", "rotate", "--type", "user_ssh"], { env: { SVC_HOME: dir } });
    expect(usage.code).toBe(2);
    const badType = await run("svcctl", ["ca", "rotate", "--type", "nope", "--phase", "init"], {
      env: { SVC_HOME: dir },
    });
    expect(badType.code).toBe(2);
  });
});
