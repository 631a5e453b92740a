// Plays a recorded session (asciicast v2 from GET /v1/webapi/sessions/:id/recording) in xterm.js
// with its original timing (long pauses shortened), at a chosen speed.
import { Terminal } from "/web/vendor/xterm.mjs";
import { api, setStatus, toLogin } from "./common.js";

const MAX_PAUSE_S = 2;
const id = decodeURIComponent(location.pathname.split("/").pop() ?? "");
const statusEl = document.getElementById("status");
const playBtn = document.getElementById("play");
const speedSel = document.getElementById("speed");
document.getElementById("target").textContent = `recording ${id}`;

const term = new Terminal({ scrollback: 10000, fontFamily: "monospace", disableStdin: true });
term.open(document.getElementById("terminal"));

/** Header + events of an asciicast v2 text. */
export function parseCast(text) {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) throw new Error("empty recording");
  const header = JSON.parse(lines[0]);
  if (header.version !== 2) throw new Error(`unsupported asciicast version ${header.version}`);
  const events = [];
  for (const line of lines.slice(1)) {
    const e = JSON.parse(line);
    if (Array.isArray(e) && typeof e[0] === "number" && typeof e[2] === "string") events.push(e);
  }
  return { header, events };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let run = 0;

async function play(cast) {
  const mine = ++run;
  playBtn.disabled = true;
  term.reset();
  term.resize(cast.header.width || 80, cast.header.height || 24);
  setStatus(statusEl, "playing", "playing…");
  let prev = 0;
  for (const [t, code, data] of cast.events) {
    const speed = Number(speedSel.value);
    const gap = Math.min(Math.max(t - prev, 0), MAX_PAUSE_S);
    prev = t;
    if (speed > 0 && gap > 0) await sleep((gap * 1000) / speed);
    if (mine !== run) return;
    if (code === "o") term.write(data);
    else if (code === "r") {
      const m = /^(\d+)x(\d+)$/.exec(data);
      if (m) term.resize(Number(m[1]), Number(m[2]));
    }
  }
  await new Promise((r) => term.write("", r));
  setStatus(statusEl, "done", "end of recording");
  playBtn.disabled = false;
}

window.svcPlayer = { term };

try {
  const res = await api(`/v1/webapi/sessions/${encodeURIComponent(id)}/recording`);
  const cast = parseCast(await res.text());
  playBtn.addEventListener("click", () => play(cast));
  await play(cast);
} catch (err) {
  if (err.status === 401) toLogin();
  else setStatus(statusEl, "error", err.message);
}
