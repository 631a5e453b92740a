// Liveness of agentless nodes (a plain OpenSSH sshd registered with RegisterAgent agentless=true):
// they never call auth, so auth dials them. Every interval it opens an SSH connection to each
// registered address, offering only host-certificate algorithms, and counts the node as alive
// when the server proves the host key auth certified (a host certificate from our host CA naming
// the node id, for the registered key). No login is attempted: the connection ends after the key
// exchange. A live node gets a heartbeat record, so ListNodes shows it online like an agent; an
// unreachable one ages to offline with the same rule.
import type { Logger } from "pino";
import ssh2, { type ServerHostKeyAlgorithm } from "ssh2";
import type { Backend } from "../../core/backend/backend.ts";
import { verifySshCertificate } from "../../core/certs/ssh-cert.ts";
import { parseSshPublicKey, sshPublicKeyBlob } from "../../core/certs/ssh-keys.ts";
import type { Clock } from "../../core/clock.ts";
import { HOST_CERT_ALGORITHMS } from "../../core/sshclient/ssh2-patch-types.ts";
import { indexAgentless } from "./agentless-index.ts";
import {
  type AgentRegistration,
  forgetRemovedNode,
  hostOfAddress,
  listAgentRegistrations,
} from "./join-agent.ts";
import { HEARTBEAT_INTERVAL_SECONDS, NodeStore } from "./nodes.ts";

export interface AgentlessProbeDeps {
  backend: Backend;
  clock: Clock;
  logger: Logger;
  /** SSH host CA public keys (OpenSSH lines) */
  hostCaKeys: () => readonly string[] | Promise<readonly string[]>;
  /** default the heartbeat interval (30 s) */
  intervalSeconds?: number;
  /** per-connection budget; default 10 s */
  timeoutMs?: number;
}

const PROBE_CONCURRENCY = 16;
const hostCertAlgorithms = [...HOST_CERT_ALGORITHMS] as string[] as ServerHostKeyAlgorithm[];

/** Resolves true when `address` presents a valid host certificate for `reg`'s key. */
export function probeSshHost(
  reg: Pick<AgentRegistration, "id" | "host_public_key">,
  address: string,
  trust: { caKeys: readonly string[]; clock: Clock; timeoutMs: number },
): Promise<boolean> {
  const host = hostOfAddress(address);
  const port = Number(address.slice(address.lastIndexOf(":") + 1));
  const expectedKey = parseSshPublicKey(reg.host_public_key).blob;
  return new Promise((resolve) => {
    const client = new ssh2.Client();
    let proven = false;
    let settled = false;
    const done = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.end();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), trust.timeoutMs);
    client.on("handshake", () => done(proven));
    client.on("error", () => done(false));
    client.on("close", () => done(false));
    client.connect({
      host,
      port,
      username: "svc-probe",
      readyTimeout: trust.timeoutMs,
      algorithms: { serverHostKey: hostCertAlgorithms },
      hostVerifier: (blob: Buffer): boolean => {
        try {
          const cert = verifySshCertificate(blob, {
            trustedCaKeys: trust.caKeys,
            type: "host",
            principal: reg.id,
            clock: trust.clock,
          });
          proven = sshPublicKeyBlob(cert.publicKey).equals(expectedKey);
        } catch {
          proven = false;
        }
        return proven;
      },
      // No credentials: the probe never logs in (it ends at the "handshake" event).
      authHandler: [],
    });
  });
}

export class AgentlessProbe {
  readonly #d: AgentlessProbeDeps;
  readonly #nodes: NodeStore;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(deps: AgentlessProbeDeps) {
    this.#d = deps;
    this.#nodes = new NodeStore({ backend: deps.backend, clock: deps.clock });
  }

  /** Probes every agentless node once; returns which were reachable. */
  async probeOnce(): Promise<Array<{ id: string; online: boolean }>> {
    const d = this.#d;
    const caKeys = await d.hostCaKeys();
    const regs = (await listAgentRegistrations(d.backend)).filter((r) => r.agentless);
    for (const r of regs) await indexAgentless(d.backend, r.id);
    // A bounded number of dials at a time, however many nodes there are.
    const results: Array<{ id: string; online: boolean }> = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < regs.length) {
        const reg = regs[next++] as AgentRegistration;
        results.push(await this.#probeNode(reg, caKeys));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, regs.length) }, worker));
    return results;
  }

  async #probeNode(
    reg: AgentRegistration,
    caKeys: readonly string[],
  ): Promise<{ id: string; online: boolean }> {
    const d = this.#d;
    let online = false;
    for (const address of reg.addresses) {
      online = await probeSshHost(reg, address, {
        caKeys,
        clock: d.clock,
        timeoutMs: d.timeoutMs ?? 10_000,
      }).catch(() => false);
      if (online) break;
    }
    if (online) {
      await this.#nodes.heartbeat(reg.id, {
        hostname: reg.hostname,
        addresses: reg.addresses,
        labels: reg.labels,
        version: "agentless",
      });
    }
    // DeleteNode may have run since the list was read: a removed node must not come back (listed,
    // or in the index that gives certificates <login>@<node id> principals for it).
    if (await forgetRemovedNode(d.backend, this.#nodes, reg.id)) return { id: reg.id, online: false };
    return { id: reg.id, online };
  }

  /** Probes now and then every interval until stop(). */
  start(): void {
    this.#stopped = false;
    const tick = (): void => {
      this.#running = this.probeOnce()
        .catch((err: unknown) =>
          this.#d.logger.warn(
            { err: err instanceof Error ? err.message : String(err) },
            "agentless probe failed",
          ),
        )
        .finally(() => {
          if (!this.#stopped)
            this.#timer = setTimeout(tick, (this.#d.intervalSeconds ?? HEARTBEAT_INTERVAL_SECONDS) * 1000);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#running;
  }
}
