// The world the trust attacks run against: the embedded platform (`svcd start` in this process:
// auth over TLS 1.3 with its interceptor, SQLite, the folder source, the file CA store and rotation
// state), every log line it writes kept in memory, and the identities an attacker or an unlucky
// operator holds: users with passwords, joined nodes with their own TLS client certificates, a bot
// and the proxy's client certificate.
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import type { ClientReadableStream, Metadata } from "@grpc/grpc-js";
import { pino } from "pino";
import { parse, stringify } from "yaml";
import { generateSshKeyPair, type SshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import type { TrustSnapshot__Output } from "../proto/generated/svc/v1/TrustSnapshot.ts";
import {
  type AuthServiceClient,
  agentMetadata,
  callUnary,
  createAuthClient,
  userMetadata,
} from "../server/auth/client.ts";
import { type RunningPlatform, startEmbedded } from "../server/embedded/start.ts";

const execFileP = promisify(execFile);
const ADMIN_PASSWORD = "trust-attacks-admin-password";
const USER_PASSWORD = "trust-attacks-user-password";

export interface Node {
  id: string;
  hostname: string;
  client: AuthServiceClient;
  md(): Metadata;
}

export interface Watch {
  seen: TrustSnapshot__Output[];
  error(): (Error & { code?: number }) | undefined;
  stream: ClientReadableStream<TrustSnapshot__Output>;
}

export interface AttackWorld {
  platform: RunningPlatform;
  /** verified with the host CA, no client certificate */
  client: AuthServiceClient;
  admin(): Metadata;
  /** every log line the platform wrote so far */
  logs(): string;
  /** a user with role `roles` and a password; answers a fresh session ID */
  addUser(name: string, roles?: string[]): Promise<string>;
  login(name: string): Promise<string>;
  /** a new session of the first admin */
  adminLogin(): Promise<string>;
  userCert(session: string): Promise<{ cert: string; keyId: string; key: SshKeyPair }>;
  joinNode(hostname: string): Promise<Node>;
  /** a client presenting this certificate (and no other credential) */
  clientWith(certPem: string, keyPem: string): AuthServiceClient;
  /** a bot with its own TLS client certificate */
  bot(name: string, roles: string[]): Promise<{ client: AuthServiceClient; sshCert: string }>;
  watch(client: AuthServiceClient, md: Metadata): Watch;
  close(): Promise<void>;
}

export async function startAttackWorld(): Promise<AttackWorld> {
  const dir = await mkdtemp(join(tmpdir(), "svc-trust-attacks-"));
  await writeFile(join(dir, "pw"), `${ADMIN_PASSWORD}\n`);
  let logText = "";
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logText += chunk.toString();
      done();
    },
  });
  const start = () =>
    startEmbedded(
      {
        dataDir: join(dir, "data"),
        authListen: "127.0.0.1:0",
        proxyListen: "127.0.0.1:0",
        diagListen: "127.0.0.1:0",
      },
      { env: { SVC_ADMIN_PASSWORD_FILE: join(dir, "pw") }, logger: pino({ level: "debug" }, sink) },
    );
  // The first start writes the config (and the first admin); the second runs with a 1 s trust
  // keepalive, so what is rechecked at each keepalive is seen within a test's patience.
  const first = await start();
  const configPath = first.data.configPath;
  await first.close();
  const config = parse(await readFile(configPath, "utf8")) as { auth: Record<string, unknown> };
  config.auth.lock_keepalive = "1s";
  await writeFile(configPath, stringify(config));
  const platform = await start();
  const clients: AuthServiceClient[] = [];
  const streams: ClientReadableStream<TrustSnapshot__Output>[] = [];
  const clientWith = (certPem?: string, keyPem?: string): AuthServiceClient => {
    const c = createAuthClient({
      address: platform.authAddress,
      caPems: [platform.hostCaPem],
      serverName: "localhost",
      ...(certPem && keyPem ? { certPem, keyPem } : {}),
    });
    clients.push(c);
    return c;
  };
  const client = clientWith();
  const login = async (username: string, password = USER_PASSWORD): Promise<string> => {
    const r = await callUnary(client, "AuthenticateLocal", { username, password, client_address: "" });
    const id = r.session?.session_id;
    if (!id) throw new Error(`no session for ${username}`);
    return id;
  };
  const adminSession = await login("admin", ADMIN_PASSWORD);
  const admin = () => userMetadata(adminSession);

  return {
    platform,
    client,
    admin,
    logs: () => logText,
    login: (name) => login(name),
    adminLogin: () => login("admin", ADMIN_PASSWORD),
    async addUser(name, roles = ["access"]) {
      const r = await callUnary(client, "CreateUser", { name, roles, logins: [name, "root"] }, admin());
      await callUnary(client, "ResetPassword", { token: r.reset?.token ?? "", new_password: USER_PASSWORD });
      return login(name);
    },
    async userCert(session) {
      const key = generateSshKeyPair("ed25519");
      const r = await callUnary(
        client,
        "IssueUserCerts",
        { ssh_public_key: key.publicLine, ttl_seconds: 600 },
        userMetadata(session),
      );
      return { cert: r.ssh_certificate, keyId: r.key_id, key };
    },
    async joinNode(hostname) {
      const token = await callUnary(client, "CreateJoinToken", { ttl_seconds: 600 }, admin());
      const host = generateSshKeyPair("ed25519");
      const tls = generateEcdsaP256();
      const r = await callUnary(client, "RegisterAgent", {
        token: token.token,
        hostname,
        host_ssh_public_key: host.publicLine,
        tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
        labels: { env: "dev" },
        addresses: ["127.0.0.1:3022"],
      });
      const c = clientWith(r.tls_certificate_pem, privateKeyToPem(tls.privateKey));
      const md = () => agentMetadata(r.agent_id);
      await callUnary(
        c,
        "Heartbeat",
        { hostname, addresses: ["127.0.0.1:3022"], labels: { env: "dev" }, version: "0.1.0" },
        md(),
      );
      return { id: r.agent_id, hostname, client: c, md };
    },
    clientWith: (certPem, keyPem) => clientWith(certPem, keyPem),
    async bot(name, roles) {
      const created = await callUnary(
        client,
        "CreateAgentIdentity",
        { name, roles, cert_ttl: "", allow_workload_svids: false },
        admin(),
      );
      const ssh = generateSshKeyPair("ed25519");
      const tls = generateEcdsaP256();
      const creds = await callUnary(client, "BootstrapAgentIdentity", {
        token: created.token,
        ssh_public_key: ssh.publicLine,
        tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
      });
      return {
        client: clientWith(creds.tls_certificate_pem, privateKeyToPem(tls.privateKey)),
        sshCert: creds.ssh_certificate,
      };
    },
    watch(c, md) {
      const seen: TrustSnapshot__Output[] = [];
      let failure: (Error & { code?: number }) | undefined;
      const stream = c.WatchTrust({}, md);
      streams.push(stream);
      stream.on("data", (s: TrustSnapshot__Output) => seen.push(s));
      stream.on("error", (err: Error) => {
        failure = err;
      });
      return { seen, stream, error: () => failure };
    },
    async close() {
      for (const s of streams) s.cancel();
      for (const c of clients) c.close();
      await platform.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Fresh keys a node renews with (the TLS private key too, to use the answer). */
export const renewKeys = () => {
  const tls = generateEcdsaP256();
  return {
    ssh_public_key: generateSshKeyPair("ed25519").publicLine,
    tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
    tlsKeyPem: privateKeyToPem(tls.privateKey),
  };
};

/** An ssh-rsa public key line of any size (the project's own encoder refuses short RSA keys). */
export function sshRsaLine(bits: number): string {
  const { publicKey } = generateKeyPairSync("rsa", { modulusLength: bits });
  const jwk = publicKey.export({ format: "jwk" });
  const str = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  const mpint = (b64: string | undefined) => {
    const b = Buffer.from(b64 ?? "", "base64url");
    return str((b[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
  };
  const blob = Buffer.concat([str(Buffer.from("ssh-rsa")), mpint(jwk.e), mpint(jwk.n)]);
  return `ssh-rsa ${blob.toString("base64")}`;
}

/** What ssh-keygen -Q says of a certificate against a KRL. */
export async function krlVerdict(dir: string, krl: Buffer, cert: string): Promise<"revoked" | "ok"> {
  const krlFile = join(dir, `krl-${Math.random().toString(36).slice(2)}`);
  const certFile = join(dir, `cert-${Math.random().toString(36).slice(2)}-cert.pub`);
  await writeFile(krlFile, krl);
  await writeFile(certFile, `${cert}\n`);
  try {
    const r = await execFileP("ssh-keygen", ["-Q", "-f", krlFile, certFile]);
    if (!r.stdout.includes(": ok")) throw new Error(`unexpected ssh-keygen output: ${r.stdout}`);
    return "ok";
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    if (e.code === 1 && e.stdout?.includes("REVOKED")) return "revoked";
    throw err;
  }
}
