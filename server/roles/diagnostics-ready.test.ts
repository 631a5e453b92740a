import { afterEach, describe, expect, it } from "vitest";
import { createMetricsRegistry, type Diagnostics, startDiagnostics } from "../diagnostics.ts";

describe("diagnostics /readyz", () => {
  let d: Diagnostics | undefined;
  afterEach(async () => {
    await d?.close();
    d = undefined;
  });

  it("follows the ready() check: 503, then 200; a throwing check is not ready", async () => {
    let state: boolean | "throw" = false;
    d = await startDiagnostics(createMetricsRegistry("test"), "127.0.0.1", 0, {
      ready: async () => {
        if (state === "throw") throw new Error("boom");
        return state;
      },
    });
    const get = async (path: string) => (await fetch(`http://127.0.0.1:${d?.port}${path}`)).status;
    expect(await get("/readyz")).toBe(503);
    state = true;
    expect(await get("/readyz")).toBe(200);
    state = "throw";
    expect(await get("/readyz")).toBe(503);
    expect(await get("/healthz")).toBe(200);
  });

  it("has no /readyz without a check", async () => {
    d = await startDiagnostics(createMetricsRegistry("test"), "127.0.0.1", 0);
    expect((await fetch(`http://127.0.0.1:${d.port}/readyz`)).status).toBe(404);
  });
});
