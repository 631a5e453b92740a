// Child process for bench/proxy.bench.ts: runs the real auth server (as in production, a process
// of its own), prints one JSON line with its address and the proxy's certificates, and stops
// when its stdin closes.
import { startAuthSide } from "../test/proxy-fixture.ts";

const side = await startAuthSide();
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
