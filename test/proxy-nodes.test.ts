// GET /v1/webapi/nodes through real HTTPS, the real proxy and auth: server-side search, label
// selector, status and key paging over 600+ nodes, the caller's logins per node, what an ordinary
// user may see, and the 400s for bad parameters.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../core/resources/index.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { PASSWORD, type ProxyFixture, startProxyFixture, USERS } from "./proxy-fixture.ts";

let fx: ProxyFixture;
const bearer = { admin: "", dora: "" };
const N = 600;
const OFFLINE = 5;

type NodeItem = {
  id: string;
  hostname: string;
  labels: Record<string, string>;
  status: string;
  logins: string[];
};
type Page = { items: NodeItem[]; next_key?: string; total_count: number };

const envOf = (i: number) => ["prod", "dev", "staging"][i % 3] ?? "prod";
const pad = (i: number) => String(i).padStart(3, "0");

async function login(username: string): Promise<string> {
  const res = await fx.client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username, password: PASSWORD },
  });
  expect(res.status, res.text).toBe(200);
  return (res.json as { session_id: string }).session_id;
}

async function heartbeat(id: string, hostname: string, labels: Record<string, string>): Promise<void> {
  await fx.auth.service.nodes.heartbeat(id, {
    hostname,
    addresses: ["10.0.0.1:3022"],
    labels,
    version: "1.0.0",
  });
}

beforeAll(async () => {
  fx = await startProxyFixture();
  // dora's role shows only env=dev nodes and grants "deploy" plus her trait login there.
  await fx.source.apply({
    apiVersion: API_VERSION,
    kind: "Role",
    metadata: { name: "dev-only" },
    spec: { allow: { logins: ["deploy", "{{internal.logins}}"], node_labels: { env: "dev" } } },
  } as never);
  await fx.source.apply({
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name: "dora" },
    spec: { roles: ["dev-only"], traits: { logins: ["dora"] } },
  } as never);
  await setPassword(fx.backend, "dora", PASSWORD);
  for (let i = 0; i < N; i++) {
    await heartbeat(`agent-${pad(i)}`, `node-${pad(i)}`, { env: envOf(i), team: i % 2 ? "b" : "a" });
  }
  // Offline nodes: their last heartbeat is older than three intervals.
  const old = new Date(Date.now() - 3600_000).toISOString();
  for (let i = 0; i < OFFLINE; i++) {
    await fx.backend.put(`nodes/agent-old-${i}`, {
      id: `agent-old-${i}`,
      hostname: `old-${i}`,
      addresses: [],
      labels: { env: "dev" },
      version: "0.9.0",
      last: old,
    });
  }
  bearer.admin = await login(USERS.admin);
  bearer.dora = await login("dora");
}, 120_000);
afterAll(async () => {
  await fx?.close();
});

async function get(query: string, who: keyof typeof bearer = "admin") {
  return fx.client.send({
    path: `/v1/webapi/nodes${query}`,
    headers: { authorization: `Bearer ${bearer[who]}` },
  });
}
async function page(query: string, who: keyof typeof bearer = "admin"): Promise<Page> {
  const res = await get(query, who);
  expect(res.status, res.text).toBe(200);
  return res.json as Page;
}
async function walk(query: string, limit: number, who: keyof typeof bearer = "admin"): Promise<NodeItem[]> {
  const out: NodeItem[] = [];
  let key = "";
  for (let pages = 0; pages < 1000; pages++) {
    const p = await page(`?limit=${limit}${query}${key ? `&start_key=${key}` : ""}`, who);
    expect(p.items.length).toBeLessThanOrEqual(limit);
    out.push(...p.items);
    if (!p.next_key) return out;
    key = p.next_key;
  }
  throw new Error("paging did not end");
}

describe("paging", () => {
  it("answers 50 by default, sorted by hostname, with next_key and the total", async () => {
    const p = await page("");
    expect(p.items).toHaveLength(50);
    expect(p.total_count).toBe(N + OFFLINE);
    expect(p.next_key).toMatch(/^[A-Za-z0-9_-]+$/);
    const names = p.items.map((n) => n.hostname);
    expect(names).toEqual([...names].sort());
    expect(names[0]).toBe("node-000");
  });

  it("walking every page with next_key yields each node once, in order", async () => {
    const all = await walk("", 37);
    expect(all).toHaveLength(N + OFFLINE);
    expect(new Set(all.map((n) => n.id)).size).toBe(N + OFFLINE);
    const names = all.map((n) => n.hostname);
    expect(names).toEqual([...names].sort());
    expect((await page("?limit=500")).items).toHaveLength(500);
  });

  it("is stable while nodes join and leave between pages (no repeat, no skip)", async () => {
    const first = await page("?limit=10");
    const next = first.next_key ?? "";
    // A node sorting before the next page joins, and one of the first page leaves.
    await heartbeat("agent-early", "node-000a", { env: "prod" });
    await fx.auth.service.nodes.remove("agent-003");
    try {
      const second = await page(`?limit=10&start_key=${next}`);
      expect(second.items[0]?.hostname).toBe("node-010");
      expect(second.items.map((n) => n.hostname)).not.toContain("node-000a");
    } finally {
      await fx.auth.service.nodes.remove("agent-early");
      await heartbeat("agent-003", "node-003", { env: envOf(3), team: "b" });
    }
  });
});

describe("filters", () => {
  it("search: case-insensitive substring of hostname, ID or key=value label", async () => {
    const byName = await page("?search=NODE-01&limit=500");
    expect(byName.items.map((n) => n.hostname)).toEqual(Array.from({ length: 10 }, (_, i) => `node-01${i}`));
    expect(byName.total_count).toBe(10);
    expect((await page("?search=agent-old&limit=500")).total_count).toBe(OFFLINE);
    const byLabel = await page("?search=env%3Dstag&limit=500");
    expect(byLabel.total_count).toBe(N / 3);
    expect(byLabel.items.every((n) => n.labels.env === "staging")).toBe(true);
  });

  it("labels: every k=v must match; a bare key asks only that it exists", async () => {
    const p = await page(`?labels=${encodeURIComponent("env=prod,team=a")}&limit=500`);
    expect(p.total_count).toBe(N / 6);
    expect(p.items.every((n) => n.labels.env === "prod" && n.labels.team === "a")).toBe(true);
    expect((await page("?labels=team")).total_count).toBe(N);
    expect((await page("?labels=nosuch")).total_count).toBe(0);
  });

  it("status: online and offline", async () => {
    const off = await page("?status=offline");
    expect(off.items.map((n) => n.hostname)).toEqual(["old-0", "old-1", "old-2", "old-3", "old-4"]);
    expect(off.items.every((n) => n.status === "offline")).toBe(true);
    expect((await page("?status=online")).total_count).toBe(N);
    expect((await page("?status=&search=&labels=")).total_count).toBe(N + OFFLINE);
  });

  it("filters combine, and a page past the matches is empty", async () => {
    const p = await page(`?labels=env%3Ddev&status=offline&search=old-3`);
    expect(p.items.map((n) => n.hostname)).toEqual(["old-3"]);
    expect(p.next_key).toBeUndefined();
  });
});

describe("an ordinary user", () => {
  it("sees only the nodes and logins their roles allow", async () => {
    const all = await walk("", 500, "dora");
    const devCount = N / 3 + OFFLINE;
    expect(all).toHaveLength(devCount);
    for (const n of all) {
      expect(n.labels.env).toBe("dev");
      expect(n.logins).toEqual(["deploy", "dora"]);
    }
    expect((await page("", "dora")).total_count).toBe(devCount);
  });

  it("learns nothing of hidden nodes from a search or the total", async () => {
    const p = await page("?search=env%3Dprod", "dora");
    expect(p).toEqual({ items: [], total_count: 0 });
    expect((await page("?labels=env%3Dstaging", "dora")).total_count).toBe(0);
  });

  it("an admin's logins on a node come from the admin role", async () => {
    const p = await page("?search=node-001");
    expect(p.items[0]?.logins).toEqual(expect.arrayContaining(["root", USERS.admin]));
  });
});

describe("bad parameters are 400 bad_parameter", () => {
  for (const q of [
    "limit=0",
    "limit=501",
    "limit=ten",
    "status=sleeping",
    "start_key=not%20a%20key",
    "start_key=abc",
    `labels=${encodeURIComponent("=x")}`,
    `labels=${encodeURIComponent("a b=c")}`,
    `labels=${Array.from({ length: 17 }, (_, i) => `k${i}=v`).join(",")}`,
    `search=${"x".repeat(129)}`,
  ]) {
    it(q.slice(0, 60), async () => {
      const res = await get(`?${q}`);
      expect(res.status, res.text).toBe(400);
      expect((res.json as { error: { code: string } }).error.code).toBe("bad_parameter");
    });
  }
});
