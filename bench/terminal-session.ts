// A shell session as the terminal and tunnel benchmarks drive it, whatever carries it (the proxy's
// terminal WebSocket here; direct ssh and wetty in bench/terminal.bench.ts): output counted and
// watched for a marker, and the two measurements (output throughput, one-byte echo round trips
// through a raw-mode cat).
import WebSocket from "ws";

export interface Session {
  write(data: string): void;
  /** resolves when `text` shows up in output received after this call */
  until(text: string, timeoutMs?: number): Promise<void>;
  received(): number;
  close(): void;
}

/** Counts output bytes and keeps a short tail to match markers split across chunks. */
export function watcher() {
  let count = 0;
  let tail = "";
  let want: { text: string; resolve: () => void } | undefined;
  return {
    push(chunk: string | Buffer): void {
      const s = typeof chunk === "string" ? chunk : chunk.toString("latin1");
      count += s.length;
      tail = (tail + s).slice(-64);
      if (want && tail.includes(want.text)) {
        const w = want;
        want = undefined;
        tail = "";
        w.resolve();
      }
    },
    until(text: string, timeoutMs = 120_000): Promise<void> {
      tail = "";
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${text}`)), timeoutMs);
        want = {
          text,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      });
    },
    received: () => count,
  };
}

/** The proxy's terminal WebSocket (/v1/webapi/ssh/connect) to `node` as `login` (root), Bearer session. */
export async function wsSession(o: {
  /** the proxy's https:// URL */
  url: string;
  ca: string;
  /** TLS name in the proxy's certificate */
  servername: string;
  sessionId: string;
  node: string;
  login?: string;
}): Promise<Session> {
  const url = `${o.url.replace(/^https/, "wss")}/v1/webapi/ssh/connect?node=${encodeURIComponent(o.node)}&login=${encodeURIComponent(o.login ?? "root")}`;
  const options: WebSocket.ClientOptions & { servername: string } = {
    ca: o.ca,
    servername: o.servername,
    headers: { authorization: `Bearer ${o.sessionId}` },
  };
  const ws = new WebSocket(url, options);
  const w = watcher();
  await new Promise<void>((resolve, reject) => {
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) w.push(data);
      else if (data.toString().includes('"ready"')) resolve();
      else reject(new Error(`terminal refused: ${data.toString()}`));
    });
    ws.once("error", reject);
  });
  return {
    write: (d) => ws.send(Buffer.from(d, "latin1"), { binary: true }),
    until: (t, ms) => w.until(t, ms),
    received: w.received,
    close: () => ws.terminate(),
  };
}

const MARK = "END-42";
const DEFAULT_BYTES = 16 * 1024 * 1024;

/**
 * Bytes/s of shell output through the session: `bytes` of 'a' (default 16 MiB), or with `base64`
 * that many zeros encoded by the node's shell (4/3 as many bytes, and the node's CPU busier).
 */
export async function throughput(
  s: Session,
  bytes = DEFAULT_BYTES,
  o: { base64?: boolean } = {},
): Promise<number> {
  const produce = o.base64
    ? `head -c ${bytes} /dev/zero | base64 -w 0`
    : `head -c ${bytes} /dev/zero | tr '\\0' a`;
  // The marker is assembled by the shell, so the echoed command line never matches it.
  const flood = `stty -echo; ${produce}; echo; echo EN''D-$((40+2))\r`;
  const start = performance.now();
  const before = s.received();
  const done = s.until(MARK, 300_000);
  s.write(flood);
  await done;
  return ((s.received() - before) / (performance.now() - start)) * 1000;
}

/** Starts a raw-mode `cat` so each byte written comes straight back. */
export async function startEcho(s: Session): Promise<void> {
  const ready = s.until("RDY", 30_000);
  s.write("stty raw -echo; printf 'R''DY'; exec cat\r");
  await ready;
}

/** Echo round trips (ms) of single bytes through the raw-mode cat. */
export async function echoSamples(s: Session, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const ch = String.fromCharCode(97 + (i % 26));
    const t0 = performance.now();
    const got = s.until(ch, 10_000);
    s.write(ch);
    await got;
    out.push(performance.now() - t0);
  }
  return out;
}
