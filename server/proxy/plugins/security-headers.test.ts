// The security headers plugin gives each reply its own copy of one prepared header object, the
// object fastify sends. The copies keep one hidden class even when V8's empty-object class can take
// no more transitions (the state svcd starts in), where fastify's own `reply.headers` gives every
// reply a class of its own: checked in a child with V8's natives syntax.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { replyHeaderObject, replyHeadersSymbol, securityHeadersPlugin } from "./security-headers.ts";

const fixture = fileURLToPath(new URL("../../../test/security-headers-maps-child.ts", import.meta.url));

function childRun(mode: "svc" | "fastify"): { replies: number; shared: boolean | null } {
  const out = execFileSync(process.execPath, ["--allow-natives-syntax", fixture, mode], {
    encoding: "utf8",
    timeout: 30_000,
  });
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as { replies: number; shared: boolean | null };
}

describe("security headers, one prepared object per reply", () => {
  it("finds the slot where fastify keeps a reply's headers (a fastify upgrade that moves it fails here)", () => {
    expect(typeof replyHeadersSymbol).toBe("symbol");
  });

  it("a route's change to its reply's headers stays on that reply", async () => {
    const app = Fastify();
    await app.register(securityHeadersPlugin, { publicUrl: "https://proxy.example.test" });
    const objects: object[] = [];
    app.get("/public", (_request, reply) => {
      const h = replyHeaderObject(reply);
      if (h) objects.push(h);
      reply.header("cache-control", "public, max-age=60");
      return { ok: true };
    });
    app.get("/private", (_request, reply) => {
      const h = replyHeaderObject(reply);
      if (h) objects.push(h);
      return { ok: true };
    });
    const pub = await app.inject("/public");
    const priv = await app.inject("/private");
    await app.close();
    expect(pub.headers["cache-control"]).toBe("public, max-age=60");
    expect(priv.headers["cache-control"]).toBe("no-store");
    expect(priv.headers["x-frame-options"]).toBe("DENY");
    expect(objects).toHaveLength(2);
    expect(objects[0]).not.toBe(objects[1]);
  });

  it("replies share one hidden class with the empty object's transitions full; fastify's way does not", () => {
    expect(childRun("svc")).toMatchObject({ replies: 3, shared: true });
    // The control: the same headers added one by one to fastify's `{}` get a class per reply.
    expect(childRun("fastify")).toMatchObject({ replies: 3, shared: false });
  });
});
