// The address an agent listening on 0.0.0.0 advertises is its local IP toward auth. `--auth` may
// list several replicas (docs/auth.md "High availability"): the route to the first one is used.
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localIpToward } from "./main.ts";

describe("localIpToward", () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("one address", async () => {
    expect(await localIpToward(`127.0.0.1:${port}`)).toBe("127.0.0.1");
  });

  it("a list of replicas: the first one's route", async () => {
    expect(await localIpToward(`127.0.0.1:${port},127.0.0.2:${port}`)).toBe("127.0.0.1");
  });
});
