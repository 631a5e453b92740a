// Locks as every enforcement point reads them: a target (a user, a role, a bot, a node or one
// certificate's key id), a message for whoever is refused, an optional expiry. Pure: the same
// decision runs in auth, in agents and in proxies (docs/locks.md).
import type { Lock, Lock__Output } from "../../proto/generated/svc/v1/Lock.ts";
import { BadParameterError } from "../errors.ts";

export type LockTarget =
  | { user: string }
  | { role: string }
  | { bot: string }
  | { node: string }
  | { keyId: string };

export interface LockRecord {
  name: string;
  target: LockTarget;
  message: string;
  expires?: Date;
  createdBy: string;
  createdAt: Date;
}

/** What a session/certificate is, as an enforcement point knows it. */
export interface LockSubject {
  user?: string;
  roles?: readonly string[];
  bot?: string;
  node?: string;
  keyId?: string;
}

function covers(target: LockTarget, s: LockSubject): boolean {
  if ("user" in target) return s.user !== undefined && s.user === target.user;
  if ("role" in target) return s.roles?.includes(target.role) ?? false;
  if ("bot" in target) return s.bot !== undefined && s.bot === target.bot;
  if ("node" in target) return s.node !== undefined && s.node === target.node;
  return s.keyId !== undefined && s.keyId === target.keyId;
}

/** The first lock in force at `now` that covers `subject`, or undefined. */
export function lockCovering(
  locks: readonly LockRecord[],
  subject: LockSubject,
  now: Date,
): LockRecord | undefined {
  return locks.find((l) => (l.expires === undefined || l.expires > now) && covers(l.target, subject));
}

function targetFromProto(t: Lock__Output["target"]): LockTarget {
  if (t?.user) return { user: t.user };
  if (t?.role) return { role: t.role };
  if (t?.bot) return { bot: t.bot };
  if (t?.node) return { node: t.node };
  if (t?.key_id) return { keyId: t.key_id };
  throw new BadParameterError("lock has no target");
}

function dateOf(text: string): Date | undefined {
  if (text === "") return undefined;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export function lockFromProto(l: Lock__Output): LockRecord {
  const expires = dateOf(l.expires);
  return {
    name: l.name,
    target: targetFromProto(l.target),
    message: l.message,
    ...(expires ? { expires } : {}),
    createdBy: l.created_by,
    createdAt: dateOf(l.created_at) ?? new Date(0),
  };
}

export function lockToProto(l: LockRecord): Lock {
  const t = l.target;
  return {
    name: l.name,
    target:
      "user" in t
        ? { user: t.user }
        : "role" in t
          ? { role: t.role }
          : "bot" in t
            ? { bot: t.bot }
            : "node" in t
              ? { node: t.node }
              : { key_id: t.keyId },
    message: l.message,
    expires: l.expires ? l.expires.toISOString() : "",
    created_by: l.createdBy,
    created_at: l.createdAt.toISOString(),
  };
}

/**
 * The lock's message as a terminal may show it: control characters other than line breaks and
 * tabs become U+FFFD. CreateLock refuses them, but a Lock applied as a resource (a folder file,
 * kubectl) is not checked there, and the message is printed on every covered user's terminal.
 */
export function printableMessage(message: string): string {
  let out = "";
  for (const ch of message) {
    const c = ch.charCodeAt(0);
    out += (c < 0x20 && c !== 0x09 && c !== 0x0a) || (c >= 0x7f && c <= 0x9f) ? "\uFFFD" : ch;
  }
  return out;
}

/**
 * What a refused caller reads: "locked: <message>" ("node is locked: <message>" for a node lock).
 * The message is the admin's text; without one, the lock's name (never a secret either).
 */
export function lockRefusal(lock: LockRecord): string {
  const why = lock.message || `by lock ${lock.name}`;
  return "node" in lock.target ? `node is locked: ${why}` : `locked: ${why}`;
}

/** The target as one word and value ("user alice"), for logs, audit and listings. */
export function describeTarget(target: LockTarget): string {
  if ("user" in target) return `user ${target.user}`;
  if ("role" in target) return `role ${target.role}`;
  if ("bot" in target) return `bot ${target.bot}`;
  if ("node" in target) return `node ${target.node}`;
  return `key_id ${target.keyId}`;
}
