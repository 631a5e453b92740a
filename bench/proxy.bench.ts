// Proxy throughput: GET /v1/webapi/ping (config only) and GET /v1/webapi/session with Bearer
// (one GetSession call to the real auth server over gRPC TLS per request) against a bare fastify
// HTTPS hello route with the same certificate, all measured in the same run with autocannon.
import { createServer } from "node:https";
import autocannon from "autocannon";
import Fastify from "fastify";
import { PASSWORD, startProxyFixture, USERS } from "../test/proxy-fixture.ts";
import type { BenchReport, BenchRow } from "./report.ts";

const DURATION_S = Number(process.env.SVC_BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;

async function measure(
  name: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<BenchRow & { perSecond: number }> {
  const opts = { url, headers, connections: CONNECTIONS, servername: "proxy.svc.test", workers: 1 };
  await autocannon({ ...opts, duration: 1 }); // warm-up (JIT, TLS sessions, gRPC channel)
  const r = await autocannon({ ...opts, duration: DURATION_S });
  const failures = r.non2xx + r.errors + r.timeouts;
  if (failures > 0) throw new Error(`${name}: ${failures} failed requests`);
  return { name, perSecond: r.requests.average, unit: "req", p50Ms: r.latency.p50, p99Ms: r.latency.p99 };
}

export default async function proxyBench(): Promise<BenchReport> {
  const fx = await startProxyFixture({ rateLimit: { perAddress: 100, perUsername: 100, windowMs: 60_000 } });
  // The baseline shares the proxy's certificate and TLS settings.
  const bare = Fastify({
    serverFactory: (handler) =>
      createServer({ cert: fx.proxyTls.certPem, key: fx.proxyTls.keyPem, minVersion: "TLSv1.2" }, handler),
  });
  bare.get("/hello", async () => ({ hello: "world" }));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  try {
    const login = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USERS.user, password: PASSWORD },
    });
    if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
    const sessionId = (login.json as { session_id: string }).session_id;
    const address = bare.server.address();
    if (address === null || typeof address === "string") throw new Error("baseline did not bind");

    const base = await measure("bare fastify HTTPS hello", `https://127.0.0.1:${address.port}/hello`);
    const ping = await measure("proxy GET /v1/webapi/ping", `${fx.proxy.url}/v1/webapi/ping`);
    const session = await measure(
      "proxy GET /v1/webapi/session (Bearer)",
      `${fx.proxy.url}/v1/webapi/session`,
      {
        authorization: `Bearer ${sessionId}`,
      },
    );
    return {
      title: `proxy web API (${CONNECTIONS} connections, ${DURATION_S}s each, autocannon in a worker thread)`,
      rows: [base, ping, session],
      ratios: [
        { name: "ping / bare hello", ratio: ping.perSecond / base.perSecond, goal: 0.8 },
        { name: "session (Bearer) / bare hello", ratio: session.perSecond / base.perSecond, goal: 0.5 },
      ],
    };
  } finally {
    await bare.close();
    await fx.close();
  }
}
