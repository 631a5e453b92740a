// svc's one retry (docs/cli.md "When the cluster restarts") must never send a write twice. The
// HTTPS agent keeps connections alive, so a request may go out on a connection whose TLS
// handshake ended during an earlier request: that request has reached the proxy as soon as it is
// written, and a reset after it is not a "never sent".

import { createServer, type Server } from "node:https";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRootCa, generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { UnavailableError } from "../core/errors.ts";
import { type ProxyTarget, proxyRequest } from "./proxy-client.ts";

describe("proxyRequest retry", () => {
  let server: Server;
  let target: ProxyTarget;
  const posts: string[] = [];
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    const { privateKey } = generateEcdsaP256();
    const cert = await createRootCa({ privateKey, commonName: "127.0.0.1", clock: systemClock });
    server = createServer(
      { cert, key: privateKeyToPem(privateKey), keepAliveTimeout: 30_000 },
      (req, res) => {
        if (req.method === "POST") {
          // The write reached the proxy, which then dies before answering.
          req.resume();
          req.on("end", () => {
            posts.push(req.url ?? "");
            req.socket.destroy();
          });
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      },
    );
    server.on("secureConnection", (s: Socket) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    target = { proxy: `127.0.0.1:${address.port}`, insecure: true };
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("does not send a POST twice that reached the proxy on a kept-alive connection", async () => {
    // A read first: its connection is kept alive and the POST goes out on it.
    expect((await proxyRequest(target, "GET", "/warm")).status).toBe(200);
    expect(sockets.size).toBe(1);
    await expect(proxyRequest(target, "POST", "/v1/write", { body: { n: 1 } })).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(posts).toEqual(["/v1/write"]);
  });

  it("does not send a POST twice that reached the proxy on a new connection", async () => {
    posts.length = 0;
    await expect(proxyRequest(target, "POST", "/v1/fresh", { body: { n: 2 } })).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(posts).toEqual(["/v1/fresh"]);
  });
});
