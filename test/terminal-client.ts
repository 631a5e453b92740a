// A WebSocket terminal client for the tests and the benchmark: speaks the framing of
// docs/terminal.md over real TLS (ws), collects output and control frames, and waits for text.
import WebSocket from "ws";

export type Control =
  | { type: "ready"; node: string; login: string }
  | { type: "error"; code: string; message: string }
  | { type: "exit"; code: number | null; signal?: string };

export interface TerminalConnection {
  ws: WebSocket;
  controls: Control[];
  /** all terminal bytes received so far */
  output(): Buffer;
  /** bytes received so far (cheaper than output().length) */
  received(): number;
  /** resolves once output contains `text` (searching only bytes after `from`) */
  waitFor(text: string | RegExp, timeoutMs?: number, from?: number): Promise<string>;
  waitControl(type: Control["type"], timeoutMs?: number): Promise<Control>;
  type(text: string | Buffer): void;
  resize(cols: number, rows: number): void;
  closed: Promise<{ code: number; reason: string }>;
}

export type OpenResult =
  | { kind: "open"; conn: TerminalConnection }
  | { kind: "refused"; status: number; body: string };

export interface OpenOptions {
  baseUrl: string;
  caPem: string;
  servername: string;
  query: Record<string, string>;
  headers?: Record<string, string>;
  /** keep every byte (tests) or just count them (benchmarks) */
  keepOutput?: boolean;
}

export function openTerminal(o: OpenOptions): Promise<OpenResult> {
  const url = new URL("/v1/webapi/ssh/connect", o.baseUrl.replace(/^https:/, "wss:"));
  for (const [k, v] of Object.entries(o.query)) url.searchParams.set(k, v);
  // ws hands these to tls.connect; servername (the proxy's public name) is not in its typings.
  const wsOptions: WebSocket.ClientOptions & { servername: string } = {
    ca: o.caPem,
    servername: o.servername,
    headers: o.headers ?? {},
  };
  const ws = new WebSocket(url, wsOptions);
  const keep = o.keepOutput ?? true;
  const chunks: Buffer[] = [];
  let count = 0;
  // Output as latin1 pieces with their start offsets: searches join only the recent pieces, so a
  // flood of output stays linear (one big concatenated string would be re-flattened per search).
  const pieces: string[] = [];
  const starts: number[] = [];
  const textFrom = (start: number): string => {
    let i = pieces.length;
    while (i > 0 && (starts[i - 1] ?? 0) > start) i--;
    if (i === 0) return pieces.join("").slice(start);
    const from = i - 1;
    return pieces
      .slice(from)
      .join("")
      .slice(start - (starts[from] ?? 0));
  };
  const tail = (): string => textFrom(Math.max(0, count - 400));
  const controls: Control[] = [];
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const l of [...listeners]) l();
  };
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      if (keep) {
        chunks.push(data);
        pieces.push(data.toString("latin1"));
        starts.push(count);
      }
      count += data.length;
    } else controls.push(JSON.parse(data.toString("utf8")) as Control);
    notify();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on("close", (code, reason) => {
      resolve({ code, reason: reason.toString() });
      notify();
    });
  });
  const waitUntil = <T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const tick = (): void => {
        const v = check();
        if (v !== undefined) {
          clearTimeout(timer);
          listeners.delete(tick);
          resolve(v);
        } else if (ws.readyState === ws.CLOSED) {
          clearTimeout(timer);
          listeners.delete(tick);
          reject(
            new Error(`socket closed while waiting for ${what}; output tail: ${JSON.stringify(tail())}`),
          );
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(tick);
        reject(new Error(`timed out waiting for ${what}; output tail: ${JSON.stringify(tail())}`));
      }, timeoutMs);
      listeners.add(tick);
      tick();
    });
  const conn: TerminalConnection = {
    ws,
    controls,
    output: () => Buffer.concat(chunks),
    received: () => count,
    waitFor: (want, timeoutMs = 30_000, from = 0) => {
      // Scan only what arrived since the last look (plus an overlap), so a flood stays linear.
      const overlap = 256;
      let scanned = from;
      return waitUntil(
        () => {
          const hay = textFrom(Math.max(from, scanned - overlap));
          scanned = count;
          if (typeof want === "string") return hay.includes(want) ? want : undefined;
          return want.exec(hay)?.[0];
        },
        timeoutMs,
        String(want),
      );
    },
    waitControl: (type, timeoutMs = 30_000) =>
      waitUntil(() => controls.find((c) => c.type === type), timeoutMs, `${type} frame`),
    type: (t) => ws.send(typeof t === "string" ? Buffer.from(t, "utf8") : t, { binary: true }),
    resize: (cols, rows) => ws.send(JSON.stringify({ type: "resize", cols, rows })),
    closed,
  };
  return new Promise<OpenResult>((resolve, reject) => {
    ws.once("open", () => resolve({ kind: "open", conn }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        body += d;
      });
      res.on("end", () => {
        resolve({ kind: "refused", status: res.statusCode ?? 0, body });
        ws.terminate();
      });
    });
    ws.once("error", (err) => reject(err));
  });
}

/** Opens and expects an upgraded socket. */
export async function mustOpen(o: OpenOptions): Promise<TerminalConnection> {
  const r = await openTerminal(o);
  if (r.kind !== "open") throw new Error(`upgrade refused: ${r.status} ${r.body}`);
  return r.conn;
}
