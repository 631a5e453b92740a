// A TCP relay in front of the apiserver whose traffic a test can stall or cut, to play a hung or
// unreachable apiserver for one client only (the other clients talk to the apiserver directly):
//   open   relay bytes both ways
//   stall  keep every connection open but relay nothing (a hung request; new connections are
//          accepted and then ignored)
//   cut    close every connection and refuse new ones at once (an unreachable apiserver)

import { readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";

export type GateMode = "open" | "stall" | "cut";

export interface TcpGate {
  readonly port: number;
  mode(next: GateMode): void;
  /** A copy of `kubeconfigPath` whose server goes through the gate (written next to it). */
  kubeconfigThrough(kubeconfigPath: string): string;
  close(): Promise<void>;
}

export async function startTcpGate(upstreamPort: number, host = "127.0.0.1"): Promise<TcpGate> {
  let mode: GateMode = "open";
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const server: Server = createServer((client) => {
    if (mode === "cut") {
      client.destroy();
      return;
    }
    const upstream = connect({ host, port: upstreamPort });
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    if (mode === "open") {
      client.pipe(upstream);
      upstream.pipe(client);
    } else {
      client.pause();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    mode(next) {
      mode = next;
      for (const { client, upstream } of pairs) {
        if (next === "cut") {
          client.destroy();
          upstream.destroy();
        } else if (next === "stall") {
          client.unpipe(upstream);
          upstream.unpipe(client);
          client.pause();
          upstream.pause();
        }
      }
      // Back to open: stalled connections stay stalled until their clients give up on them.
    },
    kubeconfigThrough(kubeconfigPath) {
      const text = readFileSync(kubeconfigPath, "utf8");
      const replaced = text.replace(/(https:\/\/(?:127\.0\.0\.1|localhost):)(\d+)/, `$1${port}`);
      if (replaced === text) throw new Error(`no server URL found in ${kubeconfigPath}`);
      const out = `${kubeconfigPath}.gate-${port}`;
      writeFileSync(out, replaced, { mode: 0o600 });
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client, upstream } of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
