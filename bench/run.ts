// Benchmark runner: imports every bench/*.bench.ts module and prints its report. Each module
// measures its own baseline in the same run, so results are ratios, not absolute timings.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BenchReport } from "./report.ts";
import { formatReport } from "./report.ts";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

let failed = 0;
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: () => Promise<BenchReport> };
  try {
    const report = await mod.default();
    process.stdout.write(`${formatReport(report)}\n`);
  } catch (err) {
    failed++;
    process.stderr.write(`bench ${file} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
