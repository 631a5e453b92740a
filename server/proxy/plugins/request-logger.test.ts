import Fastify, { LogController } from "fastify";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { LazyRequestLogger } from "./request-logger.ts";

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: "info" }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { lines, logger };
}

describe("LazyRequestLogger", () => {
  it("builds the child on the first log call only, with the request's bindings", () => {
    const { lines, logger } = capture();
    let children = 0;
    const parent = new Proxy(logger, {
      get(target, prop, receiver) {
        if (prop === "child") {
          return (...args: Parameters<typeof logger.child>) => {
            children++;
            return target.child(...args);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const lazy = new LazyRequestLogger(parent, { reqId: "req-7" }, {});
    expect(lazy.level).toBe("info");
    expect(children).toBe(0);
    lazy.debug("below the level");
    lazy.info({ code: "x" }, "refused");
    lazy.warn("again");
    expect(children).toBe(1);
    expect(lines.map((l) => [l.reqId, l.msg, l.code])).toEqual([
      ["req-7", "refused", "x"],
      ["req-7", "again", undefined],
    ]);
  });

  it("is what fastify hands routes as request.log: lines carry the reqId", async () => {
    const { lines, logger } = capture();
    const app = Fastify({
      loggerInstance: logger,
      logController: new LogController({ disableRequestLogging: true }),
      childLoggerFactory: (l, bindings, options) => new LazyRequestLogger(l, bindings, options),
    });
    app.get("/quiet", async () => ({ ok: true }));
    app.get("/loud", async (request) => {
      request.log.warn({ n: 1 }, "loud");
      return { ok: true };
    });
    await app.inject({ url: "/quiet" });
    await app.inject({ url: "/loud" });
    await app.close();
    const loud = lines.filter((l) => l.msg === "loud");
    expect(loud).toHaveLength(1);
    expect(loud[0]?.reqId).toMatch(/^req-/);
    expect(loud[0]?.n).toBe(1);
  });
});
