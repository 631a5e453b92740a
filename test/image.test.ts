// `make image`: the OCI archive's name, labels and contents, its size, and reproducibility (a
// second, fresh build of the same source state gives the same manifest digest).
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ensureImageMetadata, type ImageMetadata, readImageMetadata } from "./harness/image.ts";

const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, "..");
const MiB = 1024 * 1024;

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

interface ImageConfig {
  architecture: string;
  os: string;
  created: string;
  config: {
    User?: string;
    Env?: string[];
    Entrypoint?: string[];
    Cmd?: string[];
    WorkingDir?: string;
    Labels?: Record<string, string>;
  };
  rootfs: { type: string; diff_ids: string[] };
}

interface Entry {
  mode: string;
  owner: string;
  path: string;
}

describe("make image", () => {
  let image: ImageMetadata;
  let dir: string;
  let index: { manifests: Descriptor[] };
  let manifest: { config: Descriptor; layers: Descriptor[]; annotations?: Record<string, string> };
  let config: ImageConfig;
  const layers: Array<{ bytes: number; sha256: string; entries: Entry[] }> = [];

  const blob = (d: Descriptor) => join(dir, "layout", "blobs", ...d.digest.split(":"));

  beforeAll(async () => {
    image = await ensureImageMetadata();
    dir = await mkdtemp(join(tmpdir(), "svc-image-test-"));
    await execFileAsync("mkdir", ["-p", join(dir, "layout")]);
    await execFileAsync("tar", ["-xf", image.archive, "-C", join(dir, "layout")]);
    index = JSON.parse(await readFile(join(dir, "layout", "index.json"), "utf8")) as typeof index;
    const m = index.manifests[0];
    if (!m) throw new Error("index.json lists no manifest");
    manifest = JSON.parse(await readFile(blob(m), "utf8")) as typeof manifest;
    config = JSON.parse(await readFile(blob(manifest.config), "utf8")) as ImageConfig;
    for (const l of manifest.layers) {
      const tar = gunzipSync(await readFile(blob(l)));
      const listing = spawnSync("tar", ["-tv", "--numeric-owner"], { input: tar, maxBuffer: 64 * MiB });
      const entries = listing.stdout
        .toString()
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          // drwxr-xr-x 0/0 0 2026-11-24 11:38 usr/lib/   (symlinks end in "-> target")
          const f = line.split(/\s+/);
          return { mode: f[0] ?? "", owner: f[1] ?? "", path: (f[5] ?? "").replace(/\/$/, "") };
        });
      layers.push({ bytes: tar.length, sha256: createHash("sha256").update(tar).digest("hex"), entries });
    }
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("names the image ghcr.io/svc-platform/svc:<package.json version>, which is the chart's appVersion and default repository", async () => {
    const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string };
    const chart = parseYaml(await readFile(join(root, "charts", "svc", "Chart.yaml"), "utf8")) as {
      appVersion: string;
    };
    const values = parseYaml(await readFile(join(root, "charts", "svc", "values.yaml"), "utf8")) as {
      image: { repository: string; tag: string };
    };
    expect(chart.appVersion).toBe(pkg.version);
    expect(values.image.repository).toBe("ghcr.io/svc-platform/svc");
    expect(values.image.tag).toBe(""); // the chart then uses appVersion
    expect(image.reference).toBe(`ghcr.io/svc-platform/svc:${pkg.version}`);
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0]?.digest).toBe(image.digest);
    expect(index.manifests[0]?.annotations).toEqual({
      "org.opencontainers.image.ref.name": image.reference,
      "io.containerd.image.name": image.reference,
    });
  });

  it("outside the image, svcd --version stays package.json's version (build-info.json is the image's)", async () => {
    const { stdout } = await execFileAsync(join(root, "bin", "svcd"), ["--version"], { cwd: root });
    expect(stdout.trim()).toBe(image.version);
  });

  it("carries the OCI labels (source, version, revision, created = commit time) and runs as 10001", async () => {
    const { stdout: commitTime } = await execFileAsync(
      "git",
      ["log", "-1", "--format=%cI", image.revision.replace(/-dirty$/, "")],
      { cwd: root, env: { ...process.env, TZ: "UTC" } },
    );
    const created = new Date(commitTime.trim()).toISOString().replace(/\.000Z$/, "Z");
    expect(config.config.Labels).toMatchObject({
      "org.opencontainers.image.source": "https://github.com/svc-platform/svc",
      "org.opencontainers.image.version": image.version,
      "org.opencontainers.image.revision": image.revision,
      "org.opencontainers.image.created": created,
    });
    expect(image.revision).toMatch(/^[0-9a-f]{40}(-dirty)?$/);
    expect(config.created).toBe(created);
    expect(config).toMatchObject({ architecture: "amd64", os: "linux" });
    expect(config.config).toMatchObject({
      User: "10001:10001",
      Entrypoint: ["svcd"],
      Cmd: ["start"],
      WorkingDir: "/var/lib/svc",
    });
    expect(config.config.Env).toContain("PATH=/usr/local/bin:/usr/bin:/bin");
  });

  it("stays under 200 MiB uncompressed; the layers are what the config names", () => {
    const total = layers.reduce((n, l) => n + l.bytes, 0);
    console.log(
      `image ${image.reference} ${image.digest}: ${total} bytes uncompressed (${(total / MiB).toFixed(1)} MiB; ` +
        `layers ${layers.map((l) => (l.bytes / MiB).toFixed(1)).join(" + ")} MiB)`,
    );
    expect(total).toBe(image.uncompressedBytes);
    expect(total).toBeLessThan(200 * MiB);
    expect(config.rootfs.diff_ids).toEqual(layers.map((l) => `sha256:${l.sha256}`));
  });

  it("holds Node, the three commands and the runtime sources; no package manager, compiler, shell, npm or tests", () => {
    const entries = layers.flatMap((l) => l.entries);
    const paths = new Set(entries.map((e) => e.path));
    for (const p of [
      "usr/local/bin/node",
      "usr/local/bin/svcd",
      "usr/local/bin/svc",
      "usr/local/bin/svcctl",
      "opt/svc/package.json",
      "opt/svc/build-info.json",
      "opt/svc/server/main.ts",
      "opt/svc/proto",
      "opt/svc/dist/console/index.html",
      "opt/svc/node_modules/ssh2/lib/client.js",
      "lib/x86_64-linux-gnu/libc.so.6",
      "usr/lib/x86_64-linux-gnu/libstdc++.so.6",
      "etc/passwd",
      "var/lib/dpkg/status.d/libc6",
      "var/lib/dpkg/status.d/libstdc++6",
    ]) {
      expect(paths.has(p), p).toBe(true);
    }
    const forbidden =
      /(^|\/)(dpkg|dpkg-deb|dpkg-query|apt|apt-get|apt-cache|gcc(-\d+)?|cc|c\+\+|g\+\+|cpp|ld|as|make|npm|npx|corepack|sh|bash|dash|busybox|perl|python3?)$/;
    const executables = entries.filter(
      (e) => /^[-l]..[xs]/.test(e.mode) && !e.path.startsWith("opt/svc/node_modules/"),
    );
    expect(executables.filter((e) => forbidden.test(e.path)).map((e) => e.path)).toEqual([]);
    expect(
      [...paths].filter((p) =>
        /(^|\/)node_modules\/(npm|corepack)(\/|$)|^usr\/local\/lib\/node_modules/.test(p),
      ),
    ).toEqual([]);
    expect(
      [...paths].filter((p) => /^opt\/svc\/(test|bench|docs|charts|scripts)(\/|$)|\.test\.ts$/.test(p)),
    ).toEqual([]);
    // Production dependencies only.
    for (const dev of ["typescript", "vitest", "@biomejs", "patch-package", "playwright-core", "wetty"]) {
      expect(paths.has(`opt/svc/node_modules/${dev}`), dev).toBe(false);
    }
    // Scanners are told only about packages with files in the image (not base-files' mawk).
    expect(paths.has("var/lib/dpkg/status.d/mawk")).toBe(false);
    // node-pty, the agent's PTY, is left out: auth, proxy and the operator never load it.
    expect(paths.has("opt/svc/node_modules/node-pty")).toBe(false);
    // Owned by root, but for the data folder of uid 10001.
    const notRoot = entries.filter((e) => e.owner !== "0/0").map((e) => `${e.owner} ${e.path}`);
    expect(notRoot).toEqual(["10001/10001 var/lib/svc"]);
  });

  it("applies the ssh2 patch to the production dependencies", async () => {
    const { stdout } = await execFileAsync("tar", [
      "-xzOf",
      blob(manifest.layers[2] as Descriptor),
      "opt/svc/node_modules/ssh2/lib/client.js",
    ]);
    expect(stdout).toContain("[svc patch]");
  });

  it("a second `make image` of the same source state gives the same manifest digest", async () => {
    const makeImage = async (out: string): Promise<{ stdout: string; meta: ImageMetadata }> => {
      const started = Date.now();
      const { stdout } = await execFileAsync("make", ["--no-print-directory", "image"], {
        cwd: root,
        env: { ...process.env, SVC_IMAGE_OUT: out, SVC_IMAGE_SOURCE: `${image.tree} ${image.revision}` },
        maxBuffer: 16 * MiB,
      });
      console.log(`make image: ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return { stdout, meta: readImageMetadata(out) };
    };
    let first = image;
    let second = await makeImage(join(dir, "again", "svc-image.tar"));
    if (second.meta.debianPackages !== first.debianPackages) {
      // The cached first build predates a Debian point or security release (deb.debian.org
      // moved): not a reproducibility failure. Compare two builds against today's mirror.
      console.log(`Debian packages moved: ${first.debianPackages} -> ${second.meta.debianPackages}`);
      first = second.meta;
      second = await makeImage(join(dir, "third", "svc-image.tar"));
    }
    expect(second.stdout).toContain(`image:  ${first.reference}`);
    expect(second.stdout).toContain(`digest: ${first.digest}`);
    expect(second.stdout).toMatch(/size: {3}\d+ bytes uncompressed \(\d+ MiB\)/);
    expect(second.meta.digest).toBe(first.digest);
    // The whole archive, not just the manifest, is byte-for-byte the same.
    const sum = async (f: string) =>
      createHash("sha256")
        .update(await readFile(f))
        .digest("hex");
    expect(await sum(second.meta.archive)).toBe(await sum(first.archive));
  }, 600_000);
});
