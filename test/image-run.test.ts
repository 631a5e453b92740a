// The image as users load and run it (docs/image.md): `podman load`, `svcd --version` naming the
// commit, `svcd start` inside serving ping and gRPC health to the host and stopping cleanly on
// SIGTERM; `skopeo copy` (to an oci: layout, standing in for a registry); `ctr images import` into
// a private containerd, plainly and with the flags `kind load image-archive` uses.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureImageMetadata, type ImageMetadata } from "./harness/image.ts";
import { freePort } from "./harness/ports.ts";
import { toolCacheDir, toolVersions } from "./harness/tools.ts";

const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let image: ImageMetadata;
let dir: string;
/** podman here needs runc and no default ulimits (processes cannot raise rlimits). */
let podmanEnv: NodeJS.ProcessEnv;

async function podman(args: string[], timeout = 120_000): Promise<string> {
  const { stdout } = await execFileAsync("podman", args, {
    env: podmanEnv,
    timeout,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

function httpsGet(port: number, ca: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, ca, servername: "localhost" }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => {
        body += d.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function grpcHealth(port: number, ca: string): Promise<string | undefined> {
  const def = protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: {
      health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials, o: object) => grpc.Client } };
    };
  };
  const client = new pkg.grpc.health.v1.Health(
    `127.0.0.1:${port}`,
    grpc.credentials.createSsl(Buffer.from(ca)),
    {
      "grpc.ssl_target_name_override": "localhost",
    },
  ) as unknown as {
    Check(req: { service: string }, cb: (err: Error | null, res?: { status: string }) => void): void;
    close(): void;
  };
  try {
    const res = await new Promise<{ status: string } | undefined>((resolve, reject) =>
      client.Check({ service: "" }, (err, r) => (err ? reject(err) : resolve(r))),
    );
    return res?.status;
  } finally {
    client.close();
  }
}

beforeAll(async () => {
  image = await ensureImageMetadata();
  dir = await mkdtemp(join(tmpdir(), "svc-image-run-"));
  await writeFile(join(dir, "containers.conf"), "[containers]\ndefault_ulimits = []\n");
  podmanEnv = { ...process.env, CONTAINERS_CONF: join(dir, "containers.conf") };
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the image under podman", () => {
  const name = `svc-image-test-${process.pid}`;
  const volume = `svc-image-test-data-${process.pid}`;
  let loadedId = "";

  afterAll(async () => {
    await podman(["rm", "--force", "--ignore", name]).catch(() => "");
    await podman(["volume", "rm", "--force", volume]).catch(() => "");
    // Each source state is a new image of about 180 MB: leave none behind in podman's store.
    if (loadedId) await podman(["rmi", "--force", "--ignore", loadedId]).catch(() => "");
  });

  it("podman load names it; svcd --version names the commit", async () => {
    expect(await podman(["load", "--input", image.archive])).toContain(`Loaded image: ${image.reference}`);
    const inspected = await podman(["image", "inspect", image.reference, "--format", "{{.Digest}} {{.Id}}"]);
    const [digest, id] = inspected.trim().split(" ");
    loadedId = id ?? "";
    expect(digest).toBe(image.digest);
    const version = await podman(["run", "--rm", "--runtime", "runc", image.reference, "--version"]);
    expect(version.trim()).toBe(`${image.version}+${image.revision}`);
    // The other two commands are on PATH as well.
    const svc = await podman([
      "run",
      "--rm",
      "--runtime",
      "runc",
      "--entrypoint",
      "svc",
      image.reference,
      "--version",
    ]);
    expect(svc.trim()).toBe(`${image.version}+${image.revision}`);
    const svcctl = await podman([
      "run",
      "--rm",
      "--runtime",
      "runc",
      "--entrypoint",
      "svcctl",
      image.reference,
      "--help",
    ]);
    expect(svcctl).toMatch(/Usage: svcctl/);
  }, 180_000);

  it("loads every module auth, proxy and the operator run (node-pty, left out, is only the agent's)", async () => {
    const modules = [
      "/opt/svc/server/roles/auth.ts",
      "/opt/svc/server/roles/proxy.ts",
      "/opt/svc/operator/main.ts",
      "/opt/svc/core/ca/secret-store.ts",
      "@kubernetes/client-node",
    ];
    const script = `import { createRequire } from "node:module";
const require = createRequire("/opt/svc/package.json");
for (const m of ${JSON.stringify(modules)}) await import(m.startsWith("/") ? m : require.resolve(m));
console.log("loaded");`;
    const out = await podman([
      "run",
      "--rm",
      "--runtime",
      "runc",
      "--entrypoint",
      "node",
      image.reference,
      "--disable-warning=ExperimentalWarning",
      "--input-type=module",
      "--eval",
      script,
    ]);
    expect(out.trim()).toBe("loaded");
  }, 120_000);

  it("svcd start (the image's default command) serves ping and gRPC health to the host, and stops on SIGTERM", async () => {
    const ports = { auth: await freePort(), proxy: await freePort(), diag: await freePort() };
    await podman([
      "run",
      "--detach",
      "--name",
      name,
      "--runtime",
      "runc",
      "--network",
      "host",
      // As the chart runs it: read-only root filesystem, no capabilities.
      "--read-only",
      "--cap-drop",
      "all",
      "--security-opt",
      "no-new-privileges",
      "--volume",
      `${volume}:/var/lib/svc`,
      image.reference,
      "start",
      "--auth-listen",
      `127.0.0.1:${ports.auth}`,
      "--proxy-listen",
      `127.0.0.1:${ports.proxy}`,
      "--diag-listen",
      `127.0.0.1:${ports.diag}`,
    ]);
    let logs = "";
    const end = Date.now() + 60_000;
    while (!logs.includes("svc is running")) {
      if (Date.now() > end) throw new Error(`svcd start did not come up:\n${logs}`);
      await sleep(500);
      logs = await podman(["logs", name]).catch((e: Error) => e.message);
    }
    // The named volume starts as the image's /var/lib/svc, owned by uid 10001: the data lands there.
    await podman(["cp", `${name}:/var/lib/svc/host-ca.pem`, join(dir, "host-ca.pem")]);
    const ca = await readFile(join(dir, "host-ca.pem"), "utf8");

    const ping = await httpsGet(ports.proxy, ca, "/v1/webapi/ping");
    expect(ping.status, ping.body).toBe(200);
    expect(JSON.parse(ping.body)).toMatchObject({ server_version: `${image.version}+${image.revision}` });
    expect(await grpcHealth(ports.auth, ca)).toBe("SERVING");

    // svcd is PID 1 (the command stubs exec it): podman stop's SIGTERM drains it, exit code 0.
    await podman(["stop", "--time", "20", name], 60_000);
    expect((await podman(["inspect", name, "--format", "{{.State.ExitCode}}"])).trim()).toBe("0");
  }, 180_000);
});

describe("loading the archive elsewhere", () => {
  it("skopeo copy oci-archive: keeps the manifest digest (an oci: layout stands in for a registry)", async () => {
    const dest = join(dir, "skopeo");
    await mkdir(dest);
    await execFileAsync("skopeo", [
      "copy",
      "--quiet",
      `oci-archive:${image.archive}`,
      `oci:${dest}/svc:${image.version}`,
    ]);
    const { stdout } = await execFileAsync("skopeo", ["inspect", `oci:${dest}/svc:${image.version}`]);
    expect(JSON.parse(stdout)).toMatchObject({
      Digest: image.digest,
      Labels: { "org.opencontainers.image.revision": image.revision },
    });
  }, 120_000);

  describe("ctr images import into containerd", () => {
    let containerd: ChildProcess | undefined;
    let socket: string;
    let bin: string;
    let log = "";

    const ctr = async (args: string[], input?: string): Promise<string> => {
      if (!input) {
        const { stdout } = await execFileAsync(join(bin, "ctr"), ["--address", socket, ...args], {
          timeout: 120_000,
        });
        return stdout;
      }
      // Like `kind load image-archive`, which streams the archive to ctr's stdin.
      return new Promise((resolve, reject) => {
        const child = spawn(join(bin, "ctr"), ["--address", socket, ...args], {
          stdio: ["pipe", "pipe", "pipe"],
        });
        let out = "";
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
        });
        child.stderr.on("data", (d: Buffer) => {
          out += d.toString();
        });
        child.on("error", reject);
        child.on("exit", (code) =>
          code === 0 ? resolve(out) : reject(new Error(`ctr exited ${code}: ${out}`)),
        );
        createReadStream(input).pipe(child.stdin);
      });
    };

    beforeAll(async () => {
      const version = toolVersions()["CONTAINERD_VERSION"];
      bin = join(toolCacheDir(), `containerd-${version}`, "bin");
      const state = join(dir, "containerd");
      socket = join(state, "containerd.sock");
      await mkdir(state);
      // No CRI plugin: this daemon only stores images.
      await writeFile(
        join(state, "config.toml"),
        [
          "version = 3",
          `root = "${state}/root"`,
          `state = "${state}/state"`,
          'disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"]',
          "[grpc]",
          `  address = "${socket}"`,
          "[ttrpc]",
          `  address = "${socket}.ttrpc"`,
          "",
        ].join("\n"),
      );
      const child = spawn(join(bin, "containerd"), ["--config", join(state, "config.toml")], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      containerd = child;
      child.stdout?.on("data", (d: Buffer) => {
        log += d.toString();
      });
      child.stderr?.on("data", (d: Buffer) => {
        log += d.toString();
      });
      const end = Date.now() + 30_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`containerd exited:\n${log}`);
        try {
          await ctr(["version"]);
          break;
        } catch (err) {
          if (Date.now() > end) throw new Error(`containerd did not answer: ${err}\n${log}`);
          await sleep(200);
        }
      }
    });

    afterAll(async () => {
      if (containerd && containerd.exitCode === null) {
        const exited = new Promise((r) => containerd?.once("exit", r));
        containerd.kill("SIGTERM");
        await Promise.race([exited, sleep(10_000)]);
        if (containerd.exitCode === null) containerd.kill("SIGKILL");
      }
    });

    const listed = async (namespace: string): Promise<Map<string, string>> => {
      const out = await ctr(["--namespace", namespace, "images", "list"]);
      const names = new Map<string, string>();
      for (const line of out.split("\n").slice(1)) {
        const [ref, , digest] = line.split(/\s+/);
        if (ref && digest) names.set(ref, digest);
      }
      return names;
    };

    it("ctr -n k8s.io images import names it after the archive", async () => {
      await ctr(["--namespace", "k8s.io", "images", "import", image.archive]);
      expect((await listed("k8s.io")).get(image.reference), log).toBe(image.digest);
    }, 120_000);

    it("kind load image-archive's import (stdin, --all-platforms --digests) names it the same", async () => {
      await ctr(
        [
          "--namespace",
          "kind-test",
          "images",
          "import",
          "--all-platforms",
          "--digests",
          "--snapshotter=overlayfs",
          "-",
        ],
        image.archive,
      );
      expect((await listed("kind-test")).get(image.reference), log).toBe(image.digest);
    }, 120_000);
  });
});
