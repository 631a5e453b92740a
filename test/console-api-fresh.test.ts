// The console's API types must be exactly what `npm run gen:api` produces from the proxy's
// OpenAPI document today: a stale copy would let the console compile against routes the proxy no
// longer serves (or miss new ones). Runs the script as a person would, into a scratch file.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "svc-api-fresh-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe("console/src/api/schema.d.ts", () => {
  it("matches a fresh `npm run gen:api` byte for byte", async () => {
    const out = join(work, "schema.d.ts");
    await promisify(execFile)(process.execPath, [join(root, "scripts", "gen-api.ts"), out], { cwd: root });
    const fresh = await readFile(out, "utf8");
    expect(fresh).toContain('"/v1/webapi/session"');
    const committed = await readFile(join(root, "console", "src", "api", "schema.d.ts"), "utf8");
    // A plain equality: the diff vitest prints names the routes that changed.
    expect(committed, "run `npm run gen:api` and commit console/src/api/schema.d.ts").toBe(fresh);
  }, 120_000);
});
