// What the proxy-to-proxy hop (svc-peer, docs/tunnels.md "Several proxies") adds to a keystroke:
// one-byte echo round trips to a TCP echo server reached directly (the holder's own tunnel stream
// stands in as a TCP connection) vs through a second replica's peer relay (mutual TLS 1.3 +
// HTTP/2 CONNECT, real proxy identities from a host CA). Both paths run in this process, so the
// ratio is the relay's own cost, not network distance between Pods.
// `node bench/peer-hop.ts` prints the report; tunnel.bench.ts may call peerHopReport().
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import pino from "pino";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { type LocalTunnels, type PeeringIdentity, ProxyPeering } from "../server/proxy/peering/peering.ts";
import { type BenchReport, formatReport, percentile } from "./report.ts";

const SAMPLES = Number(process.env["SVC_BENCH_PEER_SAMPLES"] ?? 2000);
const NODE_ID = "bench-node";
const DIALS = 30;

async function echoRtts(stream: Duplex, n: number): Promise<number[]> {
  const out: number[] = [];
  const byte = Buffer.from("x");
  for (let i = 0; i < 50 + n; i++) {
    const t0 = process.hrtime.bigint();
    const got = once(stream, "data");
    stream.write(byte);
    await got;
    if (i >= 50) out.push(Number(process.hrtime.bigint() - t0) / 1e6); // first 50: warm-up
  }
  return out;
}

export async function peerHopReport(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), "svc-peer-bench-"));
  const cleanups: Array<() => unknown> = [() => rm(dir, { recursive: true, force: true })];
  try {
    const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
      clusterName: "bench",
      trustDomain: "bench.svc",
      clock: systemClock,
    });
    const server = generateEcdsaP256();
    const client = generateEcdsaP256();
    const identity: PeeringIdentity = {
      certPem: await issueTlsServerCert(cas.hostCa, {
        publicKey: server.publicKey,
        commonName: "proxy.bench.test",
        dnsNames: ["proxy.bench.test"],
        clock: systemClock,
      }),
      keyPem: privateKeyToPem(server.privateKey),
      clientCertPem: await issueTlsClientCert(cas.hostCa, {
        publicKey: client.publicKey,
        commonName: "proxy",
        uri: serviceIdentityUri("proxy", "bench"),
        clock: systemClock,
      }),
      clientKeyPem: privateKeyToPem(client.privateKey),
      caPems: [cas.hostCa.certPem],
    };
    const echo = createServer((s) => {
      s.setNoDelay(true);
      s.pipe(s);
    });
    echo.listen(0, "127.0.0.1");
    await once(echo, "listening");
    cleanups.push(() => echo.close());
    const echoPort = (echo.address() as { port: number }).port;
    const openEcho = async (): Promise<Socket> => {
      const s = connect({ host: "127.0.0.1", port: echoPort, noDelay: true });
      await once(s, "connect");
      return s;
    };
    const tunnels: LocalTunnels = {
      has: (id) => id === NODE_ID,
      get: () => undefined,
      open: () => openEcho(),
      onChange: () => () => {},
    };
    const logger = pino({ level: "silent" });
    let handler: ((s: Socket) => void) | undefined;
    const peerPort = createServer({ noDelay: true }, (s) => (handler ? handler(s) : s.destroy()));
    peerPort.listen(0, "127.0.0.1");
    await once(peerPort, "listening");
    cleanups.push(() => peerPort.close());
    const holder = new ProxyPeering({
      tunnels,
      identity: () => identity,
      peerAddr: `127.0.0.1:${(peerPort.address() as { port: number }).port}`,
      selfId: "holder",
      logger,
    });
    holder.register({ handle: (_alpn, h) => (handler = h) });
    cleanups.push(() => holder.close());
    const other = new ProxyPeering({
      tunnels: { ...tunnels, has: () => false },
      identity: () => identity,
      peerAddr: "127.0.0.1:1",
      selfId: "other",
      logger,
    });
    cleanups.push(() => other.close());

    const direct = await openEcho();
    const directRtt = await echoRtts(direct, SAMPLES);
    direct.destroy();
    const relayed = await other.dialer.dial(holder.location, NODE_ID);
    const peerRtt = await echoRtts(relayed, SAMPLES);
    relayed.destroy();
    // Dial time: a new CONNECT on the kept connection, and a first dial (TLS 1.3 + h2 setup too).
    const reuseMs: number[] = [];
    const coldMs: number[] = [];
    for (let i = 0; i < DIALS; i++) {
      const t0 = performance.now();
      (await other.dialer.dial(holder.location, NODE_ID)).destroy();
      reuseMs.push(performance.now() - t0);
      const cold = new ProxyPeering({
        tunnels: { ...tunnels, has: () => false },
        identity: () => identity,
        peerAddr: "127.0.0.1:1",
        selfId: `cold-${i}`,
        logger,
      });
      const t1 = performance.now();
      (await cold.dialer.dial(holder.location, NODE_ID)).destroy();
      coldMs.push(performance.now() - t1);
      cold.close();
    }

    const row = (name: string, s: number[]) => ({ name, p50Ms: percentile(s, 50), p99Ms: percentile(s, 99) });
    return {
      title: `proxy peer hop: 1-byte echo round trips (${SAMPLES} samples), one process`,
      rows: [
        row("echo direct (holder's own stream)", directRtt),
        row("echo through the peer relay", peerRtt),
        row(`dial through a peer, connection kept (${DIALS} dials)`, reuseMs),
        row(`dial through a peer, first: TLS 1.3 + h2 (${DIALS} dials)`, coldMs),
      ],
      ratios: [
        {
          name: "peer relay / direct echo p50",
          ratio: percentile(peerRtt, 50) / percentile(directRtt, 50),
          lowerIsBetter: true,
        },
        {
          name: "peer relay / direct echo p99",
          ratio: percentile(peerRtt, 99) / percentile(directRtt, 99),
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
  }
}

if (import.meta.main) {
  console.log(formatReport(await peerHopReport()));
}
