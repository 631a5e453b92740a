// The browser terminal (docs/terminal.md): xterm.js fitted to its box, a status that says what
// the connection is doing (reconnecting after a drop included), copy (selecting copies;
// Ctrl+Shift+C; the Copy button) and paste (Ctrl+Shift+V; the Paste button), a font size that
// is remembered, and the session's recording linked once the shell ends.
import "@xterm/xterm/css/xterm.css";
import "./terminal.css";
import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, toLogin, unwrap } from "../api/client.ts";
import { Page } from "../components/page.tsx";
import { useSession } from "../session.tsx";
import { TerminalConnection, type TerminalState } from "./terminal-connection.ts";
import { withCspSafeStyles } from "./terminal-csp.ts";

const FONT_KEY = "svc.terminal.fontSize";
const FONT_MIN = 10;
const FONT_MAX = 28;
const FONT_DEFAULT = 14;

function savedFontSize(): number {
  const n = Number(localStorage.getItem(FONT_KEY));
  return Number.isInteger(n) && n >= FONT_MIN && n <= FONT_MAX ? n : FONT_DEFAULT;
}

/** Handles for people debugging in the browser and for the end-to-end tests. */
interface TerminalHandles {
  term: Terminal;
  fit: FitAddon;
  connect: () => void;
  socket: () => WebSocket | undefined;
}
declare global {
  interface Window {
    svcTerminal?: TerminalHandles;
  }
}

/**
 * The recording of the shell that opened at `openedAt`: the user's newest on that node started
 * since then. Nodes upload a recording when the shell ends, so it is asked for a few times.
 */
async function findRecording(user: string, node: string, openedAt: Date, stop: () => boolean) {
  // Node and browser clocks differ a little; the recording starts a moment before `ready`.
  const since = new Date(openedAt.getTime() - 30_000).toISOString();
  for (let i = 0; i < 40 && !stop(); i++) {
    const page = await unwrap(
      api.GET("/v1/webapi/sessions", { params: { query: { user, node, start_time: since, limit: 5 } } }),
    ).catch(() => undefined);
    const near = page?.items
      .filter((r) => r.end_time)
      .sort(
        (a, b) =>
          Math.abs(Date.parse(a.start_time) - openedAt.getTime()) -
          Math.abs(Date.parse(b.start_time) - openedAt.getTime()),
      )[0];
    if (near) return near.id;
    await new Promise((r) => setTimeout(r, 750));
  }
  return undefined;
}

export default function TerminalPage() {
  const params = new URLSearchParams(location.search);
  const node = params.get("node") ?? "";
  const login = params.get("login") || "root";
  const { session } = useSession();
  const box = useRef<HTMLDivElement>(null);
  const conn = useRef<TerminalConnection | undefined>(undefined);
  const termRef = useRef<Terminal | undefined>(undefined);
  const fitRef = useRef<FitAddon | undefined>(undefined);
  const openedAt = useRef<Date | undefined>(undefined);
  const [state, setState] = useState<{ state: TerminalState; text: string }>({
    state: "connecting",
    text: "connecting…",
  });
  const [fontSize, setFontSize] = useState(savedFontSize);
  const [hasSelection, setHasSelection] = useState(false);
  const [clipNote, setClipNote] = useState("");
  const [recording, setRecording] = useState<{
    state: "none" | "looking" | "found" | "missing";
    id?: string;
  }>({
    state: "none",
  });
  const user = session?.username;

  const copy = async (): Promise<void> => {
    const text = termRef.current?.getSelection() ?? "";
    if (!text) return;
    try {
      await navigator.clipboard.writeText(text);
      setClipNote("Copied");
    } catch {
      setClipNote("The browser refused the clipboard: use its own Copy");
    }
  };
  const paste = async (): Promise<void> => {
    try {
      const text = await navigator.clipboard.readText();
      if (text) termRef.current?.paste(text);
      termRef.current?.focus();
    } catch {
      setClipNote("The browser refused the clipboard: use its own Paste (Ctrl+V)");
    }
  };

  useEffect(() => {
    const el = box.current;
    if (!el || node === "" || !user) return;
    const term = new Terminal({ cursorBlink: true, scrollback: 5000, fontFamily: "monospace", fontSize });
    const fit = new FitAddon();
    term.loadAddon(fit);
    const styles = withCspSafeStyles(el, () => {
      term.open(el);
      fit.fit();
    });
    termRef.current = term;
    fitRef.current = fit;
    let leaving = false;
    const c = new TerminalConnection(
      term,
      { node, login },
      {
        state: (s, text) => setState({ state: s, text }),
        ready: (at) => {
          openedAt.current = at;
          setRecording({ state: "none" });
        },
        ended: () => {
          const at = openedAt.current;
          if (!at) return;
          setRecording({ state: "looking" });
          void findRecording(user, node, at, () => leaving).then((id) =>
            setRecording(id ? { state: "found", id } : { state: "missing" }),
          );
        },
        signedOut: () => toLogin("expired"),
        // A 401 here sends the user to sign-in (the API client does it); no reconnect then.
        beforeReconnect: () =>
          unwrap(api.GET("/v1/webapi/session")).then(
            () => true,
            () => false,
          ),
      },
    );
    conn.current = c;
    term.onData((text) => c.sendText(text));
    term.onBinary((bin) => c.send(Uint8Array.from(bin, (ch) => ch.charCodeAt(0))));
    term.onResize(({ cols, rows }) => c.resize(cols, rows));
    term.onSelectionChange(() => {
      const sel = term.getSelection();
      setHasSelection(sel !== "");
      // Selecting copies, as in terminals people know (ignored when the browser says no).
      if (sel) navigator.clipboard?.writeText(sel).catch(() => undefined);
    });
    term.attachCustomKeyEventHandler((e) => {
      if (e.type !== "keydown" || !e.ctrlKey || !e.shiftKey) return true;
      if (e.code === "KeyC") {
        e.preventDefault();
        void copy();
        return false;
      }
      if (e.code === "KeyV") {
        e.preventDefault();
        void paste();
        return false;
      }
      return true;
    });
    const onResize = (): void => fit.fit();
    window.addEventListener("resize", onResize);
    window.svcTerminal = { term, fit, connect: () => c.connect(), socket: () => c.socket };
    c.connect();
    term.focus();
    document.title = `${login}@${node} · svc`;
    return () => {
      leaving = true;
      window.removeEventListener("resize", onResize);
      c.dispose();
      term.dispose();
      styles.dispose();
      delete window.svcTerminal;
    };
    // The terminal lives as long as the page's target; the font size changes in place below.
  }, [node, login, user]);

  useEffect(() => {
    localStorage.setItem(FONT_KEY, String(fontSize));
    const term = termRef.current;
    if (!term) return;
    term.options.fontSize = fontSize;
    fitRef.current?.fit();
  }, [fontSize]);

  const reconnect = (): void => {
    termRef.current?.reset();
    setRecording({ state: "none" });
    conn.current?.connect();
    termRef.current?.focus();
  };
  const live = state.state === "connected" || state.state === "connecting" || state.state === "reconnecting";

  if (node === "") {
    return (
      <Page title="Terminal">
        <p class="error" role="alert">
          No node given. Choose one on the <a href="/web/nodes">Nodes</a> page.
        </p>
      </Page>
    );
  }
  return (
    <Page title={`${login}@${node}`}>
      <div class="terminal-bar">
        <span
          id="status"
          data-state={state.state}
          role="status"
          class={`terminal-status state-${state.state}`}
        >
          {state.text}
        </span>
        <span class="terminal-tools">
          <fieldset class="font-size">
            <legend class="visually-hidden">Font size</legend>
            <button
              id="font-smaller"
              type="button"
              class="secondary"
              disabled={fontSize <= FONT_MIN}
              onClick={() => setFontSize((s) => Math.max(FONT_MIN, s - 1))}
            >
              A−<span class="visually-hidden"> smaller text</span>
            </button>
            <output id="font-size" aria-live="polite">
              {fontSize} px
            </output>
            <button
              id="font-larger"
              type="button"
              class="secondary"
              disabled={fontSize >= FONT_MAX}
              onClick={() => setFontSize((s) => Math.min(FONT_MAX, s + 1))}
            >
              A+<span class="visually-hidden"> larger text</span>
            </button>
          </fieldset>
          <button
            id="copy"
            type="button"
            class="secondary"
            disabled={!hasSelection}
            onClick={() => void copy()}
          >
            Copy
          </button>
          <button id="paste" type="button" class="secondary" disabled={!live} onClick={() => void paste()}>
            Paste
          </button>
          {live ? (
            <button id="disconnect" type="button" onClick={() => conn.current?.disconnect()}>
              Disconnect
            </button>
          ) : (
            <button id="reconnect" type="button" onClick={reconnect}>
              Reconnect
            </button>
          )}
        </span>
      </div>
      <p id="clipboard-note" class="visually-hidden" aria-live="polite">
        {clipNote}
      </p>
      {recording.state === "none" ? null : (
        <p id="recording" class="notice" aria-live="polite">
          {recording.state === "looking" ? "Looking for the session's recording…" : null}
          {recording.state === "found" && recording.id ? (
            <a id="recording-link" href={`/web/recordings/${encodeURIComponent(recording.id)}`}>
              Watch this session's recording
            </a>
          ) : null}
          {recording.state === "missing" ? (
            <>
              The recording is not listed yet: see <a href="/web/recordings">Recordings</a>.
            </>
          ) : null}
        </p>
      )}
      <div id="terminal" class="terminal-screen" ref={box} />
      <p class="terminal-help muted">Select to copy · Ctrl+Shift+C copy · Ctrl+Shift+V paste</p>
    </Page>
  );
}
