// Every command of the two CLIs and of svcd answers --help (exit 0, its own usage line); usage errors exit 2;
// commands that need a session say "not logged in" with exit 3. No platform needed.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "./cli-fixture.ts";

const SVC = [
  "",
  "ping",
  "login",
  "status",
  "logout",
  "ls",
  "certs",
  "ssh",
  "apps",
  "apps ls",
  "apps login",
  "apps logout",
  "apps config",
];
const SVCD = ["", "start", "auth", "proxy", "agent", "agentless", "bot", "operator"];
const SVCCTL = [
  "",
  "users",
  "users add",
  "users ls",
  "users rm",
  "users reset",
  "roles ls",
  "tokens add",
  "tokens ls",
  "tokens rm",
  "nodes ls",
  "nodes rm",
  "agent-identities add",
  "agent-identities ls",
  "agent-identities rm",
  "export",
  "audit search",
  "lock add",
  "lock ls",
  "lock rm",
  "ca",
  "ca status",
  "ca rotate",
];

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "svc-cli-help-"));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

// Concurrent: each case is a separate process start, and they do not share state.
describe.concurrent("--help on every command", () => {
  for (const [prog, commands] of [
    ["svc", SVC],
    ["svcctl", SVCCTL],
    ["svcd", SVCD],
  ] as const) {
    for (const c of commands) {
      it(`${prog} ${c} --help`, async () => {
        const args = [...(c ? c.split(" ") : []), "--help"];
        const r = await run(prog, args, { env: { SVC_HOME: home } });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain(`Usage: ${prog}${c ? ` ${c}` : ""} `);
        expect(r.stdout).toMatch(/--help/);
      });
    }
  }
});

describe("exit codes without a platform", () => {
  it("an unknown command or a missing argument is a usage error (2)", async () => {
    expect((await run("svc", ["frobnicate"], { env: { SVC_HOME: home } })).code).toBe(2);
    expect((await run("svcctl", ["users", "add"], { env: { SVC_HOME: home } })).code).toBe(2);
    const bad = await run("svcctl", ["export", "--type", "nope"], { env: { SVC_HOME: home } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/app-jwt, user-ca, host-ca/);
  });

  it("commands needing a session exit 3 with a hint to log in", async () => {
    for (const [prog, args] of [
      ["svc", ["status"]],
      ["svc", ["ls"]],
      ["svc", ["apps", "ls"]],
      ["svc", ["apps", "config", "grafana"]],
      ["svcctl", ["users", "ls"]],
    ] as const) {
      const r = await run(prog, [...args], { env: { SVC_HOME: home } });
      expect(r.code, `${prog} ${args.join(" ")}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toMatch(/not logged in.*svc login/);
    }
  });

  it("svc login on first contact without --ca refuses (2) and explains", async () => {
    const r = await run("svc", ["login", "--proxy", "127.0.0.1:9"], { env: { SVC_HOME: home } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--ca/);
  });

  it("svcctl export without a CA store is not found (5) and creates nothing", async () => {
    const dataDir = join(home, "no-data");
    const r = await run("svcctl", ["export", "--type", "user-ca", "--data-dir", dataDir], {
      env: { SVC_HOME: home },
    });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/no CA folder/);
  });
});
