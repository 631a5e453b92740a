// The client side of WatchTrust, shared by agents and proxies: one server stream to auth that
// carries every lock in force and the CA keys to trust, pushed on change and at least every
// keepalive. The last snapshot is kept while the stream is down, so an enforcement point goes on
// refusing what it last knew was locked; its age says how stale that knowledge is (health and
// metrics). The client and its metadata are getters: a renewed identity swaps them between
// reconnects.
import { EventEmitter } from "node:events";
import type { ClientReadableStream, Metadata, ServiceError } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import type { Clock } from "../../core/clock.ts";
import { type LockRecord, lockFromProto } from "../../core/locks/lock.ts";
import type { CertAuthorityStatus__Output } from "../../proto/generated/svc/v1/CertAuthorityStatus.ts";
import type { PublicKeys__Output } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { TrustSnapshot__Output } from "../../proto/generated/svc/v1/TrustSnapshot.ts";
import { type AuthServiceClient, fromGrpcError } from "../auth/client.ts";

/** A snapshot as enforcement points read it (locks parsed, times as Dates). */
export interface TrustSnapshotView {
  locks: LockRecord[];
  publicKeys: PublicKeys__Output;
  authorities: CertAuthorityStatus__Output[];
  digest: string;
  generatedAt: Date;
  keepaliveSeconds: number;
  /** when this proxy or node received it (by its own clock) */
  receivedAt: Date;
}

export interface TrustWatcherOptions {
  client: () => AuthServiceClient;
  metadata: () => Metadata;
  clock: Clock;
  logger: Logger;
  metrics?: Registry;
  /** metric name prefix: svc_<component>_trust_...; default "agent" */
  component?: string;
  /** reconnect backoff: first delay and cap (ms); defaults 250 ms and 15 s (a keepalive) */
  backoff?: { initialMs: number; maxMs: number };
}

const DEFAULT_KEEPALIVE_SECONDS = 15;
/** The snapshot counts as stale (warning) and a silent stream as dead past this many keepalives. */
const STALE_KEEPALIVES = 3;

const EMPTY_KEYS: PublicKeys__Output = {
  user_ca_ssh_public_keys: [],
  host_ca_ssh_public_keys: [],
  host_ca_pems: [],
  spiffe_bundle_json: "",
  spiffe_jwks_json: "",
  app_jwt_jwks_json: "",
  trust_domain: "",
};

export function snapshotView(s: TrustSnapshot__Output, receivedAt: Date): TrustSnapshotView {
  const generatedAt = new Date(s.generated_at);
  return {
    locks: s.locks.map(lockFromProto),
    publicKeys: s.public_keys ?? EMPTY_KEYS,
    authorities: s.authorities,
    digest: s.digest,
    generatedAt: Number.isNaN(generatedAt.getTime()) ? receivedAt : generatedAt,
    keepaliveSeconds: s.keepalive_seconds > 0 ? s.keepalive_seconds : DEFAULT_KEEPALIVE_SECONDS,
    receivedAt,
  };
}

export interface TrustWatcherEvents {
  snapshot: [TrustSnapshotView];
  connected: [];
  disconnected: [Error];
}

export class TrustWatcher extends EventEmitter<TrustWatcherEvents> {
  readonly #o: TrustWatcherOptions;
  #current: TrustSnapshotView | undefined;
  /** arrival of the last snapshot, digest changed or not (the age counts from it) */
  #lastArrival: Date | undefined;
  #call: ClientReadableStream<TrustSnapshot__Output> | undefined;
  #connected = false;
  #stopped = true;
  #attempt = 0;
  #retry: NodeJS.Timeout | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #warnedStale = false;
  readonly #reconnects?: Counter;
  readonly #received?: Counter;

  constructor(o: TrustWatcherOptions) {
    super();
    this.#o = o;
    const registry = o.metrics;
    if (registry) {
      const prefix = `svc_${o.component ?? "agent"}_trust`;
      const self = this;
      new Gauge({
        name: `${prefix}_snapshot_age_seconds`,
        help: "Seconds since the last trust snapshot (locks, CA keys) arrived from auth; -1 before the first",
        registers: [registry],
        collect() {
          this.set(self.ageSeconds() ?? -1);
        },
      });
      new Gauge({
        name: `${prefix}_stream_connected`,
        help: "1 while the WatchTrust stream to auth is open",
        registers: [registry],
        collect() {
          this.set(self.connected() ? 1 : 0);
        },
      });
      new Gauge({
        name: `${prefix}_locks`,
        help: "Locks in force in the last trust snapshot",
        registers: [registry],
        collect() {
          this.set(self.current()?.locks.length ?? 0);
        },
      });
      this.#reconnects = new Counter({
        name: `${prefix}_stream_reconnects_total`,
        help: "WatchTrust streams that ended or failed and were opened again",
        registers: [registry],
      });
      this.#received = new Counter({
        name: `${prefix}_snapshots_total`,
        help: "Trust snapshots received (including unchanged keepalives)",
        registers: [registry],
      });
    }
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#open();
    this.#armWatchdog();
  }

  async close(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearTimeout(this.#watchdog);
    this.#drop();
  }

  /**
   * Auth answered another call just now: if the stream is down, reconnect at once instead of at
   * the end of the backoff (a node whose own lock was lifted is let back in at its next heartbeat).
   */
  reconnectNow(): void {
    if (this.#stopped || this.#call || this.#retry === undefined) return;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#attempt = 0;
    this.#open();
  }

  current(): TrustSnapshotView | undefined {
    return this.#current;
  }

  ageSeconds(): number | undefined {
    if (!this.#lastArrival) return undefined;
    return Math.max(0, (this.#o.clock.now().getTime() - this.#lastArrival.getTime()) / 1000);
  }

  connected(): boolean {
    return this.#connected;
  }

  #keepaliveMs(): number {
    return (this.#current?.keepaliveSeconds ?? DEFAULT_KEEPALIVE_SECONDS) * 1000;
  }

  #open(): void {
    if (this.#stopped) return;
    let call: ClientReadableStream<TrustSnapshot__Output>;
    try {
      call = this.#o.client().WatchTrust({}, this.#o.metadata());
    } catch (err) {
      this.#lost(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.#call = call;
    call.on("data", (s: TrustSnapshot__Output) => {
      if (this.#call !== call) return;
      this.#receive(s);
    });
    call.on("error", (err: ServiceError) => {
      if (this.#call !== call) return;
      this.#lost(fromGrpcError(err));
    });
    call.on("end", () => {
      if (this.#call !== call) return;
      this.#lost(new Error("auth ended the trust stream"));
    });
  }

  #receive(s: TrustSnapshot__Output): void {
    const now = this.#o.clock.now();
    let view: TrustSnapshotView;
    try {
      view = snapshotView(s, now);
    } catch (err) {
      // A snapshot we cannot read is not applied; the last good one stays in force.
      this.#o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "trust snapshot refused",
      );
      return;
    }
    this.#lastArrival = now;
    this.#received?.inc();
    this.#attempt = 0;
    if (this.#warnedStale) {
      this.#warnedStale = false;
      this.#o.logger.info({ locks: view.locks.length }, "trust snapshot fresh again");
    }
    if (!this.#connected) {
      this.#connected = true;
      this.emit("connected");
    }
    const changed = this.#current?.digest !== view.digest;
    this.#current = changed || !this.#current ? view : { ...this.#current, receivedAt: now };
    if (changed) this.emit("snapshot", view);
  }

  #drop(): void {
    const call = this.#call;
    this.#call = undefined;
    if (call) {
      call.removeAllListeners("data");
      // cancel() reports CANCELLED through 'error': swallow it, the stream is ours to end.
      call.on("error", () => undefined);
      call.cancel();
    }
  }

  #lost(err: Error): void {
    this.#drop();
    const was = this.#connected;
    this.#connected = false;
    if (was) this.emit("disconnected", err);
    if (this.#stopped) return;
    this.#reconnects?.inc();
    // Capped exponential backoff, each wait a random point in the upper half: a fleet that lost
    // auth together does not come back in lockstep.
    const { initialMs, maxMs } = this.#o.backoff ?? { initialMs: 250, maxMs: 15_000 };
    const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(this.#attempt, 20));
    this.#attempt++;
    const delayMs = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
    this.#o.logger.debug({ err: err.message, delayMs }, "trust stream down; reconnecting");
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#open();
    }, delayMs);
    this.#retry.unref();
  }

  /**
   * Once a keepalive: warns when the snapshot is older than STALE_KEEPALIVES keepalives, and
   * treats a stream that stayed silent that long as dead (a half-open connection reports nothing).
   */
  #armWatchdog(): void {
    clearTimeout(this.#watchdog);
    if (this.#stopped) return;
    this.#watchdog = setTimeout(() => {
      const age = this.ageSeconds();
      const limit = (STALE_KEEPALIVES * this.#keepaliveMs()) / 1000;
      if (age !== undefined && age > limit) {
        if (!this.#warnedStale) {
          this.#warnedStale = true;
          this.#o.logger.warn(
            { ageSeconds: Math.round(age), locks: this.#current?.locks.length ?? 0 },
            "trust snapshot is stale: auth is unreachable; the last known locks stay in force",
          );
        }
        if (this.#call && this.#connected) this.#lost(new Error("trust stream silent past its keepalive"));
      }
      this.#armWatchdog();
    }, this.#keepaliveMs());
    this.#watchdog.unref();
  }
}
