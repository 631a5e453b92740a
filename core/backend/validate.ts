// Input checks shared by every backend implementation, so SQLite and PostgreSQL refuse the same
// inputs with the same BadParameterError before touching storage.
import type { Clock } from "../clock.ts";
import { BadParameterError } from "../errors.ts";
import type { JsonObject, JsonValue } from "../json.ts";
import type { AuditEventInput, AuditQuery, CreateEntry, RangeOptions, WriteOptions } from "./backend.ts";

export const MAX_KEY_LENGTH = 1024;
export const MAX_AUDIT_LIMIT = 500;
const MAX_AUDIT_NAME_LENGTH = 256;

export function checkKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0)
    throw new BadParameterError("key must be a non-empty string");
  checkKeyText(key, "key");
  return key;
}

/** A prefix may be empty (everything) for range, but never for deleteRange. */
export function checkPrefix(prefix: unknown, allowEmpty: boolean): string {
  if (typeof prefix !== "string") throw new BadParameterError("prefix must be a string");
  if (!allowEmpty && prefix.length === 0) throw new BadParameterError("prefix must not be empty");
  checkKeyText(prefix, "prefix");
  return prefix;
}

function checkKeyText(s: string, what: string): void {
  if (s.length > MAX_KEY_LENGTH) throw new BadParameterError(`${what} is longer than ${MAX_KEY_LENGTH}`);
  // PostgreSQL text cannot hold NUL; lone surrogates have no UTF-8 form, so ordering would differ.
  if (s.includes("\u0000")) throw new BadParameterError(`${what} must not contain NUL`);
  if (!s.isWellFormed()) throw new BadParameterError(`${what} must be well-formed Unicode`);
}

export function checkRevision(revision: unknown): number {
  if (typeof revision !== "number" || !Number.isSafeInteger(revision) || revision < 1) {
    throw new BadParameterError("revision must be a positive integer");
  }
  return revision;
}

/** Serializes a value for storage; refuses what JSON cannot carry. */
export function encodeValue(value: JsonValue): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new BadParameterError("value is not serializable as JSON", { cause: err });
  }
  if (text === undefined) throw new BadParameterError("value is not a JSON value");
  return text;
}

export function decodeValue(text: string): JsonValue {
  return JSON.parse(text) as JsonValue;
}

/** Absolute expiry in epoch milliseconds, or null for no expiry. */
export function resolveExpiry(opts: WriteOptions | undefined, clock: Clock): number | null {
  if (opts === undefined) return null;
  const now = clock.now().getTime();
  if (opts.expires !== undefined) {
    if (!(opts.expires instanceof Date) || Number.isNaN(opts.expires.getTime())) {
      throw new BadParameterError("expires must be a valid date");
    }
    const at = opts.expires.getTime();
    if (at <= now) throw new BadParameterError("expires must be in the future");
    return at;
  }
  if (opts.ttlMs !== undefined) {
    if (typeof opts.ttlMs !== "number" || !Number.isFinite(opts.ttlMs) || opts.ttlMs <= 0) {
      throw new BadParameterError("ttlMs must be a positive number");
    }
    return now + Math.ceil(opts.ttlMs);
  }
  return null;
}

/** The entries of a createAll, checked and encoded: at least one, keys distinct. */
export function checkEntries(
  entries: readonly CreateEntry[],
  clock: Clock,
): Array<{ key: string; text: string; expires: number | null }> {
  if (!Array.isArray(entries) || entries.length === 0)
    throw new BadParameterError("createAll needs at least one entry");
  const seen = new Set<string>();
  return entries.map((e) => {
    checkKey(e.key);
    if (seen.has(e.key)) throw new BadParameterError(`key ${e.key} appears twice`);
    seen.add(e.key);
    return { key: e.key, text: encodeValue(e.value), expires: resolveExpiry(e.opts, clock) };
  });
}

/** null means "no limit". */
export function checkRangeLimit(opts: RangeOptions | undefined): number | null {
  if (opts?.limit === undefined) return null;
  if (!Number.isSafeInteger(opts.limit) || opts.limit < 1) {
    throw new BadParameterError("range limit must be a positive integer");
  }
  return opts.limit;
}

/**
 * The smallest string greater than every string that starts with `prefix`, in code point order
 * (which is UTF-8 byte order, the order both databases use for keys); undefined when none exists.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const points = Array.from(prefix, (c) => c.codePointAt(0) as number);
  while (points.length > 0) {
    const last = points.pop() as number;
    if (last < 0x10ffff) {
      // Skip the surrogate block: it has no scalar values.
      points.push(last + 1 === 0xd800 ? 0xe000 : last + 1);
      return String.fromCodePoint(...points);
    }
  }
  return undefined;
}

export interface CheckedAuditEvent {
  time: number;
  event_type: string;
  user_name: string;
  success: boolean | null;
  fields: JsonObject;
  fieldsText: string;
}

/** No NUL (PostgreSQL text cannot hold it) and no lone surrogate (no UTF-8 form). */
const plainText = (s: string): boolean => !s.includes("\u0000") && s.isWellFormed();

export function checkAuditInput(event: AuditEventInput, clock: Clock): CheckedAuditEvent {
  if (typeof event !== "object" || event === null)
    throw new BadParameterError("audit event must be an object");
  const { event_type, user_name, success, fields, time } = event;
  if (
    typeof event_type !== "string" ||
    event_type.length === 0 ||
    event_type.length > MAX_AUDIT_NAME_LENGTH
  ) {
    throw new BadParameterError("event_type must be a non-empty string of at most 256 characters");
  }
  if (typeof user_name !== "string" || user_name.length > MAX_AUDIT_NAME_LENGTH) {
    throw new BadParameterError("user_name must be a string of at most 256 characters");
  }
  if (success !== undefined && typeof success !== "boolean")
    throw new BadParameterError("success must be a boolean");
  const f = fields ?? {};
  if (typeof f !== "object" || f === null || Array.isArray(f))
    throw new BadParameterError("fields must be an object");
  let at: number;
  if (time === undefined) at = clock.now().getTime();
  else if (time instanceof Date && !Number.isNaN(time.getTime())) at = time.getTime();
  else throw new BadParameterError("time must be a valid date");
  if (!plainText(event_type) || !plainText(user_name))
    throw new BadParameterError("audit names must be plain text");
  return {
    time: at,
    event_type,
    user_name,
    success: success ?? null,
    fields: f,
    fieldsText: encodeValue(f),
  };
}

/**
 * searchAudit counts matches up to this many past the page's offset. Counting every match of a
 * wide query (the console's unfiltered first page) took 116 ms of a 118 ms page at a million
 * events on PostgreSQL (37 ms on SQLite); a count that stops keeps every page cheap and the next
 * pages reachable. Past it totalCount reads offset + AUDIT_COUNT_CAP, meaning "at least".
 */
export const AUDIT_COUNT_CAP = 10_000;

export interface CheckedAuditQuery {
  type?: string;
  user?: string;
  start?: number;
  end?: number;
  limit: number;
  offset: number;
  /** count matches up to this many (offset + AUDIT_COUNT_CAP) */
  countCap: number;
}

/** startTime is inclusive and endTime exclusive (a half-open window). */
export function checkAuditQuery(q: AuditQuery): CheckedAuditQuery {
  if (typeof q !== "object" || q === null) throw new BadParameterError("audit query must be an object");
  if (!Number.isSafeInteger(q.limit) || q.limit < 1 || q.limit > MAX_AUDIT_LIMIT) {
    throw new BadParameterError(`limit must be an integer from 1 to ${MAX_AUDIT_LIMIT}`);
  }
  if (!Number.isSafeInteger(q.offset) || q.offset < 0) {
    throw new BadParameterError("offset must be a non-negative integer");
  }
  const out: CheckedAuditQuery = {
    limit: q.limit,
    offset: q.offset,
    countCap: Math.min(Number.MAX_SAFE_INTEGER, q.offset + AUDIT_COUNT_CAP),
  };
  if (q.type !== undefined) {
    if (typeof q.type !== "string") throw new BadParameterError("type filter must be a string");
    out.type = q.type;
  }
  if (q.user !== undefined) {
    if (typeof q.user !== "string") throw new BadParameterError("user filter must be a string");
    out.user = q.user;
  }
  if (q.startTime !== undefined) out.start = checkDate(q.startTime, "startTime");
  if (q.endTime !== undefined) out.end = checkDate(q.endTime, "endTime");
  if (out.start !== undefined && out.end !== undefined && out.start > out.end) {
    throw new BadParameterError("startTime is after endTime");
  }
  for (const s of [out.type, out.user]) {
    if (s !== undefined && (s.includes("\u0000") || !s.isWellFormed())) {
      throw new BadParameterError("audit filters must be plain text");
    }
  }
  return out;
}

function checkDate(d: unknown, what: string): number {
  if (!(d instanceof Date) || Number.isNaN(d.getTime()))
    throw new BadParameterError(`${what} must be a valid date`);
  return d.getTime();
}
