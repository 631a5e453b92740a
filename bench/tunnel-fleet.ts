// Many tunnelled agents without many agent processes: for each one a node record in auth's backend
// (what a join writes) and an X.509 client certificate from the host CA naming it (CN = id, URI
// svc://agent/<id>, as a join issues), then the agent's own tunnel client (server/agent/
// tunnel-client.ts) keeping its tunnel to the proxy up and exchanging h2 PING heartbeats. There
// is no SSH server behind them (a stream the proxy opened would be dropped) and they send no
// Heartbeat RPC to auth: the proxy sees exactly what it sees of a real idle tunnel agent.
import { randomUUID } from "node:crypto";
import pino from "pino";
import {
  agentIdentityUri,
  generateEcdsaP256,
  issueTlsClientCert,
  privateKeyToPem,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { TunnelClient } from "../server/agent/tunnel-client.ts";
import { NodeStore } from "../server/auth/nodes.ts";
import type { HeartbeatOptions } from "../server/tunnel/protocol.ts";
import type { AgentAuthEnv } from "../test/agent-fixture.ts";

export interface Fleet {
  size(): number;
  /** starts `n` more tunnel clients and waits until each one's tunnel is up */
  grow(n: number): Promise<void>;
  close(): Promise<void>;
}

export function tunnelFleet(o: {
  env: AgentAuthEnv;
  proxyAddress: string;
  heartbeat?: HeartbeatOptions;
  /** clients started at once */
  batch?: number;
}): Fleet {
  const nodes = new NodeStore({ backend: o.env.backend, clock: systemClock });
  const clients: TunnelClient[] = [];
  const logger = pino({ level: "silent" });
  let seq = 0;

  async function one(): Promise<TunnelClient> {
    seq += 1;
    const id = randomUUID();
    await nodes.heartbeat(id, {
      hostname: `fleet-${seq}`,
      addresses: [],
      labels: { fleet: "bench" },
      version: "0.1.0",
    });
    const key = generateEcdsaP256();
    const certPem = await issueTlsClientCert(o.env.cas.hostCa, {
      publicKey: key.publicKey,
      commonName: id,
      uri: agentIdentityUri(id),
      clock: systemClock,
    });
    const client = new TunnelClient({
      proxyAddress: o.proxyAddress,
      caPems: [o.env.cas.hostCa.certPem],
      certPem,
      keyPem: privateKeyToPem(key.privateKey),
      onStream: (stream) => stream.destroy(),
      logger,
      ...(o.heartbeat ? { heartbeat: o.heartbeat } : {}),
    });
    clients.push(client);
    client.start();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      client.connected(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`tunnel ${seq} did not come up in 60 s`)), 60_000);
      }),
    ]).finally(() => clearTimeout(timer));
    return client;
  }

  return {
    size: () => clients.length,
    async grow(n) {
      const batch = o.batch ?? 25;
      for (let done = 0; done < n; done += batch) {
        await Promise.all(Array.from({ length: Math.min(batch, n - done) }, () => one()));
      }
    },
    async close() {
      await Promise.all(clients.splice(0).map((c) => c.close()));
    },
  };
}
