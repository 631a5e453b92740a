// One client process of bench/fleet.bench.ts: a slice of the fleet's agents, each with its own
// gRPC channel and TLS connection to auth presenting its own client certificate (auth knows an
// agent by the certificate of its connection, so connections cannot be shared), created the way
// the agent creates its auth client. Driven by JSON lines on stdin, answering on stdout:
//   {"cmd":"connect"}                                   -> {"connected":n,"ms":..}
//   {"cmd":"run","rpc":"health"|"heartbeat","intervalMs":n} every agent calls rpc every n ms
//   {"cmd":"mark"}                                      -> forget samples so far
//   {"cmd":"collect"}                                   -> {"ms":[latencies],"errors":n,"firstError":..}
//   {"cmd":"stop"}                                      -> timers stopped
// Exits when stdin closes. argv: <agents file> <from> <to> <address> <server name> <CA file>.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { type Client, Metadata, makeGenericClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import { type AuthServiceClient, agentMetadata, callUnary, createAuthClient } from "../server/auth/client.ts";
import { authClientCredentials } from "../server/auth/tls.ts";

interface AgentEntry {
  id: string;
  hostname: string;
  labels: Record<string, string>;
  certPem: string;
}

const [file, fromArg, toArg, address, serverName, caFile] = process.argv.slice(2);
if (!file || !address || !serverName || !caFile)
  throw new Error("usage: fleet-agents <file> <from> <to> <address> <server name> <CA file>");
const all = JSON.parse(readFileSync(file, "utf8")) as { keyPem: string; agents: AgentEntry[] };
const slice = all.agents.slice(Number(fromArg), Number(toArg));
const caPems = [readFileSync(caFile, "utf8")];

type Check = (req: { service: string }, md: Metadata, cb: (err: ServiceError | null) => void) => void;
const HealthClient = makeGenericClientConstructor(healthService, "Health");

interface Sim {
  agent: AgentEntry;
  client: AuthServiceClient;
  health: Check;
  md: Metadata;
  timer?: NodeJS.Timeout;
}

const sims: Sim[] = slice.map((agent) => {
  const opts = { address, serverName, caPems, certPem: agent.certPem, keyPem: all.keyPem };
  const client = createAuthClient(opts);
  // The health check rides the agent's own channel (its one TLS connection).
  const h = new HealthClient(address, authClientCredentials(opts), {
    channelOverride: client.getChannel(),
  }) as unknown as Client & { Check: Check };
  return { agent, client, health: (req, md, cb) => h.Check(req, md, cb), md: agentMetadata(agent.id) };
});

let samples: number[] = [];
let errors = 0;
let firstError = "";

function connectOne(s: Sim): Promise<void> {
  return new Promise((resolve, reject) => {
    // An RPC makes grpc-js connect; the health check is the cheapest one and proves the handshake.
    s.health({ service: "" }, new Metadata(), (err) => (err ? reject(err) : resolve()));
  });
}

function callOnce(s: Sim, rpc: "health" | "heartbeat"): void {
  const t = performance.now();
  const done = (err: unknown) => {
    if (err) {
      errors++;
      if (!firstError) firstError = err instanceof Error ? err.message : String(err);
    } else samples.push(performance.now() - t);
  };
  if (rpc === "health") s.health({ service: "" }, new Metadata(), (err) => done(err));
  else
    callUnary(
      s.client,
      "Heartbeat",
      { hostname: s.agent.hostname, addresses: [], labels: s.agent.labels, version: "0.1.0" },
      s.md,
    ).then(
      () => done(undefined),
      (err: unknown) => done(err),
    );
}

function stopAll(): void {
  for (const s of sims) {
    clearTimeout(s.timer);
    clearInterval(s.timer);
    s.timer = undefined;
  }
}

const reply = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const m = JSON.parse(line) as { cmd: string; rpc?: "health" | "heartbeat"; intervalMs?: number };
  if (m.cmd === "connect") {
    const t0 = performance.now();
    void (async () => {
      // Handshakes in bounded batches: auth accepts connections from several such processes.
      const BATCH = 50;
      for (let i = 0; i < sims.length; i += BATCH)
        await Promise.all(sims.slice(i, i + BATCH).map(connectOne));
      reply({ connected: sims.length, ms: performance.now() - t0 });
    })().catch((err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }));
  } else if (m.cmd === "run") {
    stopAll();
    const interval = m.intervalMs ?? 30_000;
    const rpc = m.rpc ?? "heartbeat";
    // Each agent starts at a random phase, then keeps its own interval, as agents started at
    // different times do.
    for (const s of sims) {
      s.timer = setTimeout(() => {
        callOnce(s, rpc);
        s.timer = setInterval(() => callOnce(s, rpc), interval);
      }, Math.random() * interval);
    }
    reply({ ok: true });
  } else if (m.cmd === "mark") {
    samples = [];
    errors = 0;
    firstError = "";
    reply({ ok: true });
  } else if (m.cmd === "collect") {
    reply({ ms: samples, errors, firstError });
  } else if (m.cmd === "stop") {
    stopAll();
    reply({ ok: true });
  }
});
lines.on("close", () => {
  stopAll();
  for (const s of sims) s.client.close();
  process.exit(0);
});
