// Two `svcd auth` PROCESSES on one PostgreSQL schema (issue 3): the same manifests folder, one
// shared files CA folder, each with its own gRPC listener. A session created by a login on one is
// valid on the other; a logout on the second is effective on the first. Real processes (bin/svcd),
// a real PostgreSQL, real gRPC clients over TLS 1.3.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { API_VERSION } from "../core/resources/index.ts";
import { type AuthServiceClient, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";
import { type SvcdProcess, sharedClusterCas, spawnPostgresAuth, svcdReady } from "./harness/svcd.ts";

const CLUSTER = "two-auth";
const PASSWORD = "two processes, one database";

describe("two svcd auth processes on one PostgreSQL", () => {
  const pgUrl = testPostgresUrl();
  const schema = uniqueSchemaName("auth_two_proc");
  let dir = "";
  const procs: SvcdProcess[] = [];
  const clients: AuthServiceClient[] = [];

  const start = async (name: string): Promise<SvcdProcess> => {
    const p = await spawnPostgresAuth({ dir, name, cluster: CLUSTER, pgUrl, schema });
    procs.push(p);
    return p;
  };

  let first: AuthServiceClient;
  let second: AuthServiceClient;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-two-auth-"));
    await mkdir(join(dir, "manifests"));
    await writeFile(
      join(dir, "manifests", "dana.yaml"),
      [
        { kind: "Role", metadata: { name: "dev" }, spec: { allow: { logins: ["dana"] } } },
        { kind: "User", metadata: { name: "dana" }, spec: { roles: ["dev"] } },
      ]
        .map((o) => stringify({ apiVersion: API_VERSION, ...o }))
        .join("---\n"),
    );
    // Both at once: they race to create the CAs in the shared folder (one wins, the other loads).
    const a = await start("auth-a");
    const b = await start("auth-b");
    await Promise.all([svcdReady(a), svcdReady(b)]);
    const cas = await sharedClusterCas({
      caDir: join(dir, "ca"),
      cluster: CLUSTER,
      pgUrl,
      schema,
      user: "dana",
      password: PASSWORD,
    });
    const client = (p: SvcdProcess) =>
      createAuthClient({
        address: `127.0.0.1:${p.port}`,
        caPems: [cas.hostCa.certPem],
        serverName: "localhost",
      });
    first = client(a);
    second = client(b);
    clients.push(first, second);
  }, 240_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const p of procs)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGTERM");
    await Promise.all(
      procs.map(async (p) => {
        const t = setTimeout(() => p.child.kill("SIGKILL"), 10_000);
        await p.exited;
        clearTimeout(t);
      }),
    );
    await dropSchema(pgUrl, schema).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it("are two processes with their own listeners", () => {
    const [a, b] = procs;
    expect(a?.child.pid).toBeDefined();
    expect(a?.child.pid).not.toBe(b?.child.pid);
    expect(a?.port).not.toBe(b?.port);
  });

  it("a session created on one is valid on the other; logout on the second ends it on the first", async () => {
    const login = await callUnary(first, "AuthenticateLocal", {
      username: "dana",
      password: PASSWORD,
      client_address: "127.0.0.1",
    });
    const id = login.session?.session_id ?? "";
    expect(id).not.toBe("");

    const onSecond = await callUnary(second, "GetSession", {}, userMetadata(id));
    expect(onSecond.username).toBe("dana");
    expect(onSecond.roles).toEqual(["dev"]);
    expect(onSecond.expires_unix_ms).toBe(login.session?.expires_unix_ms);

    await callUnary(second, "DeleteSession", {}, userMetadata(id));

    await expect(callUnary(first, "GetSession", {}, userMetadata(id))).rejects.toMatchObject({
      code: "not_authenticated",
    });
    await expect(callUnary(second, "GetSession", {}, userMetadata(id))).rejects.toMatchObject({
      code: "not_authenticated",
    });
  }, 60_000);

  it("a wrong password on either is refused the same way", async () => {
    for (const c of [first, second]) {
      await expect(
        callUnary(c, "AuthenticateLocal", { username: "dana", password: "wrong", client_address: "" }),
      ).rejects.toMatchObject({ code: "not_authenticated" });
    }
  }, 60_000);
});
