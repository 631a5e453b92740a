// Auth for bench/fleet.bench.ts, in a process of its own (as in production, and so its CPU can be
// read from /proc alone): the agent-test auth (node join wired in) on a SQLite file in WAL mode,
// as an embedded install keeps its state. Before it reports ready it registers FLEET_AGENTS nodes
// through auth's own join code (AgentJoin.issueAdmitted: hostname reservation, host and client
// certificates, registration record, as RegisterAgent does minus the token redemption), all with
// one shared TLS key so setup stays short; each node still gets its own certificate and ID.
// Prints one JSON line (address, CA, the proxy's certificates, the agents file) and stops when
// its stdin closes.
import { generateKeyPairSync } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector";
import { join } from "node:path";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { formatSshPublicKey } from "../core/certs/ssh-keys.ts";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import type { JoinToken } from "../core/resources/index.ts";
import type { RegisterAgentRequest__Output } from "../proto/generated/svc/v1/RegisterAgentRequest.ts";
import { startAgentAuthEnv } from "../test/agent-fixture.ts";
import { PUBLIC_HOST } from "../test/proxy-fixture.ts";

const AGENTS = Number(process.env["FLEET_AGENTS"] ?? 10_000);
const ENVS = ["prod", "staging", "dev", "dev", "staging", "dev", "dev", "dev", "staging", "dev"];

let fileBackend: SqliteBackend | undefined;
const env = await startAgentAuthEnv({
  ...(process.env["FLEET_INTERVAL"]
    ? { heartbeatIntervalSeconds: Number(process.env["FLEET_INTERVAL"]) }
    : {}),
  // The fixture's backend is in memory; the fleet's lives in a file, as an embedded auth's does.
  wrapBackend: (memory) => {
    void memory.close();
    fileBackend = new SqliteBackend({
      path: join(process.env["FLEET_DIR"] ?? ".", "state.db"),
      clock: systemClock,
    });
    return fileBackend;
  },
});
await env.addToken("fleet");
const token = env.source.get("JoinToken", "fleet") as JoinToken | undefined;
if (!token) throw new Error("join token missing");

const tlsKey = generateEcdsaP256();
const tlsPublicPem = tlsKey.publicKey.export({ type: "spki", format: "pem" }).toString();
const hostKey = generateKeyPairSync("ed25519");
const hostKeyLine = formatSshPublicKey(hostKey.publicKey);

const agents: Array<{ id: string; hostname: string; labels: Record<string, string>; certPem: string }> = [];
async function joinOne(i: number): Promise<void> {
  const hostname = `node-${String(i).padStart(5, "0")}`;
  const labels = { env: ENVS[i % ENVS.length] as string, region: `r${i % 5}`, team: `t${i % 20}` };
  const req = env.join.checkAdmittedRequest(
    {
      token: "",
      hostname,
      addresses: [],
      labels,
      host_ssh_public_key: hostKeyLine,
      tls_public_key_pem: tlsPublicPem,
      agentless: false,
    } satisfies RegisterAgentRequest__Output,
    { peer: "ipv4:127.0.0.1:1" },
  );
  const res = await env.join.issueAdmitted(token as JoinToken, req);
  if (!res.agent_id || !res.tls_certificate_pem) throw new Error("join gave no identity");
  agents[i] = { id: res.agent_id, hostname, labels, certPem: res.tls_certificate_pem };
}
const t0 = performance.now();
// Several joins at a time: the X.509 signature runs on libuv's thread pool, beside the main thread.
const PARALLEL = 8;
for (let i = 0; i < AGENTS; i += PARALLEL) {
  await Promise.all(Array.from({ length: Math.min(PARALLEL, AGENTS - i) }, (_, k) => joinOne(i + k)));
}
const joinMs = performance.now() - t0;

const agentsFile = join(process.env["FLEET_DIR"] ?? ".", "agents.json");
await writeFile(agentsFile, JSON.stringify({ keyPem: privateKeyToPem(tlsKey.privateKey), agents }));

const proxyServerKey = generateEcdsaP256();
const proxyClientKey = generateEcdsaP256();
const info = {
  address: env.address,
  serverName: env.serverName,
  hostCaPem: env.cas.hostCa.certPem,
  agentsFile,
  joinMs,
  proxyServer: {
    certPem: await issueTlsServerCert(env.cas.hostCa, {
      publicKey: proxyServerKey.publicKey,
      commonName: PUBLIC_HOST,
      dnsNames: [PUBLIC_HOST],
      clock: systemClock,
    }),
    keyPem: privateKeyToPem(proxyServerKey.privateKey),
  },
  proxyClient: {
    certPem: await issueTlsClientCert(env.cas.hostCa, {
      publicKey: proxyClientKey.publicKey,
      commonName: "proxy",
      uri: serviceIdentityUri("proxy", "fleet"),
      clock: systemClock,
    }),
    keyPem: privateKeyToPem(proxyClientKey.privateKey),
  },
};
process.stdout.write(`${JSON.stringify(info)}\n`);

// SVC_BENCH_FLEET_PROFILE=<dir>: the bench sends SIGUSR2 at the start and the end of the measured
// heartbeat window; the CPU profile of that window is written there (for finding what to fix).
const profileDir = process.env["SVC_BENCH_FLEET_PROFILE"];
if (profileDir) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on("SIGUSR2", () => {
    if (!running) {
      running = true;
      session.post("Profiler.enable", () => session.post("Profiler.start"));
      return;
    }
    running = false;
    session.post("Profiler.stop", (err, res) => {
      if (!err)
        void writeFile(join(profileDir, `auth-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
process.stdin.resume();
process.stdin.on("end", () => {
  void env.close().then(() => process.exit(0));
});
