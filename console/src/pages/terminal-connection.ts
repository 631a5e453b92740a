// The terminal's WebSocket to /v1/webapi/ssh/connect (docs/terminal.md "Framing"): binary frames
// are terminal bytes, text frames JSON control messages. A connection that drops (the network,
// a proxy restart: any close that is neither the shell's end nor a refusal) is opened again
// after a growing pause, a few times, with the state visible; each reconnect is a new shell on
// the node (the old one ended with its connection). Refusals (4xxx) are not retried.
import type { Terminal } from "@xterm/xterm";

export type TerminalState = "connecting" | "connected" | "reconnecting" | "closed" | "error";

/** Pauses before each reconnect attempt, in ms; their count is the number of attempts. */
export const RECONNECT_DELAYS_MS = [500, 1000, 2000, 4000, 8000];

export interface ConnectionEvents {
  state(state: TerminalState, text: string): void;
  /** The shell is open (ready frame): the time it opened, for finding its recording. */
  ready(openedAt: Date): void;
  /** The shell ended by itself or by Disconnect (close 1000). */
  ended(): void;
  /** The session is gone (not_authenticated): the page sends the user to sign-in. */
  signedOut(): void;
  /** Before a reconnect: false stops it (e.g. the web session ended meanwhile). */
  beforeReconnect(): Promise<boolean>;
}

interface ControlMessage {
  type?: string;
  code?: string | number | null;
  message?: string;
}

export class TerminalConnection {
  readonly #term: Terminal;
  readonly #target: { node: string; login: string };
  readonly #on: ConnectionEvents;
  readonly #encoder = new TextEncoder();
  #socket: WebSocket | undefined;
  #lastError = "";
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(term: Terminal, target: { node: string; login: string }, events: ConnectionEvents) {
    this.#term = term;
    this.#target = target;
    this.#on = events;
  }

  get socket(): WebSocket | undefined {
    return this.#socket;
  }

  send(data: Uint8Array<ArrayBuffer> | string): void {
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(data);
  }

  sendText(text: string): void {
    this.send(this.#encoder.encode(text));
  }

  resize(cols: number, rows: number): void {
    this.send(JSON.stringify({ type: "resize", cols, rows }));
  }

  /** Ends the shell (the node closes it; the close arrives as 1000). */
  disconnect(): void {
    clearTimeout(this.#timer);
    if (this.#socket?.readyState === WebSocket.OPEN) this.send(JSON.stringify({ type: "close" }));
    else this.#end("closed", "disconnected");
  }

  /** The page is leaving: no more reconnects, the socket closed. */
  dispose(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#socket?.close(1000);
  }

  connect(): void {
    clearTimeout(this.#timer);
    this.#stopped = false;
    this.#lastError = "";
    if (this.#attempt === 0) this.#on.state("connecting", "connecting…");
    const q = new URLSearchParams({
      node: this.#target.node,
      login: this.#target.login,
      cols: String(this.#term.cols),
      rows: String(this.#term.rows),
    });
    const scheme = location.protocol === "http:" ? "ws" : "wss";
    const ws = new WebSocket(`${scheme}://${location.host}/v1/webapi/ssh/connect?${q}`);
    ws.binaryType = "arraybuffer";
    this.#socket = ws;
    ws.onmessage = (event: MessageEvent) => {
      if (typeof event.data !== "string") {
        this.#term.write(new Uint8Array(event.data as ArrayBuffer));
        return;
      }
      this.#control(JSON.parse(event.data) as ControlMessage);
    };
    ws.onclose = (event: CloseEvent) => {
      if (this.#socket !== ws || this.#stopped) return;
      this.#closed(event.code);
    };
  }

  #control(msg: ControlMessage): void {
    if (msg.type === "ready") {
      if (this.#attempt > 0) this.#term.write("\r\n\x1b[2m[reconnected: a new shell session]\x1b[0m\r\n");
      this.#attempt = 0;
      this.#on.state("connected", "connected");
      this.#on.ready(new Date());
    } else if (msg.type === "error") {
      this.#lastError = msg.message ?? "error";
      if (msg.code === "not_authenticated") this.#on.signedOut();
    } else if (msg.type === "exit") {
      this.#lastError =
        msg.code === null || msg.code === undefined ? "session ended" : `session ended (exit ${msg.code})`;
    }
  }

  #closed(code: number): void {
    if (code === 1000) {
      this.#attempt = 0;
      this.#end("closed", this.#lastError || "session ended");
      this.#on.ended();
      return;
    }
    // 4xxx: the proxy refused (node, login, limits); 1008/1009: policy, message too big.
    const refused = (code >= 4000 && code < 5000) || code === 1008 || code === 1009;
    const exhausted = !refused && this.#attempt >= RECONNECT_DELAYS_MS.length;
    if (refused || exhausted) {
      const why = this.#lastError || `connection lost (${code})`;
      this.#attempt = 0;
      this.#end("error", exhausted ? `${why}; gave up after ${RECONNECT_DELAYS_MS.length} attempts` : why);
      return;
    }
    const delay = RECONNECT_DELAYS_MS[this.#attempt] ?? 8000;
    this.#attempt += 1;
    this.#on.state(
      "reconnecting",
      `connection lost; reconnecting in ${Math.ceil(delay / 1000)} s (attempt ${this.#attempt} of ${RECONNECT_DELAYS_MS.length})`,
    );
    this.#timer = setTimeout(() => {
      void this.#on.beforeReconnect().then((go) => {
        if (go && !this.#stopped) this.connect();
        else if (!this.#stopped) this.#end("error", "connection lost");
      });
    }, delay);
  }

  #end(state: TerminalState, text: string): void {
    this.#on.state(state, text);
  }
}
