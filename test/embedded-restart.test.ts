// Embedded mode restarts (issue 17): `svcd start` stopped with SIGTERM, then killed with kill -9,
// and started again on the same data folder: a user logged in with `svc` before is still logged
// in after (sessions live in the SQLite state backend), no new login. And `svc` retries once,
// after a short backoff, a call that could not reach the proxy: a TCP front between svc and the
// proxy resets connections before the TLS handshake, as a restarting proxy does.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Daemon, run, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";

/** A TCP front to the proxy that resets the next `resets` connections at once, then forwards. */
class Front {
  resets = 0;
  connections = 0;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  port = 0;

  constructor(target: () => number) {
    this.#server = createServer((client) => {
      this.connections++;
      this.#sockets.add(client);
      client.on("close", () => this.#sockets.delete(client));
      client.on("error", () => {});
      if (this.resets > 0) {
        this.resets--;
        client.resetAndDestroy();
        return;
      }
      const upstream = connect({ host: "127.0.0.1", port: target() });
      this.#sockets.add(upstream);
      upstream.on("close", () => {
        this.#sockets.delete(upstream);
        client.destroy();
      });
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    const addr = this.#server.address();
    this.port = typeof addr === "object" && addr ? addr.port : 0;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

describe("svcd start restarted: sessions survive, svc retries once", () => {
  let dir = "";
  let daemon: Daemon | undefined;
  const ports = { auth: 0, proxy: 0, diag: 0 };
  let front: Front;
  let env: NodeJS.ProcessEnv = {};

  const launch = async (): Promise<Daemon> => {
    const d = spawnDaemon(
      [
        "start",
        "--auth-listen",
        `127.0.0.1:${ports.auth}`,
        "--proxy-listen",
        `127.0.0.1:${ports.proxy}`,
        "--diag-listen",
        `127.0.0.1:${ports.diag}`,
      ],
      { SVC_DATA_DIR: join(dir, "data"), SVC_ADMIN_PASSWORD_FILE: "" },
    );
    await waitFor(() => d.output().includes("svc is running") || d.child.exitCode !== null, "svcd start");
    if (d.child.exitCode !== null) throw new Error(`svcd start exited: ${d.output()}`);
    return d;
  };
  const svc = (args: string[]) => run("svc", args, { env });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-embedded-restart-"));
    ports.auth = await freePort();
    ports.proxy = await freePort();
    ports.diag = await freePort();
    front = new Front(() => ports.proxy);
    await front.listen();
    daemon = await launch();
    const reset = /--reset-token (\S+)/.exec(daemon.output())?.[1] ?? "";
    expect(reset).not.toBe("");
    const passwordFile = join(dir, "pw");
    await writeFile(passwordFile, "admin-password-for-tests\n");
    env = { SVC_HOME: join(dir, "home") };
    // Logged in through the front: every later svc call goes through it too.
    const login = await svc([
      "login",
      "--proxy",
      `127.0.0.1:${front.port}`,
      "--ca",
      join(dir, "data", "host-ca.pem"),
      "--reset-token",
      reset,
      "--password-file",
      passwordFile,
    ]);
    expect(login.code, `${login.stdout}\n${login.stderr}`).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await daemon?.stop();
    await front?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  const lsWorks = async () => {
    const r = await svc(["ls"]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stderr).not.toMatch(/log in|not logged in|expired/i);
  };

  it("the session survives a SIGTERM restart: svc ls works after it without a new login", async () => {
    await lsWorks();
    const d = daemon;
    if (!d) throw new Error("no daemon");
    d.child.kill("SIGTERM");
    expect(await d.exited).toBe(0);
    daemon = await launch();
    await lsWorks();
  }, 120_000);

  it("the session survives kill -9 too", async () => {
    const d = daemon;
    if (!d) throw new Error("no daemon");
    d.child.kill("SIGKILL");
    await d.exited;
    expect(d.child.signalCode).toBe("SIGKILL");
    daemon = await launch();
    await lsWorks();
  }, 120_000);

  it("svc retries once a call that never reached the proxy, and only once", async () => {
    // One connection reset (the proxy restarting): the retry gets through.
    front.resets = 1;
    let before = front.connections;
    await lsWorks();
    expect(front.resets).toBe(0);
    expect(front.connections - before).toBeGreaterThanOrEqual(2);

    // Every connection reset: two attempts, then svc gives up with the reason.
    front.resets = 1_000;
    before = front.connections;
    const r = await svc(["ls"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/cannot reach the proxy/);
    expect(front.connections - before).toBe(2);
    front.resets = 0;
  }, 120_000);
});
