// Child process for bench/proxy.bench.ts: runs the real auth server (as in production, a process
// of its own), prints one JSON line with its address and the proxy's certificates, and stops
// when its stdin closes.
import { startAuthSide } from "../test/proxy-fixture.ts";

const side = await startAuthSide();
// Nodes for the GET /v1/webapi/nodes row (a few hundred, three environments).
const nodes = Number(process.env.SVC_BENCH_PROXY_NODES ?? 300);
for (let i = 0; i < nodes; i++) {
  await side.auth.service.nodes.heartbeat(`agent-${i}`, {
    hostname: `node-${String(i).padStart(4, "0")}`,
    addresses: [`10.0.${i >> 8}.${i & 255}:3022`],
    labels: { env: ["prod", "dev", "staging"][i % 3] ?? "prod", team: i % 2 ? "a" : "b" },
    version: "1.0.0",
  });
}
process.stdout.write(
  `${JSON.stringify({
    address: side.auth.address,
    hostCaPem: side.hostCaPem,
    proxyClient: side.proxyClient,
    proxyServer: side.proxyServer,
  })}\n`,
);
process.stdin.resume();
process.stdin.on("end", () => {
  void side.close().then(() => process.exit(0));
});
