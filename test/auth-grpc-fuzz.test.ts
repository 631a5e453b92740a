// Every RPC of svc.v1.AuthService called with bad request messages generated from the proto
// descriptors (test/grpc-fuzz-cases.ts: boundaries, wrong wire types, truncations, random bytes;
// fixed seed, bounded count) by a real grpc-js client sending raw bytes, anonymously, as an admin,
// as a joined node agent and as a bot, against auth assembled as `svcd start` does it (every
// handler wired: joins, bots, SPIFFE, admin writes; SQLite, in-memory resources). Every call must
// end with a status before its deadline, never UNKNOWN or INTERNAL (bad input is the caller's
// mistake), and auth must keep answering health checks. Also the message size limit, exactly at
// and one byte past.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import { systemClock as clock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import { caPin } from "../server/agent/ca-pin.ts";
import { joinCluster } from "../server/agent/join.ts";
import { type AuthRole, startAuthRole } from "../server/assemble-auth.ts";
import { AUTHZ_TABLE } from "../server/auth/authz.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { joinSecretHash } from "../server/auth/join-agent.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { AUTH_SERVICE_NAME, authPackageDefinition, MAX_REQUEST_BYTES } from "../server/auth/proto.ts";
import { authClientCredentials } from "../server/auth/tls.ts";
import { defaultConfig } from "../server/config.ts";
import { issueServerIdentity } from "../server/wiring.ts";
import { silent } from "./agent-fixture.ts";
import { PASSWORD, testResources } from "./auth-fixture.ts";
import { FuzzCaseGenerator, type MessageDescriptor, prng } from "./grpc-fuzz-cases.ts";

const SEED = 12;
/** Random-byte messages per RPC (the other cases follow from the fields). */
const RANDOM_PER_RPC = 8;
const DEADLINE_MS = 20_000;
const IN_FLIGHT = 8;
/** Statuses that mean auth failed on bad input (or never answered). */
const REFUSED = new Set([status.UNKNOWN, status.INTERNAL, status.DEADLINE_EXCEEDED, status.UNAVAILABLE]);

interface MethodDef {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestType: { type: MessageDescriptor };
}

const methods = Object.entries(
  authPackageDefinition[AUTH_SERVICE_NAME] as unknown as Record<string, MethodDef>,
).map(([name, m]) => ({ name, ...m }));

let dir = "";
let backend: SqliteBackend;
let source: MemorySource;
let cas: CertificateAuthorities;
let auth: AuthRole;
let address = "";
let raw: Client;
/** A client with a joined node's certificate (agent caller). */
let rawAgent: Client;
let agentId = "";
/** A client with a bot's certificate (bot caller: IssueWorkloadSVID). */
let rawBot: Client;

const pass = (b: Buffer): Buffer => b;

/** One call with raw request bytes; resolves with its final status. */
function callRaw(
  m: MethodDef,
  bytes: Buffer,
  md: Metadata,
  client: Client = raw,
): Promise<{ code: number; details: string }> {
  const deadline = Date.now() + DEADLINE_MS;
  return new Promise((resolve) => {
    const done = (err: ServiceError | null) =>
      resolve(err ? { code: err.code, details: err.details } : { code: status.OK, details: "" });
    if (!m.requestStream && !m.responseStream) {
      client.makeUnaryRequest(m.path, pass, pass, bytes, md, { deadline }, (err) => done(err));
      return;
    }
    if (m.requestStream && !m.responseStream) {
      const call = client.makeClientStreamRequest(m.path, pass, pass, md, { deadline }, (err) => done(err));
      call.write(bytes);
      call.end();
      return;
    }
    const call = m.requestStream
      ? client.makeBidiStreamRequest(m.path, pass, pass, md, { deadline })
      : client.makeServerStreamRequest(m.path, pass, pass, bytes, md, { deadline });
    // A stream that answers has handled the request: a watch (WatchTrust) never ends by itself.
    call.on("data", () => {
      resolve({ code: status.OK, details: "" });
      call.cancel();
    });
    call.on("error", () => undefined);
    call.on("status", (s: { code: number; details: string }) =>
      resolve({ code: s.code, details: s.details }),
    );
    if (m.requestStream) {
      const duplex = call as unknown as { write(b: Buffer): void; end(): void };
      duplex.write(bytes);
      duplex.end();
    }
  });
}

/** grpc.health.v1 Check of the auth service; "SERVING" when the answer is status 1. */
function serving(): Promise<string> {
  const name = Buffer.from(AUTH_SERVICE_NAME);
  const req = Buffer.concat([Buffer.from([0x0a, name.length]), name]);
  return new Promise((resolve, reject) =>
    raw.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      pass,
      pass,
      req,
      new Metadata(),
      { deadline: Date.now() + 5000 },
      (err, res) =>
        err ? reject(err) : resolve(res?.equals(Buffer.from([0x08, 0x01])) ? "SERVING" : "other"),
    ),
  );
}

/** An admin session of alice (preset admin role) through the typed client. */
async function login(): Promise<string> {
  const c = createAuthClient({ address, caPems: [cas.hostCa.certPem], serverName: "localhost" });
  try {
    const r = await callUnary(c, "AuthenticateLocal", { username: "alice", password: PASSWORD });
    return r.session?.session_id ?? "";
  } finally {
    c.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-grpc-fuzz-"));
  cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
    clusterName: "test",
    trustDomain: "test.svc",
    clock,
  });
  backend = new SqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 });
  source = new MemorySource(testResources());
  await setPassword(backend, "alice", PASSWORD);
  auth = await startAuthRole({
    config: defaultConfig({ clusterName: "test", publicHost: "localhost" }),
    cas,
    backend,
    source,
    writer: source,
    clock,
    logger: silent,
    tls: await issueServerIdentity(cas, { commonName: "auth", hosts: [], clock }),
    listen: { host: "127.0.0.1", port: 0 },
  });
  address = `127.0.0.1:${auth.server.port}`;
  const credentials = authClientCredentials({ caPems: [cas.hostCa.certPem] });
  // No client-side limits: oversized requests must reach auth's own check.
  const options = {
    "grpc.ssl_target_name_override": "localhost",
    "grpc.max_send_message_length": -1,
    "grpc.max_receive_message_length": -1,
  };
  raw = new Client(address, credentials, options);
  // A real node: joined with a token, calling with its own certificate.
  const secret = randomBytes(24).toString("base64url");
  await source.apply({
    apiVersion: API_VERSION,
    kind: "JoinToken",
    metadata: { name: "fuzz-node" },
    spec: {
      roles: ["node"],
      join_method: "token",
      secret_hash: joinSecretHash(secret),
      expires: new Date(Date.now() + 3600_000).toISOString(),
    },
  } as never);
  const node = await joinCluster({
    authAddress: address,
    authServerName: "localhost",
    caPin: caPin(cas.hostCa.certPem),
    token: `fuzz-node.${secret}`,
    hostname: "fuzz-node",
    addresses: ["127.0.0.1:3022"],
    labels: {},
  });
  agentId = node.agentId;
  const agentCredentials = authClientCredentials({
    caPems: node.hostCaPems,
    certPem: node.tlsCertificatePem,
    keyPem: node.tlsKeyPem,
  });
  rawAgent = new Client(address, agentCredentials, options);
  // A real bot: created by the admin, bootstrapped with its one-time token.
  const admin = createAuthClient({ address, caPems: [cas.hostCa.certPem], serverName: "localhost" });
  try {
    const created = await callUnary(
      admin,
      "CreateAgentIdentity",
      { name: "fuzz-bot", roles: ["access"], cert_ttl: "", allow_workload_svids: true },
      userMetadata(await login()),
    );
    const tls = generateEcdsaP256();
    const bot = await callUnary(admin, "BootstrapAgentIdentity", {
      token: created.token,
      ssh_public_key: generateSshKeyPair("ed25519").publicLine,
      tls_public_key_pem: String(tls.publicKey.export({ format: "pem", type: "spki" })),
    });
    const botCredentials = authClientCredentials({
      caPems: [cas.hostCa.certPem],
      certPem: bot.tls_certificate_pem,
      keyPem: privateKeyToPem(tls.privateKey),
    });
    rawBot = new Client(address, botCredentials, options);
  } finally {
    admin.close();
  }
}, 60_000);

afterAll(async () => {
  raw?.close();
  rawAgent?.close();
  rawBot?.close();
  await auth?.close();
  await backend?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("auth gRPC under generated bad input", () => {
  it("answers every generated request of every RPC with a status: anonymous, admin, node, bot", async () => {
    const started = Date.now();
    const failures: string[] = [];
    const counts = new Map<number, number>();
    let total = 0;
    for (const caller of ["anonymous", "admin", "agent", "bot"] as const) {
      // The same seed for both callers: the same bytes, a different credential.
      const gen = new FuzzCaseGenerator(authPackageDefinition, "svc.v1", SEED);
      let session = caller === "admin" ? await login() : undefined;
      for (const m of methods) {
        // DeleteSession with any request ends the caller's own session: the next RPC gets a new one.
        if (session !== undefined && methods[methods.indexOf(m) - 1]?.name === "DeleteSession")
          session = await login();
        const md = () =>
          session
            ? userMetadata(session)
            : caller === "agent"
              ? agentMetadata(agentId)
              : caller === "bot"
                ? agentMetadata("fuzz-bot")
                : new Metadata();
        const client = caller === "agent" ? rawAgent : caller === "bot" ? rawBot : raw;
        const cases = gen.casesFor(m.requestType.type, RANDOM_PER_RPC);
        // Each RPC in full by the caller kind it is for (anonymous for the open ones, the admin
        // for user and admin RPCs, the node for its own); other callers get a sample (mostly
        // refused by the interceptor, or the same handler path again).
        const callers = AUTHZ_TABLE[m.name]?.callers ?? [];
        const open = callers.includes("anonymous");
        const full =
          caller === "anonymous" ? open : !open && callers.includes(caller === "admin" ? "user" : caller);
        const sent = full ? cases : cases.filter((_, i) => i % 8 === 0);
        // A few calls in flight at once, as real clients do; each still ends on its own deadline.
        for (let i = 0; i < sent.length; i += IN_FLIGHT) {
          const batch = sent.slice(i, i + IN_FLIGHT);
          const results = await Promise.all(batch.map((c) => callRaw(m, c.bytes, md(), client)));
          results.forEach((s, j) => {
            total++;
            counts.set(s.code, (counts.get(s.code) ?? 0) + 1);
            if (REFUSED.has(s.code))
              failures.push(
                `${caller} ${m.name} [${batch[j]?.name}] -> ${status[s.code]}: ${s.details.slice(0, 200)}`,
              );
          });
        }
      }
    }
    const summary = [...counts].map(([code, n]) => `${status[code]}=${n}`).join(" ");
    console.log(`gRPC fuzz: seed ${SEED}, ${total} calls in ${Date.now() - started} ms: ${summary}`);
    expect(failures).toEqual([]);
    expect(await serving()).toBe("SERVING");
  }, 240_000);

  it("answers random bytes to health and reflection with INVALID_ARGUMENT, not INTERNAL", async () => {
    const rand = prng(SEED);
    const bytes = () => Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 64) }, () => rand() * 256));
    const others: MethodDef[] = [
      { path: "/grpc.health.v1.Health/Check", requestStream: false, responseStream: false } as MethodDef,
      {
        path: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        requestStream: true,
        responseStream: true,
      } as MethodDef,
    ];
    const seen: string[] = [];
    for (const m of others) {
      for (let i = 0; i < 20; i++) {
        const s = await callRaw(m, bytes(), new Metadata());
        if (REFUSED.has(s.code)) seen.push(`${m.path} -> ${status[s.code]}: ${s.details}`);
      }
    }
    expect(seen).toEqual([]);
    expect(await serving()).toBe("SERVING");
  });

  it("takes a request of exactly the maximum size and refuses one byte more with RESOURCE_EXHAUSTED", async () => {
    const m = methods.find((x) => x.name === "GetClusterInfo") as MethodDef;
    // Unknown field 15, length-delimited: decoders skip it, so only the size decides.
    const sized = (total: number): Buffer => {
      const header = (n: number) => {
        const out = [0x7a]; // field 15, wire type 2
        let v = n;
        while (v > 0x7f) {
          out.push((v & 0x7f) | 0x80);
          v >>>= 7;
        }
        out.push(v);
        return Buffer.from(out);
      };
      // The length prefix of a 4 MiB payload takes 4 bytes: 1 tag + 4 length + payload.
      const payload = total - header(total).length;
      const h = header(payload);
      expect(h.length + payload).toBe(total);
      return Buffer.concat([h, Buffer.alloc(payload, 0x61)]);
    };
    const md = () => new Metadata();
    expect((await callRaw(m, sized(MAX_REQUEST_BYTES), md())).code).toBe(status.OK);
    const over = await callRaw(m, sized(MAX_REQUEST_BYTES + 1), md());
    expect(status[over.code]).toBe("RESOURCE_EXHAUSTED");
    expect(await serving()).toBe("SERVING");
  }, 60_000);
});
