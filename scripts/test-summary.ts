// Prints the closing line of a test run in the plain "N passed, N failed, N skipped" form from
// vitest's JSON report, and exits non-zero when anything failed or nothing ran.
import { readFileSync } from "node:fs";

interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numFailedTestSuites: number;
}

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: node scripts/test-summary.ts <vitest-json-report>\n");
  process.exit(2);
}
const r = JSON.parse(readFileSync(file, "utf8")) as VitestJson;
const failed = r.numFailedTests + r.numFailedTestSuites;
process.stdout.write(
  `${r.numPassedTests} passed, ${failed} failed, ${r.numPendingTests + r.numTodoTests} skipped\n`,
);
process.exitCode = failed > 0 || r.numPassedTests === 0 ? 1 : 0;
