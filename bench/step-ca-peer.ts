// The Go peer of bench/certs-peer.bench.ts: step-ca (github.com/smallstep/certificates) at the
// version pinned in scripts/tools/versions.env, built into the tool cache by
// scripts/tools/bench/step-ca.sh (never by provisioning: only this benchmark needs it). Here: find the
// binary, configure and start it, and a client for its SSH certificate endpoint.
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { accessSync, constants } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { connect } from "node:http2";
import { createServer } from "node:net";
import { join } from "node:path";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { sshPublicKeyBlob } from "../core/certs/ssh-keys.ts";
import { createRootCa, generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { toolCacheDir, toolVersions } from "../test/harness/tools.ts";
/** A client of a started step-ca: what the load thread needs (structured-cloneable). */
export interface StepCaClientJob {
  url: string;
  rootPem: string;
  provisioner: string;
  /** the provisioner's private JWK (ES256), with its kid */
  jwk: JWK;
  /** the key id (and token subject) and principals each certificate asks for */
  keyId: string;
  principals: string[];
  /** the user's public key, authorized_keys line */
  publicLine: string;
}

/**
 * One call per certificate: mints a one-time token as `step ssh certificate` does for a JWK
 * provisioner (ES256 JWT, "step.ssh" claims, audience /1.0/ssh/sign, a fresh jti) and POSTs it
 * with the public key over one HTTP/2 TLS connection. Resolves to the certificate's wire blob.
 */
export async function stepCaClient(
  job: StepCaClientJob,
): Promise<{ one: () => Promise<Buffer>; close: () => void }> {
  const session = connect(job.url, { ca: job.rootPem });
  session.on("error", () => {});
  const key = await importJWK(job.jwk, "ES256");
  const keyBlob = job.publicLine.split(" ")[1] ?? "";
  const audience = `${job.url}/1.0/ssh/sign`;
  const one = async (): Promise<Buffer> => {
    // A one-time token per certificate, as `step ssh certificate` mints it (JWK provisioner).
    const now = Math.floor(Date.now() / 1000);
    const ott = await new SignJWT({
      step: { ssh: { certType: "user", keyID: job.keyId, principals: job.principals } },
    })
      .setProtectedHeader({ alg: "ES256", kid: job.jwk.kid ?? "", typ: "JWT" })
      .setIssuer(job.provisioner)
      .setSubject(job.keyId)
      .setAudience(audience)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + 300)
      .sign(key);
    // The validity is the provisioner's default (startStepCa's ttlSeconds).
    const body = JSON.stringify({ publicKey: keyBlob, ott });
    return new Promise<Buffer>((resolve, reject) => {
      const req = session.request({
        ":method": "POST",
        ":path": "/1.0/ssh/sign",
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      let status = 0;
      const chunks: Buffer[] = [];
      req.on("response", (h) => {
        status = Number(h[":status"]);
      });
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("error", reject);
      req.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if (status !== 201) return reject(new Error(`step-ca answered ${status}: ${text.slice(0, 300)}`));
        const crt = (JSON.parse(text) as { crt?: unknown }).crt;
        if (typeof crt !== "string") return reject(new Error("step-ca answered no crt"));
        resolve(Buffer.from(crt, "base64"));
      });
      req.end(body);
    });
  };
  return { one, close: () => session.close() };
}

/** The step-ca binary scripts/tools/bench/step-ca.sh builds, or a clear error saying how to build it. */
export function stepCaBinary(env: NodeJS.ProcessEnv = process.env): string {
  const version = toolVersions()["STEP_CA_VERSION"];
  if (!version) throw new Error("STEP_CA_VERSION is missing from scripts/tools/versions.env");
  const path = join(toolCacheDir(env), `step-ca-${version}`, "bin", "step-ca");
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `step-ca ${version} is not built (looked for ${path}): run scripts/tools/bench/step-ca.sh once ` +
        "(builds it from the Go module proxy with CGO_ENABLED=0, about 2 minutes; needs Go), then run this bench again",
    );
  }
  return path;
}

/** Waits until step-ca answers GET /health over TLS. */
async function stepCaHealthy(
  url: string,
  rootPem: string,
  child: ChildProcess,
  log: () => string,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`step-ca exited (${child.exitCode}):\n${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(url, { ca: rootPem });
      s.on("error", () => resolve(false));
      const req = s.request({ ":path": "/health" });
      req.on("response", (h) => {
        resolve(h[":status"] === 200);
        s.close();
      });
      req.on("error", () => resolve(false));
      req.end();
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`step-ca did not answer /health in 60 s:\n${log()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface StepCa {
  url: string;
  rootPem: string;
  provisioner: string;
  jwk: JWK;
  userCaBlob: string;
  child: ChildProcess;
}

/**
 * Starts step-ca from `bin` with a ca.json written into `dir` (which it also uses for its badger
 * database): an ECDSA P-256 X.509 root for its TLS, Ed25519 SSH user and host CA keys, and one
 * JWK provisioner with the SSH CA enabled whose user certificates last `ttlSeconds` by default.
 * No `step` CLI is needed: the keys and the provisioner are made here.
 */
export async function startStepCa(
  bin: string,
  dir: string,
  port: number,
  ttlSeconds: number,
): Promise<StepCa> {
  // X.509 root for step-ca's own TLS (it issues its serving certificate from it at start).
  const root = generateEcdsaP256();
  const rootPem = await createRootCa({
    privateKey: root.privateKey,
    commonName: "bench step-ca root",
    clock: systemClock,
  });
  await writeFile(join(dir, "root.crt"), rootPem);
  await writeFile(join(dir, "root.key"), privateKeyToPem(root.privateKey), { mode: 0o600 });
  // SSH CAs: Ed25519, as ours.
  const userCa = generateKeyPairSync("ed25519");
  const hostCa = generateKeyPairSync("ed25519");
  await writeFile(join(dir, "ssh_user_ca_key"), privateKeyToPem(userCa.privateKey), { mode: 0o600 });
  await writeFile(join(dir, "ssh_host_ca_key"), privateKeyToPem(hostCa.privateKey), { mode: 0o600 });
  // The JWK provisioner's key (ES256, what `step ca init` makes); its private half stays here.
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  const { d: _secret, ...publicJwk } = jwk;
  const provisioner = "bench";
  const config = {
    root: join(dir, "root.crt"),
    crt: join(dir, "root.crt"),
    key: join(dir, "root.key"),
    address: `127.0.0.1:${port}`,
    dnsNames: ["127.0.0.1", "localhost"],
    logger: { format: "text" },
    db: { type: "badgerv2", dataSource: join(dir, "db") },
    ssh: { hostKey: join(dir, "ssh_host_ca_key"), userKey: join(dir, "ssh_user_ca_key") },
    authority: {
      provisioners: [
        {
          type: "JWK",
          name: provisioner,
          key: { ...publicJwk, use: "sig", alg: "ES256", kid },
          claims: {
            enableSSHCA: true,
            minUserSSHCertDuration: "1m",
            defaultUserSSHCertDuration: `${ttlSeconds}s`,
          },
        },
      ],
    },
    tls: { minVersion: 1.2, maxVersion: 1.3, renegotiation: false },
  };
  await mkdir(join(dir, "db"));
  await writeFile(join(dir, "ca.json"), JSON.stringify(config, null, 2));
  let log = "";
  const child = spawn(bin, [join(dir, "ca.json")], { stdio: ["ignore", "ignore", "pipe"] });
  // step-ca logs every request; only the start-up part is kept for errors.
  child.stderr?.on("data", (c: Buffer) => {
    if (log.length < 20_000) log += c.toString();
  });
  const url = `https://127.0.0.1:${port}`;
  await stepCaHealthy(url, rootPem, child, () => log);
  const userCaBlob = sshPublicKeyBlob(userCa.publicKey).toString("base64");
  return { url, rootPem, provisioner, jwk: { ...jwk, kid }, userCaBlob, child };
}

export async function freeLocalPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}
