// The state backend seam: runtime state that auth keeps (web sessions, WebAuthn devices, password
// hashes, recordings index, node heartbeats, token redemptions, bot generations, locks) plus the
// append-only audit log. SQLite (embedded) and PostgreSQL (several auth replicas) implement it;
// nothing above this interface knows which one it has.
import type { JsonObject, JsonValue } from "../json.ts";

/** One stored value. `revision` grows on every write anywhere in the backend (a global sequence). */
export interface Item {
  key: string;
  value: JsonValue;
  revision: number;
  /** When the item stops being visible; undefined means it never expires. */
  expires?: Date;
}

export interface WriteOptions {
  /** Time to live from now (per the backend's clock). */
  ttlMs?: number;
  /** Absolute expiry; wins over ttlMs when both are given. */
  expires?: Date;
  /**
   * put only: the write may be committed in one transaction with other batched puts of the same
   * event-loop turn (SQLite; PostgreSQL writes each alone). It settles after that commit, and a
   * failed commit rejects every put in it. It may commit after a write of the same key that
   * does not batch and was issued later in the same turn: only for records whose writers allow
   * for that (node heartbeats).
   */
  batch?: boolean;
}

/** One item of an all-or-nothing `createAll`. */
export interface CreateEntry {
  key: string;
  value: JsonValue;
  opts?: WriteOptions;
}

export interface RangeOptions {
  /** At most this many items, ordered by key. */
  limit?: number;
}

/** An audit event as written by auth. The server sets `id` and `time`. */
export interface AuditEventInput {
  event_type: string;
  user_name: string;
  /** success or failure of the audited action, when it has one */
  success?: boolean;
  /** event-specific fields; never secrets */
  fields?: JsonObject;
  /** set by the server when absent */
  time?: Date;
}

export interface AuditEvent {
  id: string;
  time: Date;
  event_type: string;
  user_name: string;
  success?: boolean;
  fields: JsonObject;
}

export interface AuditQuery {
  type?: string;
  user?: string;
  startTime?: Date;
  endTime?: Date;
  limit: number;
  offset: number;
}

export interface AuditPage {
  items: AuditEvent[];
  /** Matches, counted up to offset + AUDIT_COUNT_CAP (validate.ts): that value means "at least". */
  totalCount: number;
}

/** A subscriber of Backend.subscribe. */
export interface NotificationHandler {
  /** A payload published on the channel by any process sharing this backend (this one included). */
  message(payload: string): void;
  /**
   * true once messages are received (told at subscribe when already so); false when messages
   * may be missed from now on (the listening connection was lost), until the next true.
   */
  listening?(on: boolean): void;
}

export interface Backend {
  /** Throws NotFoundError when absent or expired. */
  get(key: string): Promise<Item>;
  /** Writes unconditionally (create or replace). */
  put(key: string, value: JsonValue, opts?: WriteOptions): Promise<Item>;
  /** Creates only when absent (an expired item counts as absent); else AlreadyExistsError. */
  create(key: string, value: JsonValue, opts?: WriteOptions): Promise<Item>;
  /**
   * Creates every item in one transaction, or none: AlreadyExistsError when any key exists (an
   * expired item counts as absent). For records that must never be visible one without the other
   * (a spent join token and the node it admitted).
   */
  createAll(entries: readonly CreateEntry[]): Promise<Item[]>;
  /**
   * Replaces the value only if the stored revision equals `expectedRevision`.
   * NotFoundError when absent; CompareFailedError when the revision differs.
   */
  compareAndSwap(key: string, expectedRevision: number, value: JsonValue, opts?: WriteOptions): Promise<Item>;
  /** Deletes; NotFoundError when absent. */
  delete(key: string): Promise<void>;
  /** Deletes only if the revision matches (CompareFailedError otherwise). */
  compareAndDelete(key: string, expectedRevision: number): Promise<void>;
  /** Items whose key starts with `prefix`, ordered by key, expired ones excluded. */
  range(prefix: string, opts?: RangeOptions): Promise<Item[]>;
  /** Deletes every item under `prefix`; returns how many. */
  deleteRange(prefix: string): Promise<number>;
  /** Removes expired items now (also done periodically by the implementations). */
  sweepExpired(): Promise<number>;

  /** Appends one audit event (never updated or deleted through this interface). */
  appendAudit(event: AuditEventInput): Promise<AuditEvent>;
  /** Newest first, filtered, with the total count of matches. */
  searchAudit(query: AuditQuery): Promise<AuditPage>;

  /**
   * Change notifications to every process sharing this backend (auth replicas on one PostgreSQL;
   * the one process of an embedded SQLite file). Best effort and small (under 7,900 bytes): what
   * must not be lost is state, and a subscriber that may have missed some is told (`listening`).
   */
  publish(channel: string, payload: string): Promise<void>;
  /** Returns the unsubscribe. Channel: [a-z][a-z0-9_]{0,39}. */
  subscribe(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>;

  close(): Promise<void>;
}
