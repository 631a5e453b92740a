// `svcd start` as a user runs it: the real binary, a fresh data folder, HTTPS ping, the gRPC
// health check over TLS 1.3, first-admin login, restart keeps the CAs, bad config writes nothing;
// the config file's session lifetime (session and cookie) and auth's WebAuthn relying party.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { connect } from "node:tls";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { callUnary, createAuthClient } from "../server/auth/client.ts";
import { freePort } from "./harness/ports.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const svcd = join(root, "bin", "svcd");
const PASSWORD = "embedded-start-password-1";

interface Daemon {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function spawnSvcd(args: string[], env: NodeJS.ProcessEnv): Daemon {
  const child = spawn(svcd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function https(
  port: number,
  ca: string,
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; json: unknown; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        ca,
        servername: "localhost",
        headers: {
          ...(payload ? { "content-type": "application/json", origin: "https://localhost:3080" } : {}),
          ...extraHeaders,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => {
          text += d.toString();
        });
        res.on("end", () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, json, headers: res.headers });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

describe("svcd start (embedded default)", () => {
  let dir: string;
  let dataDir: string;
  let ports: { auth: number; proxy: number; diag: number };
  let daemon: Daemon | undefined;
  let args: string[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-embedded-"));
    dataDir = join(dir, "data");
    ports = { auth: await freePort(), proxy: await freePort(), diag: await freePort() };
    args = [
      "start",
      "--auth-listen",
      `127.0.0.1:${ports.auth}`,
      "--proxy-listen",
      `127.0.0.1:${ports.proxy}`,
      "--diag-listen",
      `127.0.0.1:${ports.diag}`,
    ];
  });

  afterAll(async () => {
    if (daemon && daemon.child.exitCode === null) {
      daemon.child.kill("SIGKILL");
      await daemon.exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a bad config file, names the field, exits non-zero and writes nothing", async () => {
    const badDir = join(dir, "bad");
    const cfg = join(dir, "bad.yaml");
    await writeFile(
      cfg,
      [
        "version: 1",
        "cluster_name: ok",
        "auth: { listen_addr: nonsense }",
        "proxy: { listen_addr: '127.0.0.1:1', public_addr: 'localhost:1', oidc_issuer_url: 'https://localhost:1' }",
        "client_tools: { min_version: 0.1.0, recommended_version: 0.1.0 }",
        "backend: { type: sqlite, path: state.db }",
        "source: { type: folder, path: manifests }",
        "ca_store: { type: files, path: ca }",
        "",
      ].join("\n"),
    );
    const d = spawnSvcd(["start", "--config", cfg], { SVC_DATA_DIR: badDir });
    const code = await d.exited;
    expect(code).not.toBe(0);
    expect(d.output()).toMatch(/auth\.listen_addr/);
    await expect(stat(badDir)).rejects.toThrow();
  });

  it("first start: creates the data folder, serves ping over HTTPS and health over TLS 1.3", async () => {
    const pwFile = join(dir, "admin-password");
    await writeFile(pwFile, `${PASSWORD}\n`, { mode: 0o600 });
    daemon = spawnSvcd(args, { SVC_DATA_DIR: dataDir, SVC_ADMIN_PASSWORD_FILE: pwFile });
    const running = daemon;
    await waitFor(
      () => running.output().includes("svc is running") || running.child.exitCode !== null,
      "start",
    );
    expect(running.child.exitCode, running.output()).toBeNull();
    expect(running.output()).toMatch(/SVC_ADMIN_PASSWORD_FILE/);
    expect(running.output()).not.toContain(PASSWORD);

    // CA keys private, config present, presets shipped.
    for (const f of await readdir(join(dataDir, "ca"))) {
      expect((await stat(join(dataDir, "ca", f))).mode & 0o077).toBe(0);
    }
    expect((await stat(join(dataDir, "state.db"))).mode & 0o077).toBe(0);
    expect(await readFile(join(dataDir, "manifests", "presets.yaml"), "utf8")).toMatch(/name: admin/);
    const ca = await readFile(join(dataDir, "host-ca.pem"), "utf8");

    const ping = await https(ports.proxy, ca, "GET", "/v1/webapi/ping");
    expect(ping.status).toBe(200);
    expect(ping.json).toMatchObject({ server_version: expect.any(String), cluster_name: expect.any(String) });
    await waitFor(async () => (await https(ports.proxy, ca, "GET", "/readyz")).status === 200, "readyz");

    // The auth listener speaks TLS 1.3 only and answers the standard health check.
    const protocol = await new Promise<string | null>((resolve, reject) => {
      const s = connect(
        { host: "127.0.0.1", port: ports.auth, ca, servername: "localhost", ALPNProtocols: ["h2"] },
        () => {
          resolve(s.getProtocol());
          s.end();
        },
      );
      s.on("error", reject);
    });
    expect(protocol).toBe("TLSv1.3");
    await expect(
      new Promise((resolve, reject) => {
        const s = connect({
          host: "127.0.0.1",
          port: ports.auth,
          ca,
          servername: "localhost",
          maxVersion: "TLSv1.2",
        });
        s.on("secureConnect", () => resolve("connected"));
        s.on("error", reject);
      }),
    ).rejects.toThrow();
    const def = protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      grpc: {
        health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials, o: object) => grpc.Client } };
      };
    };
    const hc = new pkg.grpc.health.v1.Health(
      `127.0.0.1:${ports.auth}`,
      grpc.credentials.createSsl(Buffer.from(ca)),
      {
        "grpc.ssl_target_name_override": "localhost",
      },
    ) as unknown as {
      Check(req: { service: string }, cb: (err: Error | null, res?: { status: string }) => void): void;
      close(): void;
    };
    const health = await new Promise<{ status: string } | undefined>((resolve, reject) =>
      hc.Check({ service: "" }, (err, r) => (err ? reject(err) : resolve(r))),
    );
    hc.close();
    expect(health?.status).toBe("SERVING");

    // Metrics on the diagnostics listener, not on the public port.
    const metrics = await fetch(`http://127.0.0.1:${ports.diag}/metrics`);
    expect(await metrics.text()).toMatch(/process_cpu_user_seconds_total/);

    // The first admin logs in with the password from the file.
    const login = await https(ports.proxy, ca, "POST", "/v1/webapi/login", {
      username: "admin",
      password: PASSWORD,
    });
    expect(login.status).toBe(200);
    expect(login.json).toMatchObject({ session_id: expect.any(String) });
  });

  it("drains on SIGTERM and exits 0; a restart keeps the CAs and prints no secret", async () => {
    const running = daemon;
    if (!running) throw new Error("no daemon from the previous test");
    const caBefore = await readFile(join(dataDir, "host-ca.pem"), "utf8");
    running.child.kill("SIGTERM");
    expect(await running.exited).toBe(0);

    daemon = spawnSvcd(args, { SVC_DATA_DIR: dataDir });
    const again = daemon;
    await waitFor(
      () => again.output().includes("svc is running") || again.child.exitCode !== null,
      "restart",
    );
    expect(again.output()).not.toMatch(/one-time secret|SVC_ADMIN_PASSWORD_FILE/);
    expect(await readFile(join(dataDir, "host-ca.pem"), "utf8")).toBe(caBefore);
    const login = await https(ports.proxy, caBefore, "POST", "/v1/webapi/login", {
      username: "admin",
      password: PASSWORD,
    });
    expect(login.status).toBe(200);
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  });

  it("honours auth.session_ttl and proxy.trusted_proxies from the config file", async () => {
    const ca = await readFile(join(dataDir, "host-ca.pem"), "utf8");
    const configPath = join(dataDir, "svc.yaml");
    const original = await readFile(configPath, "utf8");
    /** Restarts with `trusted`; logs in "from" 198.51.100.7; answers the login and its audit event. */
    const loginVia = async (trusted: string[]) => {
      const config = parseYaml(original) as { auth: Record<string, unknown>; proxy: Record<string, unknown> };
      config.auth.session_ttl = "30m";
      config.proxy.trusted_proxies = trusted;
      await writeFile(configPath, stringifyYaml(config));
      const d = spawnSvcd(args, { SVC_DATA_DIR: dataDir });
      try {
        await waitFor(() => d.output().includes("svc is running") || d.child.exitCode !== null, "start");
        expect(d.child.exitCode, d.output()).toBeNull();
        const login = await https(
          ports.proxy,
          ca,
          "POST",
          "/v1/webapi/login",
          { username: "admin", password: PASSWORD },
          { "x-forwarded-for": "198.51.100.7" },
        );
        expect(login.status).toBe(200);
        const session = login.json as { session_id: string; expires_at: string };
        const audit = await new Promise<{ items: Array<{ fields: Record<string, unknown> }> }>(
          (resolve, reject) => {
            const req = request(
              {
                host: "127.0.0.1",
                port: ports.proxy,
                path: "/v1/webapi/audit?type=user.login&limit=1",
                ca,
                servername: "localhost",
                headers: { authorization: `Bearer ${session.session_id}` },
              },
              (res) => {
                let text = "";
                res.on("data", (c: Buffer) => {
                  text += c.toString();
                });
                res.on("end", () => resolve(JSON.parse(text)));
              },
            );
            req.on("error", reject);
            req.end();
          },
        );
        const cookies = ([] as string[]).concat(login.headers["set-cookie"] ?? []);
        return { session, cookies, clientAddress: audit.items[0]?.fields["client_address"] };
      } finally {
        d.child.kill("SIGTERM");
        await d.exited;
      }
    };
    try {
      const trusted = await loginVia(["127.0.0.1"]);
      expect(trusted.clientAddress).toBe("198.51.100.7");
      const left = Date.parse(trusted.session.expires_at) - Date.now();
      expect(left).toBeGreaterThan(29 * 60_000);
      expect(left).toBeLessThanOrEqual(30 * 60_000);
      // The session cookie lives as long as the session.
      const maxAge = trusted.cookies.find((c) => /svc_session=/.test(c))?.match(/Max-Age=(\d+)/i)?.[1];
      expect(Number(maxAge)).toBeGreaterThan(29 * 60);
      expect(Number(maxAge)).toBeLessThanOrEqual(30 * 60);
      // The peer (127.0.0.1) is not listed: its X-Forwarded-For is not believed.
      const untrusted = await loginVia(["10.9.9.0/24"]);
      expect(untrusted.clientAddress).toBe("127.0.0.1");
    } finally {
      await writeFile(configPath, original);
    }
  });

  it("auth's WebAuthn relying party is the one of proxy.public_addr; a request naming another is refused", async () => {
    const ca = await readFile(join(dataDir, "host-ca.pem"), "utf8");
    const configPath = join(dataDir, "svc.yaml");
    const original = await readFile(configPath, "utf8");
    const config = parseYaml(original) as { proxy: Record<string, unknown> };
    config.proxy.public_addr = "svc.example.test:8443";
    await writeFile(configPath, stringifyYaml(config));
    const d = spawnSvcd(args, { SVC_DATA_DIR: dataDir });
    const client = createAuthClient({
      address: `127.0.0.1:${ports.auth}`,
      caPems: [ca],
      serverName: "localhost",
    });
    try {
      await waitFor(() => d.output().includes("svc is running") || d.child.exitCode !== null, "start");
      expect(d.child.exitCode, d.output()).toBeNull();
      const begin = (rp: { rp_id: string; origin: string }) =>
        callUnary(client, "BeginWebAuthnLogin", {
          mfa_token: "not-a-real-token",
          relying_party: { ...rp, rp_name: "" },
        }).then(
          () => ({ code: 0, details: "" }),
          (err: { cause?: { code: number; details: string } }) => ({
            code: err.cause?.code,
            details: err.cause?.details,
          }),
        );
      for (const rp of [
        { rp_id: "localhost", origin: "https://localhost:3080" },
        { rp_id: "evil.test", origin: "https://evil.test" },
        { rp_id: "svc.example.test", origin: "https://evil.test" },
      ]) {
        const r = await begin(rp);
        expect(r.code, JSON.stringify(rp)).toBe(grpc.status.INVALID_ARGUMENT);
        expect(r.details).toMatch(/not this cluster's/);
      }
      // The configured one passes the relying-party check and fails only on the (bogus) token.
      const own = await begin({ rp_id: "svc.example.test", origin: "https://svc.example.test:8443" });
      expect(own.code).toBe(grpc.status.UNAUTHENTICATED);
    } finally {
      client.close();
      d.child.kill("SIGTERM");
      await d.exited;
      await writeFile(configPath, original);
    }
  });
});
