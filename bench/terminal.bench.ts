// Browser terminal benchmark, all paths against the same node in one run (issues 6 and 17):
// - throughput: bytes/s of shell output through our WebSocket terminal vs a direct OpenSSH `ssh`
//   session (goal >= 50 %) and vs wetty, the peer web terminal (goal >= 2x);
// - keystroke echo: p50/p99 round trip of one byte through a raw-mode `cat`, WebSocket minus direct
//   ssh = what the proxy adds (goal p99 <= 1 ms added);
// - opening terminals (bench/terminal-open.ts): new sessions/s and open latency of our path vs
//   direct OpenSSH at the same concurrency, with the stages of the proxy and the agent, and the
//   proxy's memory per idle session (goal <= 256 KiB).
// The proxy runs in its own process (bench/tunnel-proxy-process.ts, assembled as `svcd start` does,
// shared with the tunnel benchmark) so its memory and CPU are its own, and so does the node agent
// (bench/terminal-agent-process.ts); auth runs in this process; the throughput/latency node is a
// real OpenSSH sshd (agentless node). Every path logs in as a Unix user made for the run whose login
// shell reads no profile (bench/terminal-user.ts), removed at the end.
// Knobs (environment):
//   SVC_BENCH_TERMINAL_PARTS=stream|open     one part only (default both)
//   SVC_BENCH_TERMINAL_BYTES                 throughput payload (default 16 MiB)
//   SVC_BENCH_TERMINAL_LATENCY_OPENS         open latency: sequential opens per path, one in
//                                            flight, paths interleaved (default 200)
//   SVC_BENCH_TERMINAL_SESSIONS              open rate: sessions per path (default 200)
//   SVC_BENCH_TERMINAL_IN_FLIGHT             open rate: opening at a time (default 8)
//   SVC_BENCH_TERMINAL_WEB_SESSIONS          web sessions the opens take in turn (default 8)
//   SVC_BENCH_TERMINAL_CERT_REUSE=0          the proxy asks auth for a certificate on every open
//                                            (default: a session reuses its own per agent node)
//   SVC_BENCH_CPU_PROF=<dir>                 CPU profiles of the proxy and the agent (at exit)
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { io as socketIo } from "socket.io-client";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { startAgentAuthEnv } from "../test/agent-fixture.ts";
import { startAgentlessSshd } from "../test/terminal-fixture.ts";
import { type BenchRatio, type BenchReport, type BenchRow, percentile } from "./report.ts";
import { openBench } from "./terminal-open.ts";
import { echoSamples, type Session, startEcho, throughput, watcher, wsSession } from "./terminal-session.ts";
import { createBenchLogin } from "./terminal-user.ts";
import { type ProxyProcess, startProxyProcess, stopChild } from "./tunnel-proxy-process.ts";

const PUBLIC_HOST = "proxy.bench.test";
const PAYLOAD = Number(process.env["SVC_BENCH_TERMINAL_BYTES"] ?? 16 * 1024 * 1024);
const ROUNDS = 5;
const ECHO_SAMPLES = 900;
// Which parts run: "stream" (throughput and keystroke echo, with wetty) and "open" (opening
// terminals, bench/terminal-open.ts); both by default.
// Web sessions the WebSocket opens take in turn (see where they are made).
const WEB_SESSIONS = Number(process.env["SVC_BENCH_TERMINAL_WEB_SESSIONS"] ?? 8);
const PARTS = new Set((process.env["SVC_BENCH_TERMINAL_PARTS"] ?? "stream,open").split(","));

function sshSession(args: string[]): Promise<Session> {
  const child = spawn("ssh", args, { stdio: ["pipe", "pipe", "pipe"] });
  const w = watcher();
  child.stdout.on("data", (d: Buffer) => w.push(d));
  child.stderr.on("data", () => undefined);
  return Promise.resolve({
    write: (d) => child.stdin.write(d),
    until: (t, ms) => w.until(t, ms),
    received: w.received,
    close: () => child.kill("SIGTERM"),
  });
}

async function wettySession(port: number): Promise<Session> {
  const socket = socketIo(`https://127.0.0.1:${port}`, {
    path: "/wetty/socket.io",
    transports: ["websocket"],
    rejectUnauthorized: false,
    forceNew: true,
  });
  const w = watcher();
  await new Promise<void>((resolve, reject) => {
    socket.on("login", () => resolve());
    socket.on("connect_error", (err: Error) => reject(err));
  });
  socket.on("data", (d: string) => {
    w.push(d);
    // wetty's flow control: the browser acknowledges what it rendered.
    socket.emit("commit", d.length);
  });
  return {
    write: (d) => socket.emit("input", d),
    until: (t, ms) => w.until(t, ms),
    received: w.received,
    close: () => socket.disconnect(),
  };
}

const median = (xs: number[]): number => percentile(xs, 50);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

/** Throughput and keystroke echo: direct ssh, the proxy's WebSocket and wetty, same sshd. */
async function streamBench(o: {
  dir: string;
  proxy: ProxyProcess;
  cleanups: Array<() => Promise<unknown> | unknown>;
  sshd: { port: number };
  sshConfig: string;
  knownHosts: string;
  sshArgs: string[];
  login: string;
  openWs: (node: string) => Promise<Session>;
}): Promise<{ rows: BenchRow[]; ratios: BenchRatio[] }> {
  const { dir, proxy, cleanups, sshd, sshConfig, knownHosts, sshArgs, openWs } = o;
  const rows: BenchRow[] = [];
  // wetty over HTTPS (the same kind of certificate), spawning the same ssh to the same sshd.
  const wettyTlsKey = join(dir, "wetty.key");
  const wettyTlsCert = join(dir, "wetty.crt");
  await writeFile(wettyTlsKey, proxy.serverKeyPem, { mode: 0o600 });
  await writeFile(wettyTlsCert, proxy.serverCertPem);
  const wettyPort = await freePort();
  const wettyMain = join(import.meta.dirname, "..", "node_modules", "wetty", "build", "main.js");
  const wetty = spawn(
    process.execPath,
    [
      wettyMain,
      "--host",
      "127.0.0.1",
      "--port",
      String(wettyPort),
      "--base",
      "/wetty/",
      "--ssl-key",
      wettyTlsKey,
      "--ssl-cert",
      wettyTlsCert,
      "--ssh-host",
      "127.0.0.1",
      "--ssh-port",
      String(sshd.port),
      "--ssh-user",
      o.login,
      "--ssh-auth",
      "publickey",
      "--ssh-config",
      sshConfig,
      "--known-hosts",
      knownHosts,
      "--force-ssh",
      "--log-level",
      "warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  cleanups.push(() => stopChild(wetty));
  // wetty logs nothing at warn level once listening: poll its port.
  for (let i = 0; ; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once("error", () => resolve(true));
      s.listen(wettyPort, "127.0.0.1", () => s.close(() => resolve(false)));
    });
    if (ok) break;
    if (i > 300 || wetty.exitCode !== null) throw new Error("wetty did not start");
    await new Promise((r) => setTimeout(r, 100));
  }

  const open = {
    ssh: () => sshSession(sshArgs),
    ws: () => openWs("bench-sshd"),
    wetty: () => wettySession(wettyPort),
  };
  type PathName = keyof typeof open;
  const paths: PathName[] = ["ssh", "ws", "wetty"];

  // Throughput: interleaved rounds, fresh session per round, median per path.
  const rates: Record<PathName, number[]> = { ssh: [], ws: [], wetty: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const p of paths) {
      const s = await open[p]();
      try {
        s.write("stty -echo\r");
        await new Promise((res) => setTimeout(res, 300));
        rates[p].push(await throughput(s, PAYLOAD));
      } finally {
        s.close();
      }
    }
  }
  for (const p of paths) {
    rows.push({
      name: `throughput ${p} (${PAYLOAD / 1048576} MiB output)`,
      perSecond: median(rates[p]),
      unit: "B",
    });
  }

  // Keystroke echo: one session per path, samples interleaved in blocks.
  const echo: Record<PathName, number[]> = { ssh: [], ws: [], wetty: [] };
  const sessions: Partial<Record<PathName, Session>> = {};
  for (const p of paths) {
    const s = await open[p]();
    sessions[p] = s;
    await startEcho(s);
    await echoSamples(s, 20); // warm-up
  }
  for (let block = 0; block < 3; block++) {
    for (const p of paths) {
      const s = sessions[p];
      if (s) echo[p].push(...(await echoSamples(s, ECHO_SAMPLES / 3)));
    }
  }
  for (const p of paths) sessions[p]?.close();
  for (const p of paths) {
    rows.push({
      name: `keystroke echo ${p}`,
      p50Ms: percentile(echo[p], 50),
      p99Ms: percentile(echo[p], 99),
    });
  }
  const addedP50 = percentile(echo.ws, 50) - percentile(echo.ssh, 50);
  const echoAddedP99 = percentile(echo.ws, 99) - percentile(echo.ssh, 99);
  rows.push({ name: "keystroke echo added by the proxy (ws - ssh)", p50Ms: addedP50, p99Ms: echoAddedP99 });

  return {
    rows,
    ratios: [
      { name: "throughput ws / direct ssh", ratio: median(rates.ws) / median(rates.ssh), goal: 0.5 },
      { name: "throughput ws / wetty", ratio: median(rates.ws) / median(rates.wetty), goal: 2 },
      { name: "keystroke p99 added by proxy (ms)", ratio: echoAddedP99, goal: 1, lowerIsBetter: true },
    ],
  };
}

export default async function terminalBench(): Promise<BenchReport> {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const rows: BenchRow[] = [];
  const ratios: BenchRatio[] = [];
  try {
    const env = await startAgentAuthEnv({ heartbeatIntervalSeconds: 3600 });
    cleanups.push(() => env.close());
    const dir = await mkdtemp(join(tmpdir(), "svc-terminal-bench-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const bench = await createBenchLogin(env);
    cleanups.push(() => bench.remove());
    const sessionId = await env.login(bench.user);
    // Several web sessions of the user, taken in turn by the WebSocket opens: the proxy limits
    // requests per session (20/s by default) and the rate phase opens more than that, as several
    // users (or tabs with their own logins) would; one session alone is refused with 429.
    const webSessions = [sessionId];
    for (let i = 1; i < WEB_SESSIONS; i++) webSessions.push(await env.login(bench.user));
    let nextSession = 0;

    const sshd = await startAgentlessSshd(env, dir, "bench-sshd");
    cleanups.push(() => sshd.stop());

    // The proxy in its own process.
    const proxy = await startProxyProcess(env, PUBLIC_HOST);
    cleanups.push(() => proxy.stop());
    const proxyUrl = `https://${proxy.address}`;

    // Direct ssh and wetty use a user certificate from the same auth, trusting the host CA.
    const key = generateSshKeyPair("ed25519");
    const cert = await callUnary(
      env.client,
      "IssueUserCerts",
      { ssh_public_key: key.publicLine, ttl_seconds: 3600 },
      userMetadata(sessionId),
    );
    const keyPath = join(dir, "id_ed25519");
    await writeFile(keyPath, key.privateOpenSsh, { mode: 0o600 });
    await writeFile(`${keyPath}-cert.pub`, `${cert.ssh_certificate}\n`);
    const knownHosts = join(dir, "known_hosts");
    await writeFile(knownHosts, `@cert-authority * ${env.cas.sshHostCaPublicKey}\n`);
    const sshConfig = join(dir, "ssh_config");
    await writeFile(
      sshConfig,
      [
        "Host *",
        `  IdentityFile ${keyPath}`,
        `  CertificateFile ${keyPath}-cert.pub`,
        "  IdentitiesOnly yes",
        "  IdentityAgent none",
        `  UserKnownHostsFile ${knownHosts}`,
        "  GlobalKnownHostsFile /dev/null",
        "  StrictHostKeyChecking yes",
        "  BatchMode yes",
        // Host certificates name the node ID and hostname, not addresses.
        "  HostKeyAlias bench-sshd",
        "",
      ].join("\n"),
    );
    const sshArgs = ["-F", sshConfig, "-tt", "-p", String(sshd.port), `${bench.login}@127.0.0.1`];

    const openWs = (node: string): Promise<Session> =>
      wsSession({
        url: proxyUrl,
        ca: env.cas.hostCa.certPem,
        servername: PUBLIC_HOST,
        sessionId: webSessions[nextSession++ % webSessions.length] ?? sessionId,
        node,
        login: bench.login,
      });
    if (PARTS.has("stream")) {
      const r = await streamBench({
        dir,
        proxy,
        cleanups,
        sshd,
        sshConfig,
        knownHosts,
        sshArgs,
        login: bench.login,
        openWs,
      });
      rows.push(...r.rows);
      ratios.push(...r.ratios);
    }
    if (PARTS.has("open")) {
      const r = await openBench({ env, dir, proxy, cleanups, ssh: () => sshSession(sshArgs), openWs });
      rows.push(...r.rows);
      ratios.push(...r.ratios);
    }

    return {
      title: "browser terminal (WebSocket via proxy vs direct ssh vs wetty, same sshd node)",
      rows,
      ratios,
    };
  } finally {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {
        // keep cleaning
      }
    }
  }
}
