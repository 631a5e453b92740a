// Regenerates the committed TypeScript types of proto/svc/v1/*.proto into proto/generated/.
// `npm run gen:proto` — or `node scripts/gen-proto.ts <outDir>` to generate elsewhere (the
// freshness test does that and compares). Pure JS toolchain: @grpc/proto-loader's generator, then
// two normalisations so the output type-checks under our ESM settings and reads the same way
// every time: relative imports get their `.ts` extension, and biome formats the files.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";

const repoRoot = resolve(import.meta.dirname, "..");
const protoRoot = join(repoRoot, "proto");
const require = createRequire(import.meta.url);

/** The loader options; server/auth/proto.ts loads the .proto at runtime with the same ones. */
export const generatorFlags = [
  "--keepCase",
  "--longs=Number",
  "--enums=String",
  "--defaults",
  "--oneofs",
  "--grpcLib=@grpc/grpc-js",
];

function protoFiles(): string[] {
  const dir = join(protoRoot, "svc", "v1");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".proto"))
    .sort()
    .map((f) => relative(protoRoot, join(dir, f)));
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out.sort();
}

/** Adds `.ts` to relative import specifiers (nodenext resolution wants explicit extensions). */
export function addTsExtensions(source: string): string {
  return source.replace(/(from\s+['"])(\.{1,2}\/[^'"]+?)(['"])/g, (_m, a: string, spec: string, b: string) =>
    spec.endsWith(".ts") ? `${a}${spec}${b}` : `${a}${spec}.ts${b}`,
  );
}

/** Generates into `outDir` (replacing its content). */
export function generate(outDir: string): void {
  const work = mkdtempSync(join(tmpdir(), "svc-gen-proto-"));
  try {
    const raw = join(work, "out");
    mkdirSync(raw);
    const bin = require.resolve("@grpc/proto-loader/build/bin/proto-loader-gen-types.js");
    execFileSync(
      process.execPath,
      [bin, ...generatorFlags, "--includeDirs=.", `--outDir=${raw}`, ...protoFiles()],
      {
        cwd: protoRoot,
        stdio: "pipe",
      },
    );
    for (const file of walk(raw)) {
      const text = readFileSync(file, "utf8");
      writeFileSync(file, addTsExtensions(text).replace(/\r\n/g, "\n"));
    }
    // The repo's biome config skips generated folders (they are not hand-edited), so format them
    // with a config of our own carrying the repo's formatter settings.
    const repoBiome = JSON.parse(readFileSync(join(repoRoot, "biome.json"), "utf8")) as Record<
      string,
      unknown
    >;
    const config = {
      formatter: repoBiome["formatter"],
      javascript: repoBiome["javascript"],
      linter: { enabled: false },
      assist: { enabled: false },
    };
    writeFileSync(join(raw, "biome.json"), JSON.stringify(config));
    const biome = require.resolve("@biomejs/biome/bin/biome");
    execFileSync(process.execPath, [biome, "format", "--write", "--config-path", raw, raw], {
      cwd: raw,
      stdio: "pipe",
    });
    rmSync(join(raw, "biome.json"));
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    cpSync(raw, outDir, { recursive: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const outDir = resolve(process.argv[2] ?? join(protoRoot, "generated"));
  generate(outDir);
  process.stdout.write(`generated ${walk(outDir).length} files into ${relative(process.cwd(), outDir)}\n`);
}
