// ListNodes' filtering and paging (docs/web-api.md): auth filters the caller's visible nodes by
// search text, a label selector and status, sorts them by hostname then ID, and answers one page
// with the key of the next. A key names a position in that order (not an offset), so a node
// joining or leaving between two requests neither repeats nor skips the others.
import { BadParameterError } from "../../core/errors.ts";
import type { AccessChecker } from "../../core/rbac/access-checker.ts";
import type { ListNodesRequest__Output } from "../../proto/generated/svc/v1/ListNodesRequest.ts";
import type { ListNodesResponse } from "../../proto/generated/svc/v1/ListNodesResponse.ts";
import type { Node } from "../../proto/generated/svc/v1/Node.ts";
import type { NodeRecord } from "./nodes.ts";

export const MAX_NODES_LIMIT = 500;
const MAX_SELECTOR_TERMS = 16;
const MAX_TEXT = 1024;

interface LabelTerm {
  key: string;
  value?: string;
}

/** `k=v,k2=v2` (a bare `k`: the key exists). Throws BadParameterError on a malformed selector. */
export function parseLabelSelector(text: string): LabelTerm[] {
  if (text.trim() === "") return [];
  const terms = text.split(",").map((part) => {
    const i = part.indexOf("=");
    const key = (i < 0 ? part : part.slice(0, i)).trim();
    if (!/^[A-Za-z0-9._/-]{1,253}$/.test(key))
      throw new BadParameterError(`labels: ${JSON.stringify(part.slice(0, 64))} is not k=v or k`);
    return i < 0 ? { key } : { key, value: part.slice(i + 1).trim() };
  });
  if (terms.length > MAX_SELECTOR_TERMS)
    throw new BadParameterError(`labels: at most ${MAX_SELECTOR_TERMS} terms`);
  return terms;
}

const sortKey = (n: { hostname: string; id: string }): [string, string] => [n.hostname, n.id];

function compareKeys(a: [string, string], b: [string, string]): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

// Opaque to clients (base64url), so the order's fields can change without breaking links.
export function encodeNodeKey(n: { hostname: string; id: string }): string {
  return Buffer.from(JSON.stringify(sortKey(n))).toString("base64url");
}

function decodeNodeKey(key: string): [string, string] {
  const bad = new BadParameterError("start_key is invalid (use a next_key from a previous answer)");
  if (key.length > MAX_TEXT || !/^[A-Za-z0-9_-]+$/.test(key)) throw bad;
  try {
    const v: unknown = JSON.parse(Buffer.from(key, "base64url").toString("utf8"));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string")
      return [v[0], v[1]];
  } catch {
    // falls through to the same answer as a well-formed but wrong key
  }
  throw bad;
}

export function nodeView(n: NodeRecord, logins?: string[]): Node {
  return {
    id: n.id,
    hostname: n.hostname,
    addresses: n.addresses,
    labels: n.labels,
    status: n.online ? "online" : "offline",
    last_heartbeat_unix_ms: n.lastHeartbeat.getTime(),
    version: n.version,
    logins: logins ?? [],
    ...(n.tunnel ? { tunnel: { proxy_id: n.tunnel.proxyId, peer_addr: n.tunnel.peerAddr } } : {}),
  };
}

export function queryNodes(
  records: readonly NodeRecord[],
  checker: AccessChecker,
  req: ListNodesRequest__Output,
): ListNodesResponse {
  if (req.search.length > MAX_TEXT) throw new BadParameterError("search is too long");
  if (req.labels.length > MAX_TEXT) throw new BadParameterError("labels is too long");
  if (req.status !== "" && req.status !== "online" && req.status !== "offline")
    throw new BadParameterError('status must be "online", "offline" or empty');
  if (req.limit < 0 || req.limit > MAX_NODES_LIMIT)
    throw new BadParameterError(`limit must be 0 (all) or 1..${MAX_NODES_LIMIT}`);
  const terms = parseLabelSelector(req.labels);
  const start = req.start_key === "" ? undefined : decodeNodeKey(req.start_key);
  const needle = req.search.trim().toLowerCase();

  const matches = (n: NodeRecord): boolean => {
    if (req.status !== "" && (n.online ? "online" : "offline") !== req.status) return false;
    for (const t of terms) {
      const v = n.labels[t.key];
      if (v === undefined || (t.value !== undefined && v !== t.value)) return false;
    }
    if (needle !== "") {
      const hit =
        n.hostname.toLowerCase().includes(needle) ||
        n.id.toLowerCase().includes(needle) ||
        Object.entries(n.labels).some(([k, v]) => `${k}=${v}`.toLowerCase().includes(needle));
      if (!hit) return false;
    }
    // The access check last: it is the dearest test.
    return checker.canSeeNode(n.labels);
  };

  const found = records.filter(matches).sort((a, b) => compareKeys(sortKey(a), sortKey(b)));
  const from = start ? found.findIndex((n) => compareKeys(sortKey(n), start) >= 0) : 0;
  const begin = from < 0 ? found.length : from;
  const end = req.limit === 0 ? found.length : Math.min(found.length, begin + req.limit);
  const page = found.slice(begin, end);
  const next = found[end];
  return {
    nodes: page.map((n) => nodeView(n, req.with_logins ? checker.loginsFor(n.labels) : undefined)),
    next_key: next ? encodeNodeKey(next) : "",
    total_count: found.length,
  };
}
