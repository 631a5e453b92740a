// Change notifications between the processes that share one backend (Backend.publish/subscribe):
// the checks both implementations apply and the in-process fan-out they share. SQLite serves one
// process (embedded), so delivery there is in-process to every backend open on the same file;
// PostgreSQL uses LISTEN/NOTIFY (postgres-notify.ts).
import { resolve } from "node:path";
import { BadParameterError } from "../errors.ts";
import type { NotificationHandler } from "./backend.ts";

const CHANNEL = /^[a-z][a-z0-9_]{0,39}$/;
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; the same bound for every backend. */
export const MAX_NOTIFY_PAYLOAD_BYTES = 7_900;

export function checkChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new BadParameterError("channel must match [a-z][a-z0-9_]{0,39}");
}

export function checkPayload(payload: string): void {
  if (Buffer.byteLength(payload) > MAX_NOTIFY_PAYLOAD_BYTES) {
    throw new BadParameterError(`notification payload is over ${MAX_NOTIFY_PAYLOAD_BYTES} bytes`);
  }
}

/** Handlers by channel; a throwing handler never keeps the message from the others. */
export class LocalNotifier {
  readonly #handlers = new Map<string, Set<NotificationHandler>>();
  #listening = true;

  add(channel: string, handler: NotificationHandler): () => boolean {
    const set = this.#handlers.get(channel) ?? new Set<NotificationHandler>();
    set.add(handler);
    this.#handlers.set(channel, set);
    /** Returns true when that was the channel's last handler. */
    return () => {
      set.delete(handler);
      if (set.size > 0 || this.#handlers.get(channel) !== set) return false;
      this.#handlers.delete(channel);
      return true;
    };
  }

  channels(): string[] {
    return [...this.#handlers.keys()];
  }

  /** Delivered on a later tick: a publisher never runs subscribers inside its own call. */
  deliver(channel: string, payload: string): void {
    const set = this.#handlers.get(channel);
    if (!set) return;
    for (const h of [...set]) setImmediate(() => safe(() => h.message(payload)));
  }

  get listening(): boolean {
    return this.#listening;
  }

  /** Tells every handler (once per change) whether messages can be missed from now on. */
  setListening(on: boolean): void {
    if (this.#listening === on) return;
    this.#listening = on;
    for (const set of this.#handlers.values()) for (const h of [...set]) safe(() => h.listening?.(on));
  }
}

function safe(fn: () => void): void {
  try {
    fn();
  } catch {
    // A subscriber's failure is its own; the others still get the message.
  }
}

/** One notifier per database file, with a count of the backends that hold it. */
const byFile = new Map<string, { notifier: LocalNotifier; users: number }>();

/** The notifier of a SQLite file (":memory:" is private to its backend); `release` when closing. */
export function sqliteNotifier(path: string): { notifier: LocalNotifier; release: () => void } {
  if (path === ":memory:") return { notifier: new LocalNotifier(), release: () => {} };
  const key = resolve(path);
  const entry = byFile.get(key) ?? { notifier: new LocalNotifier(), users: 0 };
  entry.users++;
  byFile.set(key, entry);
  let released = false;
  return {
    notifier: entry.notifier,
    release: () => {
      if (released) return;
      released = true;
      entry.users--;
      if (entry.users === 0 && byFile.get(key) === entry) byFile.delete(key);
    },
  };
}
