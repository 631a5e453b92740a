// Bridges one browser WebSocket to one SSH shell channel, with back-pressure both ways so neither
// a slow browser nor a slow node makes the proxy buffer without bound:
// - node -> browser: once the socket's bufferedAmount passes `highWaterBytes`, the SSH channel is
//   paused (ssh2 then stops widening the SSH window, so the node stops sending); it resumes when
//   the socket has drained below `lowWaterBytes`.
// - browser -> node: when the channel's write buffer is full, the WebSocket stops reading (TCP
//   back-pressure to the browser) until the channel drains.
import type { ClientChannel } from "ssh2";
import type { WebSocket } from "ws";
import {
  CLOSE_NORMAL,
  type ClientControl,
  closeCodeOf,
  encodeControl,
  errorControl,
  parseClientControl,
} from "./terminal-protocol.ts";

export interface BridgeLimits {
  highWaterBytes: number;
  lowWaterBytes: number;
}

export const defaultBridgeLimits: BridgeLimits = { highWaterBytes: 256 * 1024, lowWaterBytes: 64 * 1024 };

/** A message that arrived before the shell was open (the handler must listen synchronously). */
export type EarlyMessage = { binary: true; data: Buffer } | { binary: false; control: ClientControl };

/** Counters of one bridged session (for metrics and tests); updated live. */
export interface BridgeStats {
  bytesToBrowser: number;
  bytesToNode: number;
  /** the largest WebSocket send buffer seen, in bytes */
  maxBufferedBytes: number;
  /** times the SSH channel was paused because the browser was slow */
  outputPauses: number;
  /** times the WebSocket was paused because the node was slow */
  inputPauses: number;
  ended: boolean;
}

export interface BridgeOptions {
  limits?: BridgeLimits;
  /** messages received while the SSH connection was being set up, replayed in order */
  early?: EarlyMessage[];
  /** called once when both sides are finished */
  onEnd?: () => void;
}

/** Sends an error frame and closes with the matching 4xxx code. */
export function refuse(ws: WebSocket, err: unknown): void {
  const frame = errorControl(err);
  if (ws.readyState !== ws.OPEN) return;
  ws.send(encodeControl(frame));
  ws.close(closeCodeOf(frame.code), frame.code);
}

function asBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

export function bridge(ws: WebSocket, channel: ClientChannel, opts: BridgeOptions = {}): BridgeStats {
  const { highWaterBytes, lowWaterBytes } = opts.limits ?? defaultBridgeLimits;
  const stats: BridgeStats = {
    bytesToBrowser: 0,
    bytesToNode: 0,
    maxBufferedBytes: 0,
    outputPauses: 0,
    inputPauses: 0,
    ended: false,
  };
  let ended = false;
  let exit: { code: number | null; signal?: string } | undefined;
  let outputPaused = false;
  let inputPaused = false;

  const end = (): void => {
    if (ended) return;
    ended = true;
    stats.ended = true;
    channel.removeAllListeners("data");
    channel.stderr.removeAllListeners("data");
    channel.close();
    if (ws.readyState === ws.OPEN) {
      ws.send(
        encodeControl({
          type: "exit",
          code: exit?.code ?? null,
          ...(exit?.signal ? { signal: exit.signal } : {}),
        }),
      );
      ws.close(CLOSE_NORMAL, "session ended");
    }
    opts.onEnd?.();
  };

  const afterSend = (err?: Error): void => {
    if (err || !outputPaused || ws.bufferedAmount > lowWaterBytes) return;
    outputPaused = false;
    channel.resume();
    channel.stderr.resume();
  };
  const toBrowser = (chunk: Buffer): void => {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(chunk, { binary: true }, afterSend);
    stats.bytesToBrowser += chunk.length;
    const buffered = ws.bufferedAmount;
    if (buffered > stats.maxBufferedBytes) stats.maxBufferedBytes = buffered;
    if (!outputPaused && buffered > highWaterBytes) {
      outputPaused = true;
      stats.outputPauses++;
      channel.pause();
      channel.stderr.pause();
    }
  };
  channel.on("data", toBrowser);
  channel.stderr.on("data", toBrowser);
  channel.on("exit", (code: number | null, signal?: string) => {
    exit = { code: typeof code === "number" ? code : null, ...(signal ? { signal } : {}) };
  });
  channel.on("close", end);
  channel.on("error", end);

  const onDrain = (): void => {
    inputPaused = false;
    ws.resume();
  };
  const toNode = (data: Buffer): void => {
    if (ended) return;
    stats.bytesToNode += data.length;
    if (!channel.write(data) && !inputPaused) {
      inputPaused = true;
      stats.inputPauses++;
      ws.pause();
      channel.once("drain", onDrain);
    }
  };
  const control = (c: ClientControl): void => {
    if (c.type === "resize") channel.setWindow(c.rows, c.cols, 0, 0);
    else end();
  };
  for (const m of opts.early ?? []) {
    if (m.binary) toNode(m.data);
    else control(m.control);
  }
  ws.on("message", (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
    if (isBinary) {
      toNode(asBuffer(data));
      return;
    }
    try {
      control(parseClientControl(asBuffer(data)));
    } catch (err) {
      refuse(ws, err);
      end();
    }
  });
  ws.on("close", end);
  ws.on("error", end);
  return stats;
}
