// Node record change notifications (docs/proxy-cache.md): every NodeStore write or delete names
// the node on the state backend's publish/subscribe channel, so the inventory feed of every auth
// replica sharing the backend (this one included) reads just the records that changed instead of
// scanning them all. IDs only, never content: a receiver reads the record, so notifications that
// arrive out of order still end on the stored state.
//
// The IDs one event-loop turn writes go out together (one NOTIFY on PostgreSQL, not one per
// heartbeat); the write's caller is answered once they are out. Best effort like every backend notification: a lost one is caught by the feed's
// slow full resync, and a feed that may have missed some (listening false) scans until it hears
// again.
import type { Backend } from "../../core/backend/backend.ts";
import { MAX_NOTIFY_PAYLOAD_BYTES } from "../../core/backend/notify.ts";

export const NODE_CHANGES_CHANNEL = "node_changes";

/** IDs waiting for the end of this turn, per backend (several NodeStores may share one). */
const pending = new WeakMap<Pick<Backend, "publish">, { ids: Set<string>; sent: Promise<void> }>();

/**
 * Names a node whose record was just written or deleted. Published at the end of this turn with
 * every other one of the turn; resolves once published (a writer that closes its backend next
 * has announced its change). Never rejects.
 */
export function announceNodeChange(backend: Pick<Backend, "publish">, agentId: string): Promise<void> {
  let batch = pending.get(backend);
  if (batch === undefined) {
    const ids = new Set<string>();
    const sent = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      pending.delete(backend);
      await Promise.all(
        nodeChangePayloads([...ids]).map((payload) =>
          // A lost notification costs a proxy at most one resync period of that node's change;
          // nothing here can do better than the resync, and the writer's own call must not fail.
          backend.publish(NODE_CHANGES_CHANNEL, payload).catch(() => undefined),
        ),
      );
    });
    batch = { ids, sent };
    pending.set(backend, batch);
  }
  batch.ids.add(agentId);
  return batch.sent;
}

/** JSON arrays of IDs, each under the backend's payload bound. */
export function nodeChangePayloads(ids: readonly string[]): string[] {
  const out: string[] = [];
  let chunk: string[] = [];
  let bytes = 2;
  for (const id of ids) {
    const size = Buffer.byteLength(JSON.stringify(id)) + 1;
    if (chunk.length > 0 && bytes + size > MAX_NOTIFY_PAYLOAD_BYTES) {
      out.push(JSON.stringify(chunk));
      chunk = [];
      bytes = 2;
    }
    chunk.push(id);
    bytes += size;
  }
  if (chunk.length > 0) out.push(JSON.stringify(chunk));
  return out;
}

/** The IDs of one notification; [] for anything else (a receiver never throws on a payload). */
export function parseNodeChanges(payload: string): string[] {
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return [];
  }
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && x.length > 0) : [];
}
