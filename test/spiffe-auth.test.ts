// Workload SSH auth over the real auth server: a bot mints an X.509-SVID for a workload it serves
// (IssueWorkloadSVID), the workload trades it for an SSH certificate (AuthenticateSPIFFE) that a
// real sshd accepts; each refusal (wrong trust domain, expired, unknown role, another CA, a path
// the role does not allow, no proof of possession) is checked on the wire.
import { execFile } from "node:child_process";
import { createPublicKey, type KeyObject, sign } from "node:crypto";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import {
  createRootCa,
  generateEcdsaP256,
  issueSpiffeSvid,
  privateKeyToPem,
  verifySpiffeSvid,
  type X509Issuer,
} from "../core/certs/x509.ts";
import { ManualClock, systemClock } from "../core/clock.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { agentMetadata, callUnary, userMetadata } from "../server/auth/client.ts";
import { spiffeProofMessage } from "../server/auth/spiffe.ts";
import { statusOf } from "./auth-fixture.ts";
import { addBot, CLUSTER, type MachineEnv, startMachineEnv } from "./bot-fixture.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";

const exec = promisify(execFile);

let env: MachineEnv;
let sshd: RunningSshd | undefined;
let minter: AuthServiceClient;

function keys() {
  const k = generateEcdsaP256();
  return {
    privateKey: k.privateKey,
    publicPem: k.publicKey.export({ format: "pem", type: "spki" }).toString(),
  };
}

/** Boots a bot and returns a client presenting its certificate. */
async function botClient(name: string, allowWorkloadSvids: boolean): Promise<AuthServiceClient> {
  const token = await addBot(env, { name, roles: ["bot-ssh"], allowWorkloadSvids });
  const ssh = generateSshKeyPair("ed25519");
  const tls = keys();
  const creds = await callUnary(env.client, "BootstrapAgentIdentity", {
    token,
    ssh_public_key: ssh.publicLine,
    tls_public_key_pem: tls.publicPem,
  });
  return env.clientWith({ certPem: creds.tls_certificate_pem, keyPem: privateKeyToPem(tls.privateKey) });
}

/** AuthenticateSPIFFE as a workload holding `svid` and `key`; returns the SSH key pair too. */
function authenticate(
  svidPem: string,
  key: KeyObject,
  o: { proofAt?: number; signWith?: KeyObject } = {},
): Promise<{ cert: string; role: string; spiffeId: string; ssh: ReturnType<typeof generateSshKeyPair> }> {
  const ssh = generateSshKeyPair("ed25519");
  const at = o.proofAt ?? Date.now();
  const proof = sign("sha256", spiffeProofMessage(CLUSTER, ssh.publicLine, at), o.signWith ?? key);
  return callUnary(env.client, "AuthenticateSPIFFE", {
    x509_svid_chain_pem: svidPem,
    ssh_public_key: ssh.publicLine,
    ttl_seconds: 0,
    proof_signature: proof,
    proof_unix_ms: at,
  }).then((r) => ({ cert: r.ssh_certificate, role: r.role, spiffeId: r.spiffe_id, ssh }));
}

/** An SVID straight from an issuer (for the refusal cases a bot would never be given). */
async function svidFrom(issuer: X509Issuer, spiffeId: string, trustDomain: string, clock = systemClock) {
  const k = keys();
  const pem = await issueSpiffeSvid(issuer, {
    publicKey: createPublicKey(k.publicPem),
    spiffeId,
    trustDomain,
    clock,
    ttlSeconds: 600,
  });
  return { pem, key: k.privateKey };
}

beforeAll(async () => {
  env = await startMachineEnv();
  minter = await botClient("minter", true);
});
afterAll(async () => {
  await sshd?.stop();
  await env?.close();
});

describe("IssueWorkloadSVID", () => {
  it("gives a bot with allow_workload_svids an X.509-SVID for a path its roles allow", async () => {
    const k = keys();
    const r = await callUnary(
      minter,
      "IssueWorkloadSVID",
      { spiffe_path: "/role/ci/build", tls_public_key_pem: k.publicPem, jwt_audiences: [], ttl_seconds: 0 },
      agentMetadata("minter"),
    );
    expect(r.spiffe_id).toBe(`spiffe://${CLUSTER}/role/ci/build`);
    expect(r.spiffe_ca_pems).toEqual([env.cas.spiffeCa.certPem]);
    const v = await verifySpiffeSvid(r.x509_svid_pem, r.spiffe_ca_pems, {
      clock: systemClock,
      trustDomain: CLUSTER,
    });
    expect(v.path).toBe("/role/ci/build");
    expect(r.jwt_svid).toBe("");
  });

  it("refuses a bot without allow_workload_svids, a path its roles do not allow, and non-bots", async () => {
    const plain = await botClient("plain", false);
    const req = {
      spiffe_path: "/role/ci/build",
      tls_public_key_pem: keys().publicPem,
      jwt_audiences: [],
      ttl_seconds: 0,
    };
    const a = await statusOf(callUnary(plain, "IssueWorkloadSVID", req, agentMetadata("plain")));
    expect(a).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("may not request"),
    });
    const b = await statusOf(
      callUnary(
        minter,
        "IssueWorkloadSVID",
        { ...req, spiffe_path: "/role/no-logins/x" },
        agentMetadata("minter"),
      ),
    );
    expect(b).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("do not allow"),
    });
    const c = await statusOf(callUnary(env.client, "IssueWorkloadSVID", req));
    expect(c.code).toBe(status.UNAUTHENTICATED);
    const admin = await statusOf(
      callUnary(env.client, "IssueWorkloadSVID", req, userMetadata(await env.adminSession())),
    );
    expect(admin.code).toBe(status.PERMISSION_DENIED);
  });
});

describe("AuthenticateSPIFFE", () => {
  let svidPem: string;
  let svidKey: KeyObject;

  beforeAll(async () => {
    const k = keys();
    const r = await callUnary(
      minter,
      "IssueWorkloadSVID",
      { spiffe_path: "/role/ci/deploy", tls_public_key_pem: k.publicPem, jwt_audiences: [], ttl_seconds: 0 },
      agentMetadata("minter"),
    );
    svidPem = r.x509_svid_pem;
    svidKey = k.privateKey;
  });

  it("trades the SVID for a short-lived SSH certificate scoped to the role in the path", async () => {
    const r = await authenticate(svidPem, svidKey);
    expect(r.role).toBe("ci");
    expect(r.spiffeId).toBe(`spiffe://${CLUSTER}/role/ci/deploy`);
    const cert = parseSshCertificate(r.cert);
    expect(cert.keyId).toBe(`workload:spiffe://${CLUSTER}/role/ci/deploy`);
    expect(cert.principals).toEqual(["root"]);
    const life = cert.validBefore.getTime() - Date.now();
    expect(life).toBeGreaterThan(0);
    expect(life).toBeLessThanOrEqual(10 * 60_000);
    const events = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "spiffe.auth", user: `workload:${r.spiffeId}`, limit: 5, offset: 0 },
      userMetadata(await env.adminSession()),
    );
    expect(events.items[0]).toMatchObject({ success: true });

    sshd = await startSshd({ trustedUserCaKeys: [env.cas.sshUserCaPublicKey] });
    const key = join(env.dir, "workload_key");
    await writeFile(key, r.ssh.privateOpenSsh, { mode: 0o600 });
    await chmod(key, 0o600);
    await writeFile(`${key}-cert.pub`, `${r.cert}\n`);
    const { stdout } = await exec(
      "ssh",
      [
        ...[
          "-F",
          "/dev/null",
          "-i",
          key,
          "-o",
          `CertificateFile=${key}-cert.pub`,
          "-o",
          "IdentitiesOnly=yes",
        ],
        ...["-o", "IdentityAgent=none", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20"],
        ...["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"],
        ...["-p", String(sshd.port), `root@${sshd.host}`, "echo", "workload-ok"],
      ],
      { timeout: 45_000 },
    );
    expect(stdout.trim()).toBe("workload-ok");
  });

  it("refuses an SVID from another trust domain", async () => {
    const s = await svidFrom(env.cas.spiffeCa, "spiffe://other.test/role/ci/build", "other.test");
    const r = await statusOf(authenticate(s.pem, s.key));
    expect(r).toMatchObject({ code: status.UNAUTHENTICATED, details: "SVID is from another trust domain" });
  });

  it("refuses an expired SVID", async () => {
    const past = new ManualClock(new Date(Date.now() - 2 * 3600_000));
    const s = await svidFrom(env.cas.spiffeCa, `spiffe://${CLUSTER}/role/ci/build`, CLUSTER, past);
    const r = await statusOf(authenticate(s.pem, s.key));
    expect(r).toMatchObject({ code: status.UNAUTHENTICATED, details: "certificate has expired" });
  });

  it("refuses an SVID whose role does not exist", async () => {
    const s = await svidFrom(env.cas.spiffeCa, `spiffe://${CLUSTER}/role/ghost/x`, CLUSTER);
    const r = await statusOf(authenticate(s.pem, s.key));
    expect(r).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: "workload role ghost does not exist",
    });
  });

  it("refuses an SVID from another CA", async () => {
    const k = generateEcdsaP256();
    const other: X509Issuer = {
      certPem: await createRootCa({
        privateKey: k.privateKey,
        commonName: `${CLUSTER} SPIFFE CA`,
        clock: systemClock,
      }),
      privateKey: k.privateKey,
    };
    const s = await svidFrom(other, `spiffe://${CLUSTER}/role/ci/build`, CLUSTER);
    const r = await statusOf(authenticate(s.pem, s.key));
    expect(r).toMatchObject({
      code: status.UNAUTHENTICATED,
      details: "certificate is not signed by a trusted CA",
    });
  });

  it("refuses a path the role does not allow, a path outside the convention, and a role without logins", async () => {
    for (const [path, details] of [
      ["/role/bot-ssh/x", "role bot-ssh does not allow workload /role/bot-ssh/x"],
      ["/svc/ci/build", "the SVID's path does not name a workload role (/role/<role>/...)"],
      ["/role/no-logins/x", "role no-logins grants no logins"],
    ] as const) {
      const s = await svidFrom(env.cas.spiffeCa, `spiffe://${CLUSTER}${path}`, CLUSTER);
      expect(await statusOf(authenticate(s.pem, s.key))).toEqual({ code: status.PERMISSION_DENIED, details });
    }
  });

  it("refuses a presented SVID without proof of its key (copied certificate, stale proof)", async () => {
    const copied = await statusOf(authenticate(svidPem, svidKey, { signWith: keys().privateKey }));
    expect(copied).toMatchObject({
      code: status.UNAUTHENTICATED,
      details: "the proof is not signed by the SVID's key",
    });
    const stale = await statusOf(authenticate(svidPem, svidKey, { proofAt: Date.now() - 10 * 60_000 }));
    expect(stale.code).toBe(status.UNAUTHENTICATED);
    const failures = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "spiffe.auth", user: `workload:spiffe://${CLUSTER}/role/ci/deploy`, limit: 50, offset: 0 },
      userMetadata(await env.adminSession()),
    );
    expect(failures.items.filter((e) => e.success === false).length).toBeGreaterThanOrEqual(2);
  });
});
