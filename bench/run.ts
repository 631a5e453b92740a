// Benchmark runner: imports every bench/*.bench.ts module and prints its report. Each module
// measures its own baseline in the same run, so results are ratios, not absolute timings.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BenchReport } from "./report.ts";
import { formatReport } from "./report.ts";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const all = readdirSync(here).filter((f) => f.endsWith(".bench.ts"));
// A name that is exactly a bench ("auth") picks that bench alone; otherwise names match by
// substring ("auth" would also pick "auth-restart").
const picks = (o: string, f: string): boolean =>
  all.includes(`${o}.bench.ts`) ? f === `${o}.bench.ts` : f.includes(o);
const files = all.filter((f) => only.length === 0 || only.some((o) => picks(o, f))).sort();

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
