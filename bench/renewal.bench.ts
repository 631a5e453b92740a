// Node certificate renewal (RenewNodeCredentials) on one auth process (bench/renewal-auth-child.ts):
// N joined nodes, each on its own mutual-TLS gRPC channel (opened before the clock starts, as a
// running agent's is), each renewing once with fresh keys, C at a time. Measured: renewals per
// second and auth's CPU time per renewal (process.cpuUsage of the auth process, so the bench's own
// key generation does not count). Baseline, same run: the raw signing of one SSH host certificate
// and one X.509 client certificate with core/certs (CPU per pair), what a renewal cannot do
// without. From the CPU per renewal: what 10,000 agents renewing every 16 h (2/3 of 24 h) cost
// auth, as a fraction of one core.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { fileURLToPath } from "node:url";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { hostKeyId } from "../core/certs/key-ids.ts";
import { generateSshKeyPair, parseSshPublicKey } from "../core/certs/ssh-keys.ts";
import { agentIdentityUri, generateEcdsaP256, issueTlsClientCert } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { type AuthServiceClient, agentMetadata, callUnary, createAuthClient } from "../server/auth/client.ts";
import type { BenchReport } from "./report.ts";
import { percentile } from "./report.ts";

const NODES = Number(process.env.SVC_BENCH_RENEWAL_NODES ?? 400);
const CONCURRENCY = Number(process.env.SVC_BENCH_RENEWAL_CONCURRENCY ?? 16);
const BASELINE_PAIRS = 400;
const FLEET = 10_000;
const RENEW_EVERY_S = 16 * 3600;

class Child {
  readonly proc: ChildProcess;
  readonly #lines: Interface;
  readonly #waiting: Array<(line: string) => void> = [];
  constructor() {
    const here = dirname(fileURLToPath(import.meta.url));
    this.proc = spawn(process.execPath, [join(here, "renewal-auth-child.ts")], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    if (!this.proc.stdout) throw new Error("child has no stdout");
    this.#lines = createInterface({ input: this.proc.stdout });
    this.#lines.on("line", (l) => this.#waiting.shift()?.(l));
  }
  next<T>(): Promise<T> {
    return new Promise((resolve) => this.#waiting.push((l) => resolve(JSON.parse(l) as T)));
  }
  ask<T>(msg: unknown): Promise<T> {
    const p = this.next<T>();
    this.proc.stdin?.write(`${JSON.stringify(msg)}\n`);
    return p;
  }
  async cpuMs(): Promise<number> {
    const c = await this.ask<{ userUs: number; systemUs: number }>({ cmd: "cpu" });
    return (c.userUs + c.systemUs) / 1000;
  }
  async close(): Promise<void> {
    const exited = new Promise((r) => this.proc.once("exit", r));
    this.proc.stdin?.end();
    await exited;
  }
}

/** CPU ms of this process per (SSH host cert + X.509 client cert), signed with core/certs. */
async function rawSigningCpuMs(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-renewal-"));
  try {
    const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
      clusterName: "bench",
      trustDomain: "bench",
      clock: systemClock,
    });
    const keys = Array.from({ length: BASELINE_PAIRS }, () => ({
      ssh: parseSshPublicKey(generateSshKeyPair("ed25519").publicLine),
      tls: generateEcdsaP256().publicKey,
    }));
    const one = async (k: (typeof keys)[number], i: number): Promise<void> => {
      const now = Date.now();
      cas.sshHostSigner.sign({
        type: "host",
        publicKey: k.ssh,
        keyId: hostKeyId(`n${i}`),
        principals: [`n${i}`, `host-${i}`],
        validAfter: new Date(now - 60_000),
        validBefore: new Date(now + 86_400_000),
      });
      await issueTlsClientCert(cas.hostCa, {
        publicKey: k.tls,
        commonName: `n${i}`,
        uri: agentIdentityUri(`n${i}`),
        clock: systemClock,
        ttlSeconds: 86_400,
      });
    };
    for (let i = 0; i < 50; i++) await one(keys[i % keys.length] as (typeof keys)[number], i);
    const cpu0 = process.cpuUsage();
    for (const [i, k] of keys.entries()) await one(k, i);
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / 1000 / keys.length;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export default async function renewalBench(): Promise<BenchReport> {
  const child = new Child();
  const clients: AuthServiceClient[] = [];
  try {
    const info = await child.next<{ address: string; serverName: string; hostCaPem: string }>();
    const { nodes } = await child.ask<{ nodes: { agentId: string; certPem: string; keyPem: string }[] }>({
      cmd: "join",
      n: NODES,
    });
    // Channels up first: a running agent renews on the connection it already holds.
    for (const n of nodes)
      clients.push(
        createAuthClient({
          address: info.address,
          serverName: info.serverName,
          caPems: [info.hostCaPem],
          certPem: n.certPem,
          keyPem: n.keyPem,
        }),
      );
    await Promise.all(
      clients.map((c, i) => callUnary(c, "GetPublicKeys", {}, agentMetadata(nodes[i]?.agentId ?? ""))),
    );
    // The agents' fresh keys, made before the clock starts (they are the agents' work, not auth's).
    const requests = nodes.map(() => ({
      ssh_public_key: generateSshKeyPair("ed25519").publicLine,
      tls_public_key_pem: String(generateEcdsaP256().publicKey.export({ type: "spki", format: "pem" })),
    }));

    const latencies: number[] = [];
    const cpu0 = await child.cpuMs();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (;;) {
          const i = next++;
          if (i >= nodes.length) return;
          const s = performance.now();
          await callUnary(
            clients[i] as AuthServiceClient,
            "RenewNodeCredentials",
            requests[i] as never,
            agentMetadata(nodes[i]?.agentId ?? ""),
          );
          latencies.push(performance.now() - s);
        }
      }),
    );
    const wallS = (performance.now() - t0) / 1000;
    const authCpuMs = ((await child.cpuMs()) - cpu0) / nodes.length;
    const rawMs = await rawSigningCpuMs();
    const perSecondFleet = FLEET / RENEW_EVERY_S;
    const coreShare = (perSecondFleet * authCpuMs) / 1000;
    return {
      title: `renewal: RenewNodeCredentials on one auth process (${NODES} nodes, ${CONCURRENCY} at a time)`,
      rows: [
        {
          name: "RenewNodeCredentials",
          perSecond: nodes.length / wallS,
          unit: "renewals",
          p50Ms: percentile(latencies, 50),
          p99Ms: percentile(latencies, 99),
        },
        { name: "auth CPU per renewal", note: `${authCpuMs.toFixed(3)} ms` },
        {
          name: "baseline: sign SSH host + X.509 client cert (core/certs)",
          note: `${rawMs.toFixed(3)} ms CPU per pair`,
        },
        {
          name: `${FLEET} agents renewing every 16 h`,
          note: `${perSecondFleet.toFixed(3)} renewals/s = ${(coreShare * 100).toFixed(3)} % of one auth core`,
        },
      ],
      ratios: [
        {
          name: "auth CPU per renewal / raw signing CPU per pair",
          ratio: authCpuMs / rawMs,
          lowerIsBetter: true,
        },
        // A fleet of 10,000 should cost auth well under 1 % of a core.
        {
          name: "10k-agent fleet share of one core / 1 %",
          ratio: coreShare / 0.01,
          goal: 1,
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    for (const c of clients) c.close();
    await child.close();
  }
}
