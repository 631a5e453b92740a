// Two `svcd auth` processes on one PostgreSQL schema and two `svcd proxy` processes that list both
// auths in proxy.auth_addr, plus a load generator over the proxies' HTTPS API: what
// test/auth-restart.test.ts and bench/auth-restart.bench.ts restart auths under. Real processes
// (bin/svcd), real TLS, real PostgreSQL.
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { issueProxyIdentity, PROXY_IDENTITY_FILES } from "../server/roles/proxy-identity.ts";
import { echo } from "./auth-restart-load.ts";
import { freePort } from "./harness/ports.ts";
import { dropSchema, uniqueSchemaName } from "./harness/postgres.ts";
import {
  type SvcdProcess,
  sharedClusterCas,
  spawnSvcd as spawnProcess,
  svcdReady,
  until,
} from "./harness/svcd.ts";
import { HttpsClient } from "./proxy-https-client.ts";
import { mustOpen, type TerminalConnection } from "./terminal-client.ts";

const CLUSTER = "auth-restart";
export const USER = "dana";
export const PASSWORD = "restarts are not outages";
/** the node agent's name (terminals log in there as root) */
export const NODE = "restart-node";

export type { SvcdProcess };

export interface RestartWorld {
  auths: SvcdProcess[];
  proxies: SvcdProcess[];
  /** HTTPS clients of the two proxies (trusting the host CA) */
  clients: HttpsClient[];
  /** the user every session belongs to */
  user: string;
  /** SIGTERM (waits for the drain, returns the exit code) or SIGKILL, then the same auth again, ready */
  restartAuth(i: number, how: "SIGTERM" | "SIGKILL"): Promise<{ code: number | null }>;
  login(client: HttpsClient): Promise<{ status: number; sessionId: string; text: string }>;
  /** a browser terminal to the node through proxy `i` (root), ready and answering an echo */
  terminal(i: number, sessionId: string): Promise<TerminalConnection>;
  close(): Promise<void>;
}

export async function startRestartWorld(pgUrl: string): Promise<RestartWorld> {
  const schema = uniqueSchemaName("auth_restart");
  const dir = await mkdtemp(join(tmpdir(), "svc-auth-restart-"));
  const all: SvcdProcess[] = [];
  const spawnSvcd = (
    name: string,
    role: "auth" | "proxy" | "agent",
    config: string | string[],
    port: number,
    diagPort: number,
  ) => {
    const p = spawnProcess({ dir, name, role, config, port, diagPort, env: { SVC_RESTART_PG_URL: pgUrl } });
    all.push(p);
    return p;
  };
  const ready = (p: SvcdProcess) => svcdReady(p);
  const base = (proxyPort: number) => ({
    version: 1,
    cluster_name: CLUSTER,
    log_level: "info",
    proxy: {
      listen_addr: `127.0.0.1:${proxyPort}`,
      public_addr: `localhost:${proxyPort}`,
      oidc_issuer_url: `https://localhost:${proxyPort}`,
    },
    client_tools: { min_version: "0.1.0", recommended_version: "0.1.0" },
    backend: { type: "postgres", url_env: "SVC_RESTART_PG_URL", schema },
    source: { type: "folder", path: join(dir, "manifests") },
    ca_store: { type: "files", path: join(dir, "ca") },
  });

  const terminals: TerminalConnection[] = [];
  try {
    await mkdir(join(dir, "manifests"));
    await writeFile(
      join(dir, "manifests", "dana.yaml"),
      [
        {
          kind: "Role",
          metadata: { name: "dev" },
          spec: {
            allow: {
              logins: ["root"],
              node_labels: { "*": "*" },
              rules: [{ resources: ["tokens"], verbs: ["create"] }],
            },
          },
        },
        { kind: "User", metadata: { name: USER }, spec: { roles: ["dev"] } },
      ]
        .map((o) => stringify({ apiVersion: API_VERSION, ...o }))
        .join("---\n"),
    );
    const auths: SvcdProcess[] = [];
    for (const i of [0, 1]) {
      const port = await freePort();
      const diagPort = await freePort();
      const config = join(dir, `auth-${i}.yaml`);
      await writeFile(
        config,
        stringify({
          ...base(3080),
          auth: { listen_addr: `127.0.0.1:${port}`, diagnostics_addr: `127.0.0.1:${diagPort}` },
        }),
      );
      auths.push(spawnSvcd(`auth-${i}`, "auth", config, port, diagPort));
    }
    await Promise.all(auths.map(ready));
    const cas = await sharedClusterCas({
      caDir: join(dir, "ca"),
      cluster: CLUSTER,
      pgUrl,
      schema,
      user: USER,
      password: PASSWORD,
    });
    // The identity auth would write into the proxy's Secret, as a folder.
    const identity = await issueProxyIdentity(cas, {
      names: ["localhost", "127.0.0.1"],
      clientName: CLUSTER,
      ttlSeconds: 3600,
      clock: systemClock,
    });
    const identityDir = join(dir, "identity");
    await mkdir(identityDir);
    for (const [field, file] of Object.entries(PROXY_IDENTITY_FILES))
      await writeFile(join(identityDir, file), identity[field as keyof typeof PROXY_IDENTITY_FILES]);
    const proxies: SvcdProcess[] = [];
    for (const i of [0, 1]) {
      const port = await freePort();
      const diagPort = await freePort();
      const config = join(dir, `proxy-${i}.yaml`);
      const b = base(port);
      await writeFile(
        config,
        stringify({
          ...b,
          auth: { listen_addr: "127.0.0.1:1" },
          proxy: {
            ...b.proxy,
            diagnostics_addr: `127.0.0.1:${diagPort}`,
            // Both replicas, as a static list (docs/auth.md "High availability").
            auth_addr: auths.map((a) => `127.0.0.1:${a.port}`).join(","),
            auth_server_name: "localhost",
            identity_dir: identityDir,
            // The load generator is one session going as fast as it can: not a user to slow down.
            limits: { session_requests_per_second: 100_000, session_request_burst: 100_000 },
          },
        }),
      );
      proxies.push(spawnSvcd(`proxy-${i}`, "proxy", config, port, diagPort));
    }
    await Promise.all(proxies.map(ready));
    const clients = proxies.map(
      (p) => new HttpsClient(`https://127.0.0.1:${p.port}`, identity.caPem, "localhost"),
    );

    // A node agent joined with a token dana creates, reaching both auths (the same list) and
    // listening where the proxies dial it.
    const first = clients[0];
    if (!first) throw new Error("no proxy");
    const login = await first.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USER, password: PASSWORD },
    });
    const session = (login.json as { session_id?: string } | undefined)?.session_id ?? "";
    const admin = createAuthClient({
      address: auths.map((a) => `127.0.0.1:${a.port}`).join(","),
      caPems: [cas.hostCa.certPem],
      serverName: "localhost",
    });
    let token = "";
    try {
      token = (
        await callUnary(
          admin,
          "CreateJoinToken",
          { name: NODE, ttl_seconds: 1800, node_labels: {} },
          userMetadata(session),
        )
      ).token;
    } finally {
      admin.close();
    }
    const caFile = join(dir, "host-ca.pem");
    await writeFile(caFile, cas.hostCa.certPem);
    const agentDiag = await freePort();
    const agent = spawnSvcd(
      "agent",
      "agent",
      [
        "--auth",
        auths.map((a) => `127.0.0.1:${a.port}`).join(","),
        "--auth-server-name",
        "localhost",
        "--ca-file",
        caFile,
        "--token",
        token,
        "--data-dir",
        join(dir, "agent"),
        "--hostname",
        NODE,
        "--listen",
        `127.0.0.1:${await freePort()}`,
        "--diag-listen",
        `127.0.0.1:${agentDiag}`,
      ],
      0,
      agentDiag,
    );
    await ready(agent);
    // A new node reaches each proxy's node list (pushed inventory) shortly after it joins.
    for (const client of clients)
      await until(`${NODE} listed by the proxy`, async () => {
        const r = await client.send({
          path: "/v1/webapi/nodes",
          headers: { authorization: `Bearer ${session}` },
        });
        return r.status === 200 && r.text.includes(NODE);
      });

    return {
      auths,
      proxies,
      clients,
      user: USER,
      async restartAuth(i, how) {
        const old = auths[i];
        if (!old) throw new Error(`no auth ${i}`);
        old.child.kill(how);
        const { code } = await old.exited;
        const next = spawnSvcd(old.name, "auth", old.config, old.port, old.diagPort);
        auths[i] = next;
        await ready(next);
        return { code };
      },
      async login(client) {
        const res = await client.send({
          method: "POST",
          path: "/v1/webapi/login",
          body: { username: USER, password: PASSWORD },
        });
        const sessionId = (res.json as { session_id?: string } | undefined)?.session_id ?? "";
        return { status: res.status, sessionId, text: res.text };
      },
      async terminal(i, sessionId) {
        const p = proxies[i];
        if (!p) throw new Error(`no proxy ${i}`);
        const conn = await mustOpen({
          baseUrl: `https://127.0.0.1:${p.port}`,
          caPem: identity.caPem,
          servername: "localhost",
          query: { node: NODE, login: "root" },
          headers: { authorization: `Bearer ${sessionId}` },
          keepOutput: true,
        });
        terminals.push(conn);
        await conn.waitControl("ready", 20_000).catch((err: unknown) => {
          throw new Error(
            `${err instanceof Error ? err.message : String(err)}; controls ${JSON.stringify(conn.controls)}`,
          );
        });
        await echo(conn, `open-${i}`);
        return conn;
      },
      async close() {
        for (const t of terminals) t.ws.terminate();
        await stopAll(all);
        await dropSchema(pgUrl, schema).catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    const logs = all.map((p) => `--- ${p.name}\n${readFileSync(p.log, "utf8").slice(-2000)}`).join("\n");
    await stopAll(all);
    await dropSchema(pgUrl, schema).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`);
  }
}

async function stopAll(all: SvcdProcess[]): Promise<void> {
  await Promise.all(
    all.map(async (p) => {
      if (p.child.exitCode !== null || p.child.signalCode !== null) return;
      p.child.kill("SIGTERM");
      const t = setTimeout(() => p.child.kill("SIGKILL"), 10_000);
      await p.exited;
      clearTimeout(t);
    }),
  );
}
