// The client side of WatchTrust, shared by agents and proxies: one server stream to auth that
// carries every lock in force and the CA keys to trust, pushed on change and at least every
// keepalive. The last snapshot is kept while the stream is down, so an enforcement point goes on
// refusing what it last knew was locked; its age says how stale that knowledge is (health and
// metrics). The client and its metadata are getters: a renewed identity swaps them between
// reconnects.
import { EventEmitter } from "node:events";
import type { Metadata } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import type { Clock } from "../../core/clock.ts";
import { type LockRecord, lockFromProto } from "../../core/locks/lock.ts";
import type { CertAuthorityStatus__Output } from "../../proto/generated/svc/v1/CertAuthorityStatus.ts";
import type { PublicKeys__Output } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { TrustSnapshot__Output } from "../../proto/generated/svc/v1/TrustSnapshot.ts";
import type { AuthServiceClient } from "../auth/client.ts";
import { type Backoff, FeedSubscription } from "../auth/feed-subscription.ts";

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
  backoff?: Backoff;
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
  #connected = false;
  #warnedStale = false;
  readonly #received?: Counter;
  readonly #stream: FeedSubscription<TrustSnapshot__Output>;

  constructor(o: TrustWatcherOptions) {
    super();
    this.#o = o;
    const registry = o.metrics;
    let reconnects: Counter | undefined;
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
      reconnects = new Counter({
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
    this.#stream = new FeedSubscription({
      what: "trust stream",
      open: () => this.#o.client().WatchTrust({}, this.#o.metadata()),
      message: (s) => this.#receive(s),
      down: (err) => {
        const was = this.#connected;
        this.#connected = false;
        if (was) this.emit("disconnected", err);
      },
      backoff: o.backoff ?? { initialMs: 250, maxMs: 15_000 },
      logger: o.logger,
      reconnects,
      watchdog: { periodMs: () => this.#keepaliveMs(), check: () => this.#checkStale() },
    });
  }

  start(): void {
    this.#stream.start();
  }

  async close(): Promise<void> {
    this.#stream.stop();
  }

  /**
   * Auth answered another call just now: if the stream is down, reconnect at once instead of at
   * the end of the backoff (a node whose own lock was lifted is let back in at its next heartbeat).
   */
  reconnectNow(): void {
    this.#stream.reconnectNow();
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
    this.#stream.healthy();
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

  /**
   * Once a keepalive: warns when the snapshot is older than STALE_KEEPALIVES keepalives, and
   * treats a stream that stayed silent that long as dead (a half-open connection reports nothing).
   */
  #checkStale(): Error | undefined {
    const age = this.ageSeconds();
    const limit = (STALE_KEEPALIVES * this.#keepaliveMs()) / 1000;
    if (age === undefined || age <= limit) return undefined;
    if (!this.#warnedStale) {
      this.#warnedStale = true;
      this.#o.logger.warn(
        { ageSeconds: Math.round(age), locks: this.#current?.locks.length ?? 0 },
        "trust snapshot is stale: auth is unreachable; the last known locks stay in force",
      );
    }
    return this.#stream.open && this.#connected
      ? new Error("trust stream silent past its keepalive")
      : undefined;
  }
}
