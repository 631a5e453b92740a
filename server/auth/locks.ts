// The lock service (docs/locks.md): Lock resources read from auth's resource source (the folder
// in embedded mode, custom resources in Kubernetes mode), written through its ResourceWriter for
// CreateLock/DeleteLock and for locks auth makes itself (a stolen bot credential). It answers
// "which lock covers this subject now" for every enforcement point in auth, tells the trust feed
// when the set in force changes (a write, a deletion, or an expiry passing), and sweeps expired
// Lock resources away (any replica may; a lock already gone is fine).
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.ts";
import {
  AlreadyExistsError,
  BadParameterError,
  hasCode,
  isNotFound,
  NotFoundError,
  NotImplementedError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import {
  describeTarget,
  type LockRecord,
  type LockSubject,
  type LockTarget,
  lockCovering,
  lockToProto,
} from "../../core/locks/lock.ts";
import {
  API_VERSION,
  DNS_SUBDOMAIN_MAX,
  DNS_SUBDOMAIN_PATTERN,
  type Lock,
} from "../../core/resources/index.ts";
import type { ResourceSource, ResourceWriter } from "../../core/sources/source.ts";
import type { CreateLockRequest__Output } from "../../proto/generated/svc/v1/CreateLockRequest.ts";
import type { DeleteLockRequest__Output } from "../../proto/generated/svc/v1/DeleteLockRequest.ts";
import type { ListLocksResponse } from "../../proto/generated/svc/v1/ListLocksResponse.ts";
import type { Lock as LockMessage } from "../../proto/generated/svc/v1/Lock.ts";
import type { LockTarget__Output } from "../../proto/generated/svc/v1/LockTarget.ts";
import { type Caller, callerLabel } from "./caller.ts";
import { hasControlChars } from "./text.ts";

/** created_by of the locks auth makes itself. */
export const AUTH_LOCK_CREATOR = "auth";
const DEFAULT_SWEEP_MS = 60_000;
/** setTimeout's limit; a later expiry is re-armed when this fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const MAX_MESSAGE = 1024;
/** C0 controls but tab and line feed, DEL, and C1 controls (0x9b is a one-byte CSI). */
function hasTerminalControls(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a) || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}
const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;
const NAME_RE = new RegExp(DNS_SUBDOMAIN_PATTERN);
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export interface LockServiceDeps {
  source: ResourceSource;
  /** Where CreateLock/DeleteLock and the sweeper write; without it they answer UNIMPLEMENTED. */
  writer?: ResourceWriter;
  clock: Clock;
  logger: Logger;
  audit(event: {
    event_type: string;
    user_name: string;
    success: boolean;
    fields: JsonObject;
  }): Promise<unknown>;
  /** How often expired Lock resources are looked for (default 60 s; an expiry also triggers one). */
  sweepIntervalMs?: number;
}

/** The Lock resource as a LockRecord (its creation time as first seen when the object has none). */
export function lockRecordOf(l: Lock, firstSeen: Date): LockRecord {
  const t = l.spec.target;
  const target: LockTarget =
    t.user !== undefined
      ? { user: t.user }
      : t.role !== undefined
        ? { role: t.role }
        : t.bot !== undefined
          ? { bot: t.bot }
          : t.node !== undefined
            ? { node: t.node }
            : { keyId: t.key_id ?? "" };
  const created = l.metadata.creationTimestamp ? new Date(l.metadata.creationTimestamp) : firstSeen;
  return {
    name: l.metadata.name,
    target,
    message: l.spec.message ?? "",
    ...(l.spec.expires ? { expires: new Date(l.spec.expires) } : {}),
    createdBy: l.spec.created_by ?? "",
    createdAt: created,
  };
}

function targetOf(t: LockTarget__Output | null | undefined): LockTarget {
  const set = t
    ? (
        [
          ["user", t.user],
          ["role", t.role],
          ["bot", t.bot],
          ["node", t.node],
          ["key_id", t.key_id],
        ] as const
      ).filter(([, v]) => v !== "")
    : [];
  const one = set[0];
  if (set.length !== 1 || !one)
    throw new BadParameterError("target must name exactly one of user, role, bot, node, key_id");
  const [field, value] = one;
  const max = field === "key_id" ? 1024 : DNS_SUBDOMAIN_MAX;
  if (value.length > max) throw new BadParameterError(`target ${field} is longer than ${max} characters`);
  if (hasControlChars(value)) throw new BadParameterError(`target ${field} has control characters`);
  return field === "key_id" ? { keyId: value } : ({ [field]: value } as LockTarget);
}

/**
 * A node lock names the node's ID (what every enforcement point compares). A hostname there would
 * match nothing and leave the node serving while the operator believes it locked, so a target that
 * is some node's hostname and no node's ID is refused, naming the ID to lock instead.
 */
export function checkNodeTarget(
  node: string | undefined,
  nodes: readonly { id: string; hostname: string }[],
): void {
  if (!node || nodes.some((n) => n.id === node)) return;
  const byName = nodes.find((n) => n.hostname.toLowerCase() === node.toLowerCase());
  if (byName)
    throw new BadParameterError(
      `${JSON.stringify(node)} is a node's hostname: a node lock names its ID (${byName.id})`,
    );
}

function specTarget(t: LockTarget): Lock["spec"]["target"] {
  if ("keyId" in t) return { key_id: t.keyId };
  return { ...t };
}

export class LockService {
  readonly #d: LockServiceDeps;
  readonly #listeners = new Set<() => void>();
  /** When auth first saw each Lock that carries no creationTimestamp (hand-written files). */
  readonly #firstSeen = new Map<string, Date>();
  readonly #unsubscribe: () => void;
  #records: LockRecord[] = [];
  #expiryTimer: NodeJS.Timeout | undefined;
  readonly #sweepTimer: NodeJS.Timeout;
  #sweeping: Promise<void> | undefined;
  #closed = false;

  constructor(deps: LockServiceDeps) {
    this.#d = deps;
    this.#unsubscribe = deps.source.subscribe((e) => {
      if (e.resource.kind === "Lock") this.#changed();
    });
    this.#rebuild();
    this.#sweepTimer = setInterval(() => void this.sweep(), deps.sweepIntervalMs ?? DEFAULT_SWEEP_MS);
    this.#sweepTimer.unref();
  }

  /** Every lock in force now (expired ones left out), by name. */
  inForce(): LockRecord[] {
    const now = this.#d.clock.now();
    return this.#records.filter((l) => l.expires === undefined || l.expires > now);
  }

  /** The lock in force that covers `subject`, if any. */
  covering(subject: LockSubject): LockRecord | undefined {
    return lockCovering(this.#records, subject, this.#d.clock.now());
  }

  /** Called whenever the set in force may have changed (a Lock written or removed, an expiry). */
  onChange(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  close(): void {
    this.#closed = true;
    this.#unsubscribe();
    clearInterval(this.#sweepTimer);
    if (this.#expiryTimer) clearTimeout(this.#expiryTimer);
    this.#listeners.clear();
  }

  async create(req: CreateLockRequest__Output, caller: Caller): Promise<LockMessage> {
    const target = targetOf(req.target);
    const name = req.name === "" ? `lock-${randomBytes(6).toString("hex")}` : req.name;
    if (name.length > DNS_SUBDOMAIN_MAX || !NAME_RE.test(name))
      throw new BadParameterError("name must be a DNS subdomain: lower-case letters, digits, '-' and '.'");
    if (req.message.length > MAX_MESSAGE)
      throw new BadParameterError(`message is longer than ${MAX_MESSAGE} characters`);
    // Agents print the message on every covered user's terminal: no escape sequences there.
    if (hasTerminalControls(req.message))
      throw new BadParameterError("message has control characters (line breaks and tabs are fine)");
    const expires = this.#expiryOf(req);
    const createdBy = caller.kind === "user" ? caller.username : callerLabel(caller);
    const record = await this.#apply({ name, target, message: req.message, expires, createdBy });
    await this.#d.audit({
      event_type: "lock.created",
      user_name: caller.kind === "user" ? caller.username : "",
      success: true,
      fields: {
        emitted_by: callerLabel(caller),
        lock: name,
        target: describeTarget(target),
        expires: expires ? expires.toISOString() : "",
      },
    });
    return lockToProto(record);
  }

  list(): ListLocksResponse {
    return { locks: this.inForce().map(lockToProto) };
  }

  async remove(req: DeleteLockRequest__Output, caller: Caller): Promise<Record<string, never>> {
    if (!this.#d.source.get("Lock", req.name)) throw new NotFoundError(`lock ${req.name} not found`);
    await this.#writer().remove("Lock", req.name);
    await this.#d.audit({
      event_type: "lock.deleted",
      user_name: caller.kind === "user" ? caller.username : "",
      success: true,
      fields: { emitted_by: callerLabel(caller), lock: req.name },
    });
    return {};
  }

  /**
   * A lock auth makes itself (created_by "auth"), e.g. on a stolen bot credential. Never throws:
   * the caller has already refused what it refuses; a failure here is logged.
   */
  async lockByAuth(target: LockTarget, message: string): Promise<LockRecord | undefined> {
    const name = `auth-${randomBytes(6).toString("hex")}`;
    try {
      const record = await this.#apply({ name, target, message, createdBy: AUTH_LOCK_CREATOR });
      await this.#d.audit({
        event_type: "lock.created",
        user_name: "",
        success: true,
        fields: { emitted_by: AUTH_LOCK_CREATOR, lock: name, target: describeTarget(target), expires: "" },
      });
      return record;
    } catch (err) {
      this.#d.logger.error({ err, target: describeTarget(target) }, "creating a lock failed");
      return undefined;
    }
  }

  /** Removes Lock resources whose expiry passed. Safe on every replica at once. */
  sweep(): Promise<void> {
    this.#sweeping ??= this.#sweepOnce().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  async #sweepOnce(): Promise<void> {
    if (!this.#d.writer || this.#closed) return;
    const now = this.#d.clock.now().getTime();
    for (const l of this.#d.source.list("Lock")) {
      if (!l.spec.expires || Date.parse(l.spec.expires) > now) continue;
      try {
        await this.#d.writer.remove("Lock", l.metadata.name);
        this.#d.logger.info({ lock: l.metadata.name }, "expired lock removed");
      } catch (err) {
        // Another replica was first (not found), or the Lock lives in a hand-written file that
        // only its author edits (bad parameter): expired, it counts for nothing anyway.
        if (isNotFound(err) || hasCode(err, "bad_parameter")) continue;
        this.#d.logger.warn({ err, lock: l.metadata.name }, "removing an expired lock failed");
      }
    }
  }

  #writer(): ResourceWriter {
    if (!this.#d.writer) throw new NotImplementedError("this auth server cannot write resources");
    return this.#d.writer;
  }

  #expiryOf(req: CreateLockRequest__Output): Date | undefined {
    const ttl = Number(req.ttl_seconds);
    if (req.expires !== "" && ttl !== 0) throw new BadParameterError("give expires or ttl_seconds, not both");
    const now = this.#d.clock.now().getTime();
    if (req.expires !== "") {
      const at = Date.parse(req.expires);
      if (!RFC3339.test(req.expires) || Number.isNaN(at))
        throw new BadParameterError("expires must be an RFC 3339 time, e.g. 2030-01-01T00:00:00Z");
      if (at <= now) throw new BadParameterError("expires is in the past");
      return new Date(at);
    }
    if (!Number.isInteger(ttl) || ttl < 0) throw new BadParameterError("ttl_seconds must be >= 0");
    if (ttl > MAX_TTL_SECONDS) throw new BadParameterError("ttl_seconds is too long (at most 10 years)");
    return ttl === 0 ? undefined : new Date(now + ttl * 1000);
  }

  async #apply(o: {
    name: string;
    target: LockTarget;
    message: string;
    expires?: Date | undefined;
    createdBy: string;
  }): Promise<LockRecord> {
    const writer = this.#writer();
    // Never overwrite: replacing a lock could shorten or lift it.
    if (this.#d.source.get("Lock", o.name)) throw new AlreadyExistsError(`lock ${o.name} already exists`);
    const createdAt = this.#d.clock.now();
    const resource: Lock = {
      apiVersion: API_VERSION,
      kind: "Lock",
      metadata: { name: o.name, creationTimestamp: createdAt.toISOString().replace(/\.\d+Z$/, "Z") },
      spec: {
        target: specTarget(o.target),
        ...(o.message ? { message: o.message } : {}),
        ...(o.expires ? { expires: o.expires.toISOString() } : {}),
        created_by: o.createdBy,
      },
    };
    await writer.apply(resource);
    // The writers return once their source shows the write; rebuild anyway so this replica
    // enforces it before the call returns whatever the source's event timing.
    this.#changed();
    const stored = this.#d.source.get("Lock", o.name);
    return stored ? lockRecordOf(stored, createdAt) : lockRecordOf(resource, createdAt);
  }

  #rebuild(): void {
    const seen = new Set<string>();
    const now = this.#d.clock.now();
    this.#records = this.#d.source
      .list("Lock")
      .filter((l) => !l.metadata.deletionTimestamp)
      .map((l) => {
        seen.add(l.metadata.name);
        let first = this.#firstSeen.get(l.metadata.name);
        if (!first) {
          first = now;
          this.#firstSeen.set(l.metadata.name, first);
        }
        return lockRecordOf(l, first);
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const name of this.#firstSeen.keys()) if (!seen.has(name)) this.#firstSeen.delete(name);
    this.#armExpiry();
  }

  #changed(): void {
    if (this.#closed) return;
    this.#rebuild();
    for (const fn of this.#listeners) {
      try {
        fn();
      } catch (err) {
        this.#d.logger.error({ err }, "a lock listener failed");
      }
    }
  }

  /** Fires at the next expiry: the set in force shrinks then, and the resource can be swept. */
  #armExpiry(): void {
    if (this.#expiryTimer) clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
    const now = this.#d.clock.now().getTime();
    let next = Number.POSITIVE_INFINITY;
    for (const l of this.#records) {
      const at = l.expires?.getTime();
      if (at !== undefined && at > now && at < next) next = at;
    }
    if (next === Number.POSITIVE_INFINITY) return;
    // +1 ms: a lock counts while now < expires, so fire just after.
    this.#expiryTimer = setTimeout(
      () => {
        this.#changed();
        void this.sweep();
      },
      Math.min(next - now + 1, MAX_TIMER_MS),
    );
    this.#expiryTimer.unref();
  }
}
