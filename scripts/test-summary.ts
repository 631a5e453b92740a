// Prints the closing line of a test run in the plain "N passed, N failed, N skipped" form from
// vitest's JSON report, and exits non-zero when anything failed or nothing ran.
import { readFileSync } from "node:fs";

interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numFailedTestSuites: number;
  testResults: Array<{ status: string; assertionResults: Array<{ status: string }> }>;
}

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: node scripts/test-summary.ts <vitest-json-report>\n");
  process.exit(2);
}
const r = JSON.parse(readFileSync(file, "utf8")) as VitestJson;
// A failed test also fails its describe blocks and file (numFailedTestSuites counts each), so only
// files that failed with no failed test (an import error, a hook) are added to the tests.
const brokenFiles = r.testResults.filter(
  (f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed"),
).length;
const failed = r.numFailedTests + brokenFiles;
process.stdout.write(
  `${r.numPassedTests} passed, ${failed} failed, ${r.numPendingTests + r.numTodoTests} skipped\n`,
);
process.exitCode = failed > 0 || r.numPassedTests === 0 ? 1 : 0;
