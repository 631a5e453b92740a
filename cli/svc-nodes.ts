// `svc ls`: the nodes the caller's roles let them see, with labels (GET /v1/webapi/nodes).
import { formatLabels, printJson, printTable } from "./output.ts";
import { requireSession } from "./profile.ts";
import { proxyCall } from "./proxy-client.ts";
import { targetOf } from "./svc-session.ts";

export interface NodeItem {
  id: string;
  hostname: string;
  addresses: string[];
  labels: Record<string, string>;
  status: string;
  last_heartbeat?: string;
  version: string;
}

/** Every node the caller may see: the route answers pages (500 at most), followed by next_key. */
export async function listNodes(): Promise<{ sessionId: string; nodes: NodeItem[] }> {
  const p = await requireSession();
  const nodes: NodeItem[] = [];
  let key = "";
  do {
    const r = await proxyCall<{ items: NodeItem[]; next_key?: string }>(
      targetOf(p),
      "GET",
      `/v1/webapi/nodes?limit=500${key ? `&start_key=${encodeURIComponent(key)}` : ""}`,
      { sessionId: p.session_id },
    );
    nodes.push(...r.items);
    key = r.next_key ?? "";
  } while (key !== "");
  return { sessionId: p.session_id, nodes };
}

export async function ls(opts: { json?: boolean; label?: string[] }): Promise<void> {
  const want = (opts.label ?? []).map((l) => {
    const i = l.indexOf("=");
    return i < 0 ? [l, undefined] : [l.slice(0, i), l.slice(i + 1)];
  });
  const { nodes } = await listNodes();
  const shown = nodes
    .filter((n) =>
      want.every(([k, v]) => k !== undefined && k in n.labels && (v === undefined || n.labels[k] === v)),
    )
    .sort((a, b) => (a.hostname < b.hostname ? -1 : 1));
  if (opts.json) {
    printJson(shown);
    return;
  }
  printTable(
    ["NODE", "STATUS", "ADDRESS", "LABELS"],
    shown.map((n) => [n.hostname, n.status, n.addresses.join(","), formatLabels(n.labels)]),
  );
}
