// Every CA type's keys plus the shared rotation document: which entry signs, which are trusted,
// moving phases by compare-and-swap, and reloading what another replica wrote.
import type { CaKey__Output } from "../../proto/generated/svc/v1/CaKey.ts";
import type { CertAuthorityStatus__Output } from "../../proto/generated/svc/v1/CertAuthorityStatus.ts";
import { SSH_HOST_CERT_TTL_SECONDS } from "../certs/key-ids.ts";
import type { Clock } from "../clock.ts";
import { BadParameterError, CompareFailedError, PreconditionFailedError } from "../errors.ts";
import {
  BASE_ENTRY,
  type CaKeyMaterial,
  entryFor,
  freshRecord,
  type KindOf,
  kindOf,
  loadOrCreateRecord,
  materialFrom,
  publishedKeys,
  readRecord,
} from "./key-set.ts";
import type { CaKeyStore } from "./key-store.ts";
import {
  autoDueAt,
  autoTarget,
  CA_TYPES,
  type CaRotationState,
  type CaType,
  emptyDocument,
  initialState,
  keyRoles,
  type Phase,
  type RotationDocument,
  signingEntry,
  transition,
  trustedEntries,
} from "./rotation.ts";
import { MemoryRotationStateStore, type RotationStateStore } from "./rotation-store.ts";

export interface KeySetOptions {
  clusterName: string;
  clock: Clock;
  rotationStore?: RotationStateStore;
  nodeCertTtlSeconds?: number;
  lifetimes?: Partial<Record<CaType, number>>;
}

export interface RotateRequest {
  type: CaType;
  /** manual: the phase to move to */
  phase?: Phase;
  /** start an automatic rotation (from standby) */
  auto?: boolean;
  graceSeconds?: number;
  force?: boolean;
  /** who asked (kept in the state and audited by the caller) */
  who?: string;
}

export interface PhaseChange {
  type: CaType;
  from: Phase;
  to: Phase;
  status: CertAuthorityStatus__Output;
}

export type LifetimeTable = (nodeCertTtlSeconds: number) => Record<CaType, number>;

const mapKey = (type: CaType, entry: string) => `${type}/${entry}`;

export class KeySet {
  readonly #store: CaKeyStore;
  readonly #rotation: RotationStateStore;
  readonly #clock: Clock;
  readonly #clusterName: string;
  readonly #lifetimes: Record<CaType, number>;
  readonly #keys = new Map<string, CaKeyMaterial>();
  readonly #listeners = new Set<() => void>();
  #doc: RotationDocument = emptyDocument();
  #revision: string | undefined;
  /** reloads and swaps run one at a time, so the document and the keys change together */
  #serial: Promise<unknown> = Promise.resolve();

  constructor(store: CaKeyStore, o: KeySetOptions, lifetimes: Record<CaType, number>) {
    this.#store = store;
    this.#rotation = o.rotationStore ?? new MemoryRotationStateStore();
    this.#clock = o.clock;
    this.#clusterName = o.clusterName;
    this.#lifetimes = { ...lifetimes, ...o.lifetimes };
  }

  get revision(): string | undefined {
    return this.#revision;
  }

  lifetimeSeconds(type: CaType): number {
    return this.#lifetimes[type];
  }

  #runtimeLifetime: ((type: CaType) => Promise<number>) | undefined;

  /**
   * Lifetimes only auth knows at run time (a role's max_session_ttl, the host certificates of
   * agentless nodes, which cannot renew): at a switch the old key's certificates are waited out
   * for the longer of this and the static table, so "every certificate it signed has expired"
   * holds for them too.
   */
  setRuntimeLifetime(fn: (type: CaType) => Promise<number>): void {
    this.#runtimeLifetime = fn;
  }

  async #lifetimeNow(type: CaType): Promise<number> {
    const runtime = this.#runtimeLifetime ? await this.#runtimeLifetime(type) : 0;
    return Math.max(this.#lifetimes[type], Number.isFinite(runtime) ? runtime : 0);
  }

  state(type: CaType): CaRotationState {
    return this.#doc.authorities[type] ?? initialState(BASE_ENTRY[type]);
  }

  #material<T extends CaType>(type: T, entry: string): KindOf<T> {
    const m = this.#keys.get(mapKey(type, entry));
    if (!m || m.kind !== kindOf(type))
      throw new BadParameterError(`CA key ${entry} of ${type} is not loaded`);
    return m as KindOf<T>;
  }

  signing<T extends CaType>(type: T): KindOf<T> {
    return this.#material(type, signingEntry(this.state(type)));
  }

  trusted<T extends CaType>(type: T): KindOf<T>[] {
    return trustedEntries(this.state(type)).map((e) => this.#material(type, e));
  }

  async #load(type: CaType, entry: string): Promise<void> {
    if (this.#keys.has(mapKey(type, entry))) return;
    const rec = await readRecord(this.#store, entry);
    if (!rec)
      throw new BadParameterError(`the CA rotation state names key ${entry}, which the key store lacks`);
    this.#keys.set(mapKey(type, entry), await materialFrom(type, rec, this.#naming()));
  }

  #naming() {
    return { clusterName: this.#clusterName, clock: this.#clock };
  }

  /** Creates the original keys once (as before rotation existed) and reads the rotation state. */
  async init(): Promise<void> {
    const naming = this.#naming();
    const base = async (type: CaType, withJwt = false) => {
      const name = BASE_ENTRY[type];
      const rec = await loadOrCreateRecord(this.#store, name, () =>
        freshRecord(type, name, 1, naming, withJwt),
      );
      this.#keys.set(mapKey(type, name), await materialFrom(type, rec, naming));
    };
    await base("user_ssh");
    await base("host_ssh");
    await base("host_x509");
    await base("spiffe", true); // the SPIFFE record also holds the first JWT-SVID keys
    await base("jwt");
    await base("app");
    await this.reload();
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#serial.then(fn, fn);
    this.#serial = run.catch(() => undefined);
    return run;
  }

  /** Re-reads the rotation document; true (and listeners called) when it changed. */
  reload(): Promise<boolean> {
    return this.#exclusive(() => this.#reload());
  }

  async #reload(): Promise<boolean> {
    const stored = await this.#rotation.read();
    if (stored === undefined || stored.revision === this.#revision) return false;
    for (const type of CA_TYPES) {
      for (const entry of trustedEntries(stored.doc.authorities[type] ?? initialState(BASE_ENTRY[type])))
        await this.#load(type, entry);
    }
    this.#doc = stored.doc;
    this.#revision = stored.revision;
    this.#emit();
    return true;
  }

  #emit(): void {
    for (const fn of this.#listeners) {
      try {
        fn();
      } catch {
        // A listener's failure is its own; the others still run.
      }
    }
  }

  onChange(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * Moves `decide`'s CA to the phase it returns, by compare-and-swap on the document; on a lost
   * swap it re-reads and decides again (the winner's phase may make the move unnecessary).
   */
  async #move(
    type: CaType,
    decide: (
      s: CaRotationState,
    ) => { to: Phase; force?: boolean; mode?: "manual" | "auto"; graceSeconds?: number } | undefined,
    who: string | undefined,
  ): Promise<PhaseChange | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const result = await this.#exclusive(async () => {
        await this.#reload();
        const s = this.state(type);
        const d = decide(s);
        if (!d) return { done: undefined };
        let nextEntry: string | undefined;
        if (d.to === "init") {
          // Refuse (already rotating) before making a key nobody would use.
          if (s.phase !== "standby")
            transition(s, { to: "init", now: this.#clock.now(), lifetimeSeconds: 0 });
          nextEntry = entryFor(type, s.generation + 1);
          const name = nextEntry;
          // Create-once: a replica that lost the swap below leaves this key unused, and the
          // next init of this generation picks it up rather than making another.
          const rec = await loadOrCreateRecord(this.#store, name, () =>
            freshRecord(type, name, s.generation + 1, this.#naming()),
          );
          this.#keys.set(mapKey(type, name), await materialFrom(type, rec, this.#naming()));
        }
        const next = transition(s, {
          to: d.to,
          now: this.#clock.now(),
          lifetimeSeconds: await this.#lifetimeNow(type),
          ...(d.force ? { force: true } : {}),
          ...(nextEntry ? { nextEntry } : {}),
          ...(d.mode ? { mode: d.mode } : {}),
          ...(d.graceSeconds !== undefined ? { graceSeconds: d.graceSeconds } : {}),
          ...(who ? { who } : {}),
        });
        const doc: RotationDocument = { version: 1, authorities: { ...this.#doc.authorities, [type]: next } };
        if ((await this.#rotation.compareAndSwap(this.#revision, doc)) === "conflict") return { retry: true };
        await this.#reload();
        return { done: { type, from: s.phase, to: d.to, status: this.#statusOf(type) } };
      });
      if (!("retry" in result)) return result.done;
    }
    throw new CompareFailedError("the CA rotation state kept changing under this request; try again");
  }

  /** A manual phase change or the start of an automatic rotation. */
  async rotate(r: RotateRequest): Promise<PhaseChange> {
    if (r.auto && r.phase && r.phase !== "init")
      throw new BadParameterError("an automatic rotation starts at init; give no phase or init");
    if (!r.auto && !r.phase) throw new BadParameterError("a phase is required (or an automatic rotation)");
    if (r.graceSeconds !== undefined && (!Number.isInteger(r.graceSeconds) || r.graceSeconds < 1))
      throw new BadParameterError("grace period must be a whole number of seconds, at least 1");
    const change = await this.#move(
      r.type,
      (s) => {
        if (r.auto && s.phase !== "standby")
          throw new PreconditionFailedError(
            `an automatic rotation starts from standby; ${r.type} is in phase ${s.phase}`,
          );
        return {
          to: r.auto ? "init" : (r.phase as Phase),
          mode: r.auto ? "auto" : "manual",
          ...(r.force ? { force: true } : {}),
          ...(r.graceSeconds !== undefined ? { graceSeconds: r.graceSeconds } : {}),
        };
      },
      r.who,
    );
    if (!change) throw new PreconditionFailedError("nothing to change");
    return change;
  }

  /** Automatic mode: moves every CA whose phase is due; a replica that loses the swap moves nothing. */
  async advanceDue(who = "auth (automatic rotation)"): Promise<PhaseChange[]> {
    const out: PhaseChange[] = [];
    for (const type of CA_TYPES) {
      const s = this.state(type);
      const due = autoDueAt(s);
      if (!due || due.getTime() > this.#clock.now().getTime()) continue;
      const change = await this.#move(
        type,
        (fresh) => {
          const to = autoTarget(fresh);
          const at = autoDueAt(fresh);
          if (!to || !at || at.getTime() > this.#clock.now().getTime()) return undefined;
          return { to };
        },
        who,
      );
      if (change) out.push(change);
    }
    return out;
  }

  #statusOf(type: CaType): CertAuthorityStatus__Output {
    const s = this.state(type);
    const keys: CaKey__Output[] = keyRoles(s).flatMap(({ entry, role }) => {
      const m = this.#material(type, entry);
      return publishedKeys(m).map((k) => ({
        fingerprint: k.fingerprint,
        role,
        created_at: m.createdAt,
        public_key: k.publicKey,
      }));
    });
    return {
      type,
      phase: s.phase,
      mode: s.mode,
      phase_changed_at: s.phaseChangedAt ?? "",
      grace_period_seconds: s.graceSeconds,
      next_phase_at: s.mode === "auto" ? (autoDueAt(s)?.toISOString() ?? "") : "",
      keys,
      old_key_expires_at: s.oldKeyExpiresAt ?? "",
    };
  }

  status(): CertAuthorityStatus__Output[] {
    return CA_TYPES.map((t) => this.#statusOf(t));
  }
}

/** Builds and loads the key set (creating the original keys once). */
export async function loadKeySet(
  store: CaKeyStore,
  o: KeySetOptions,
  lifetimes: LifetimeTable,
): Promise<KeySet> {
  const ks = new KeySet(store, o, lifetimes(o.nodeCertTtlSeconds ?? SSH_HOST_CERT_TTL_SECONDS));
  await ks.init();
  return ks;
}
