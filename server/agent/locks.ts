// Locks enforced at the node (docs/locks.md, "Enforcement at nodes and proxies"): on every trust
// snapshot the agent ends each live SSH connection whose certificate a lock covers, and it refuses
// a covered login itself before asking auth (AuthorizeSshLogin stays the second check). While the
// stream to auth is down the last snapshot stays in force; a lock on this node refuses everyone.
import type { Metadata } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { ParsedSshCertificate } from "../../core/certs/ssh-cert.ts";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError, BadParameterError } from "../../core/errors.ts";
import { type LockRecord, type LockSubject, lockCovering, printableMessage } from "../../core/locks/lock.ts";
import { decodeCertIdentity } from "../../core/rbac/cert-identity.ts";
import type { AuthServiceClient } from "../auth/client.ts";
import { createMetricsRegistry, type Diagnostics, startDiagnostics } from "../diagnostics.ts";
import { TrustWatcher } from "../trust/watcher.ts";
import type { LiveLogin, LoginQuestion } from "./ssh-server.ts";

/**
 * Who a user certificate speaks for: its key id ("user=<name> session=<ref>",
 * "user:<name>:session:<ref>", "bot:<name>:gen:<n>") and the identity extension auth signs into it
 * (kind, name, roles). The extension wins where both name someone: AuthorizeSshLogin decides on it.
 */
export function subjectOfCertificate(cert: ParsedSshCertificate, nodeId: string): LockSubject {
  const subject: { user?: string; roles?: string[]; bot?: string; node: string; keyId: string } = {
    node: nodeId,
    keyId: cert.keyId,
  };
  const user = (/^user=(\S+)(?:\s|$)/.exec(cert.keyId) ?? /^user:([^:]+):/.exec(cert.keyId))?.[1];
  const bot = /^bot:([^:]+):/.exec(cert.keyId)?.[1];
  if (user) subject.user = user;
  if (bot) subject.bot = bot;
  try {
    const id = decodeCertIdentity(cert.extensionValues);
    subject.roles = id.roles;
    if (id.kind === "user") subject.user = id.name;
    if (id.kind === "bot") subject.bot = id.name;
  } catch {
    // No identity extension: auth refuses such a certificate anyway; the key id still applies.
  }
  return subject;
}

/** What the refused user reads (their terminal, the audit event's reason). */
export function lockMessage(lock: LockRecord): string {
  const what = "node" in lock.target ? "this node is locked" : "access is locked";
  return lock.message ? `${what}: ${printableMessage(lock.message)}` : `${what} (lock ${lock.name})`;
}

export interface LiveSessionCloser {
  closeWhere(pick: (login: LiveLogin) => string | undefined): number;
}

export interface AgentLocksOptions {
  watcher: TrustWatcher;
  server: LiveSessionCloser;
  nodeId: string;
  clock: Clock;
  logger: Logger;
}

export class AgentLocks {
  readonly #o: AgentLocksOptions;
  readonly #onSnapshot = (): void => {
    this.enforce();
  };

  constructor(o: AgentLocksOptions) {
    this.#o = o;
    o.watcher.on("snapshot", this.#onSnapshot);
  }

  /** The lock covering this certificate now (per the last snapshot), if any. */
  covering(cert: ParsedSshCertificate): LockRecord | undefined {
    const locks = this.#o.watcher.current()?.locks;
    if (!locks || locks.length === 0) return undefined;
    return lockCovering(locks, subjectOfCertificate(cert, this.#o.nodeId), this.#o.clock.now());
  }

  /** SSH server hook (refuseLocally): throws for a locked identity or a locked node. */
  check = (q: LoginQuestion): void => {
    const lock = this.covering(q.certificate);
    if (!lock) return;
    // Logged here too: while auth is unreachable the audit event cannot be delivered.
    this.#o.logger.info(
      { lock: lock.name, keyId: q.certificate.keyId, login: q.login, remoteAddress: q.remoteAddress },
      "login refused: locked",
    );
    throw new AccessDeniedError(lockMessage(lock));
  };

  /** Ends every live connection a lock covers now; returns how many. */
  enforce(): number {
    const closed = this.#o.server.closeWhere((l) => {
      const lock = this.covering(l.certificate);
      return lock ? lockMessage(lock) : undefined;
    });
    if (closed > 0) this.#o.logger.info({ closed }, "locked sessions ended");
    return closed;
  }

  close(): void {
    this.#o.watcher.off("snapshot", this.#onSnapshot);
  }
}

export interface AgentTrustOptions {
  client: () => AuthServiceClient;
  metadata: () => Metadata;
  server: LiveSessionCloser;
  nodeId: string;
  clock: Clock;
  logger: Logger;
  /** "host:port" of the diagnostics listener (/healthz, /readyz, /metrics); none without it */
  diagListen?: string;
}

export interface AgentTrust {
  watcher: TrustWatcher;
  locks: AgentLocks;
  diagnostics?: Diagnostics;
  close(): Promise<void>;
}

/**
 * The agent's trust feed: the WatchTrust stream, lock enforcement on it, and (with diagListen)
 * the diagnostics listener reporting the snapshot's age. Started after the first heartbeat.
 */
export async function startAgentTrust(o: AgentTrustOptions): Promise<AgentTrust> {
  // Metrics only where someone can read them (process metrics cost a little CPU on every node).
  const registry = o.diagListen !== undefined ? createMetricsRegistry("agent") : undefined;
  const watcher = new TrustWatcher({
    client: o.client,
    metadata: o.metadata,
    clock: o.clock,
    logger: o.logger,
    ...(registry ? { metrics: registry } : {}),
    component: "agent",
  });
  const locks = new AgentLocks({
    watcher,
    server: o.server,
    nodeId: o.nodeId,
    clock: o.clock,
    logger: o.logger,
  });
  let diagnostics: Diagnostics | undefined;
  if (o.diagListen !== undefined && registry) {
    const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(o.diagListen) ?? /^([^:]*):(\d{1,5})$/.exec(o.diagListen);
    if (!m || Number(m[2]) > 65535) throw new BadParameterError("--diag-listen must be host:port");
    diagnostics = await startDiagnostics(registry, m[1] || "127.0.0.1", Number(m[2]), {
      // Ready: this node holds a trust snapshot (it knows what is locked).
      ready: () => watcher.current() !== undefined,
      health: () => {
        const age = watcher.ageSeconds();
        return {
          trust: {
            connected: watcher.connected(),
            age_seconds: age === undefined ? null : Math.round(age * 10) / 10,
            locks: watcher.current()?.locks.length ?? 0,
          },
        };
      },
    });
  }
  watcher.start();
  return {
    watcher,
    locks,
    ...(diagnostics ? { diagnostics } : {}),
    async close() {
      locks.close();
      await watcher.close();
      await diagnostics?.close();
    },
  };
}
