// A session being recorded by the agent's recorder (server/agent/recorder.ts), as its own process
// so a test can kill it mid-session: `node test/crash-recorder-worker.ts '<json>'` records output
// into the folder without end and prints "RECORDING" once some of it is on disk.
import { existsSync } from "node:fs";
import pino from "pino";
import { systemClock } from "../core/clock.ts";
import { userOfKeyId } from "../server/agent/audit.ts";
import { metaPathOf, SessionRecorder } from "../server/agent/recorder.ts";

const o = JSON.parse(process.argv[2] ?? "{}") as { dir: string; id: string };
const recorder = new SessionRecorder({
  dir: o.dir,
  clock: systemClock,
  logger: pino({ level: "silent" }),
  userOf: (i) => userOfKeyId(i.keyId),
  onFinished: () => undefined,
});
const sink = recorder.start({
  sessionId: o.id,
  login: "dev",
  keyId: "user=crash0 session=worker",
  remoteAddress: "127.0.0.1",
  pty: { term: "xterm", cols: 80, rows: 24 },
});
let n = 0;
let told = false;
setInterval(() => {
  for (let i = 0; i < 20; i++) sink.output(Buffer.from(`line ${n++} ${"x".repeat(100)}\r\n`));
  if (!told && n > 400 && existsSync(metaPathOf(o.dir, o.id))) {
    told = true;
    process.stdout.write("RECORDING\n");
  }
}, 5);
