// Which registered nodes are agentless, under their own small prefix of the state backend. Every
// certificate issue needs them (their <login>@<node id> principals, user-cert-content.ts); a
// cluster usually has none or a few, so that read must not scan every registration. Written at
// join and removed with the node (join-agent.ts); the agentless probe writes it again for nodes
// registered before the index existed (agent-probe.ts).
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { isNotFound } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { NodeStore } from "./nodes.ts";
import type { PrincipalNode } from "./user-cert-content.ts";

const PREFIX = "agentless-nodes/";

/**
 * How long one read of the agentless nodes serves later certificates, per backend and process. A
 * backend range under load cost about a quarter of IssueUserCerts' server time (bench auth,
 * profiled), so it is not repeated per call. A node joined or removed on this replica is seen at
 * once; on another replica within this time.
 */
export const AGENTLESS_CACHE_MS = 2000;
const cache = new WeakMap<Backend, { at: number; nodes: Promise<PrincipalNode[]> }>();

export async function indexAgentless(backend: Backend, id: string): Promise<void> {
  await backend.put(PREFIX + encodeURIComponent(id), { id });
  cache.delete(backend);
}

export async function unindexAgentless(backend: Backend, id: string): Promise<void> {
  await backend.delete(PREFIX + encodeURIComponent(id)).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
  cache.delete(backend);
}

export async function listAgentlessIds(backend: Backend): Promise<string[]> {
  return (await backend.range(PREFIX)).map((i) => String((i.value as JsonObject)["id"]));
}

/** The agentless nodes with their current labels (node records), reused for AGENTLESS_CACHE_MS. */
export function cachedAgentlessNodes(backend: Backend, clock: Clock): Promise<PrincipalNode[]> {
  const now = clock.now().getTime();
  const hit = cache.get(backend);
  if (hit && now - hit.at < AGENTLESS_CACHE_MS) return hit.nodes;
  const store = new NodeStore({ backend, clock });
  const nodes = (async () => {
    const out: PrincipalNode[] = [];
    for (const id of await listAgentlessIds(backend)) {
      const n = await store.get(id);
      if (n) out.push({ id: n.id, hostname: n.hostname, labels: n.labels, agentless: true });
    }
    return out;
  })();
  cache.set(backend, { at: now, nodes });
  nodes.catch(() => cache.delete(backend));
  return nodes;
}
