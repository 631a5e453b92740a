// The committed generated types must be exactly what `npm run gen:proto` produces from the
// current .proto files; a stale copy would let code compile against a contract auth does not serve.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generate } from "../scripts/gen-proto.ts";

const committed = resolve(import.meta.dirname, "..", "proto", "generated");
const work = mkdtempSync(join(tmpdir(), "svc-proto-fresh-"));

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(relative(dir, join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("proto/generated", () => {
  it("matches a fresh regeneration byte for byte", () => {
    const fresh = join(work, "generated");
    generate(fresh);
    const freshFiles = listFiles(fresh);
    expect(freshFiles.length).toBeGreaterThan(10);
    expect(listFiles(committed)).toEqual(freshFiles);
    for (const f of freshFiles) {
      expect(readFileSync(join(committed, f), "utf8"), f).toBe(readFileSync(join(fresh, f), "utf8"));
    }
  });
});
