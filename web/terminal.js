// The browser terminal: xterm.js fitted to the window, bridged to /v1/webapi/ssh/connect.
// Framing (docs/terminal.md): binary frames are terminal bytes; text frames are JSON control
// messages (resize/close from us; ready/error/exit from the proxy). Reconnecting is the user's
// choice (the button), never automatic.
import { FitAddon } from "/web/vendor/addon-fit.mjs";
import { Terminal } from "/web/vendor/xterm.mjs";
import { api, setStatus, toLogin } from "./common.js";

const params = new URLSearchParams(location.search);
const node = params.get("node") ?? "";
const login = params.get("login") || "root";
const statusEl = document.getElementById("status");
const reconnectBtn = document.getElementById("reconnect");
const disconnectBtn = document.getElementById("disconnect");
document.getElementById("target").textContent = `${login}@${node}`;
document.title = `${login}@${node}`;

const term = new Terminal({ cursorBlink: true, scrollback: 5000, fontFamily: "monospace" });
const fit = new FitAddon();
term.loadAddon(fit);
term.open(document.getElementById("terminal"));
fit.fit();
term.focus();

const encoder = new TextEncoder();
let socket;
let lastError = "";

function send(data) {
  if (socket?.readyState === WebSocket.OPEN) socket.send(data);
}

term.onData((text) => send(encoder.encode(text)));
term.onBinary((bin) => send(Uint8Array.from(bin, (c) => c.charCodeAt(0))));
term.onResize(({ cols, rows }) => send(JSON.stringify({ type: "resize", cols, rows })));
window.addEventListener("resize", () => fit.fit());

function ended(text, state) {
  setStatus(statusEl, state, text);
  reconnectBtn.hidden = false;
  disconnectBtn.hidden = true;
}

function connect() {
  lastError = "";
  reconnectBtn.hidden = true;
  disconnectBtn.hidden = false;
  setStatus(statusEl, "connecting", "connecting…");
  const q = new URLSearchParams({ node, login, cols: String(term.cols), rows: String(term.rows) });
  const ws = new WebSocket(`wss://${location.host}/v1/webapi/ssh/connect?${q}`);
  ws.binaryType = "arraybuffer";
  socket = ws;
  ws.onmessage = (event) => {
    if (typeof event.data !== "string") {
      term.write(new Uint8Array(event.data));
      return;
    }
    const msg = JSON.parse(event.data);
    if (msg.type === "ready") setStatus(statusEl, "connected", "connected");
    else if (msg.type === "error") {
      lastError = msg.message;
      if (msg.code === "not_authenticated") toLogin();
    } else if (msg.type === "exit") {
      lastError = msg.code === null ? "session ended" : `session ended (exit ${msg.code})`;
    }
  };
  ws.onclose = (event) => {
    if (socket !== ws) return;
    if (event.code === 1000) ended(lastError || "session ended", "closed");
    else ended(lastError || `connection lost (${event.code})`, "error");
  };
}

reconnectBtn.addEventListener("click", () => {
  term.reset();
  connect();
  term.focus();
});
disconnectBtn.addEventListener("click", () => {
  send(JSON.stringify({ type: "close" }));
});

// Handles for people debugging in the console and for the end-to-end test.
window.svcTerminal = { term, fit, connect, socket: () => socket };

// A WebSocket refused for lack of a session only shows as "closed" in a browser, so the session
// is checked first and a missing one goes to the login page.
async function start() {
  if (node === "") {
    ended("no node given: open /web/terminal?node=<hostname>&login=<login>", "error");
    return;
  }
  try {
    await api("/v1/webapi/session");
  } catch (err) {
    if (err.status === 401) toLogin();
    else ended(err.message, "error");
    return;
  }
  connect();
}
start();
