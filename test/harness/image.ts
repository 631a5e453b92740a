// The OCI image of this source state, built once by scripts/image/build.sh into the tool cache and
// reused: by every test file in a run (a promise per process, a file lock across processes) and
// by later runs while the sources stay the same. The key is the source state build.sh reports
// (the tree of HEAD plus uncommitted changes, and the revision).
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { toolCacheDir } from "./tools.ts";

const root = join(import.meta.dirname, "..", "..");
const buildScript = join(root, "scripts", "image", "build.sh");
/** Cached images kept besides the current one (each archive is about 70 MB). */
const KEEP_OTHERS = 2;

export interface ImageSource {
  tree: string;
  revision: string;
}

export interface BuiltImage {
  archive: string;
  reference: string;
  digest: string;
  revision: string;
}

/** What build.sh writes next to the archive (`<name>.json`). */
export interface ImageMetadata extends BuiltImage {
  tree: string;
  version: string;
  created: string;
  uncompressedBytes: number;
  /** The Debian packages in the image, "name=version" separated by spaces. */
  debianPackages: string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve(out);
      else
        reject(
          new Error(`${cmd} ${args.join(" ")} exited ${code}\n${err.slice(-4000)}\n${out.slice(-2000)}`),
        );
    });
  });
}

/** The source state the image of the working tree is built from. */
export async function imageSource(): Promise<ImageSource> {
  const [tree, revision] = (await run(buildScript, ["--source-key"], process.env)).trim().split(" ");
  if (!tree || !revision) throw new Error("build.sh --source-key printed no source state");
  return { tree, revision };
}

export function readImageMetadata(archive: string): ImageMetadata {
  return JSON.parse(readFileSync(archive.replace(/\.tar$/, ".json"), "utf8")) as ImageMetadata;
}

/** Builds `source` into `archive` (always a fresh build) and returns build.sh's metadata. */
export async function buildImage(archive: string, source: ImageSource): Promise<ImageMetadata> {
  await run(buildScript, [], {
    ...process.env,
    SVC_IMAGE_OUT: archive,
    SVC_IMAGE_SOURCE: `${source.tree} ${source.revision}`,
  });
  return readImageMetadata(archive);
}

function pruneOthers(dir: string, keep: string): void {
  const others = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== keep)
    .map((e) => ({ name: e.name, mtime: statSync(join(dir, e.name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const o of others.slice(KEEP_OTHERS)) rmSync(join(dir, o.name), { recursive: true, force: true });
}

async function ensure(): Promise<ImageMetadata> {
  const source = await imageSource();
  const dir = join(toolCacheDir(), "image");
  const name = `${source.revision}-${source.tree.slice(0, 12)}`;
  const archive = join(dir, name, "svc-image.tar");
  mkdirSync(join(dir, name), { recursive: true });
  // flock(1) serialises test files that start together; the first builds, the rest find the
  // metadata file (written last) and skip the build.
  await run(
    "flock",
    [
      join(dir, ".lock"),
      "bash",
      "-c",
      'test -s "$1" || exec "$2"',
      "_",
      archive.replace(/\.tar$/, ".json"),
      buildScript,
    ],
    { ...process.env, SVC_IMAGE_OUT: archive, SVC_IMAGE_SOURCE: `${source.tree} ${source.revision}` },
  );
  pruneOthers(dir, name);
  return readImageMetadata(archive);
}

let pending: Promise<ImageMetadata> | undefined;

/** ensureImage() plus the metadata (tree, version, uncompressed size). */
export function ensureImageMetadata(): Promise<ImageMetadata> {
  if (!pending) {
    const p = ensure();
    pending = p;
    p.catch(() => {
      if (pending === p) pending = undefined; // a failed build is retried by the next caller
    });
  }
  return pending;
}

/** The image of the current source state: built on first use, then taken from the cache. */
export async function ensureImage(): Promise<BuiltImage> {
  const m = await ensureImageMetadata();
  return { archive: m.archive, reference: m.reference, digest: m.digest, revision: m.revision };
}
