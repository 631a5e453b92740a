// Browser terminal benchmark, all paths against the same node in one run (issue 6):
// - throughput: bytes/s of shell output through our WebSocket terminal vs a direct OpenSSH `ssh`
//   session (goal >= 50 %) and vs wetty, the peer web terminal (goal >= 2x);
// - keystroke echo: p50/p99 round trip of one byte through a raw-mode `cat`, WebSocket minus direct
//   ssh = what the proxy adds (goal p99 <= 1 ms added);
// - memory: proxy process growth per idle terminal session with up to 1,000 open (goal <= 256 KiB).
// The proxy runs in its own process (test/terminal-proxy-process.ts) so its memory is its own;
// auth runs in this process; the throughput/latency node is a real OpenSSH sshd (agentless node),
// the memory node a real node agent (its own process) since it serves many sessions cheaply.
import { type ChildProcess, fork, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { io as socketIo } from "socket.io-client";
import WebSocket from "ws";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { startAgentAuthEnv, startAgentProcess } from "../test/agent-fixture.ts";
import { startAgentlessSshd } from "../test/terminal-fixture.ts";
import type { ProxyProcessConfig } from "../test/terminal-proxy-process.ts";
import { type BenchReport, type BenchRow, percentile } from "./report.ts";

const PUBLIC_HOST = "proxy.bench.test";
const PAYLOAD = Number(process.env["SVC_BENCH_TERMINAL_BYTES"] ?? 16 * 1024 * 1024);
const ROUNDS = 5;
const ECHO_SAMPLES = 900;
const SESSIONS = Number(process.env["SVC_BENCH_TERMINAL_SESSIONS"] ?? 1000);
const MARK = "END-42";
const FLOOD = `stty -echo; head -c ${PAYLOAD} /dev/zero | tr '\\0' a; echo; echo EN''D-$((40+2))\r`;
const CAT = "stty raw -echo; printf 'R''DY'; exec cat\r";

/** One shell session, whatever carries it: write keystrokes, watch output. */
interface Session {
  write(data: string): void;
  /** resolves when `text` shows up in output received after this call */
  until(text: string, timeoutMs?: number): Promise<void>;
  received(): number;
  close(): void;
}

/** Output watcher shared by the three transports: counts bytes, keeps a short tail to match. */
function watcher() {
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

async function wsSession(o: { url: string; ca: string; sessionId: string; node: string }): Promise<Session> {
  const url = `${o.url.replace(/^https/, "wss")}/v1/webapi/ssh/connect?node=${o.node}&login=root`;
  const options: WebSocket.ClientOptions & { servername: string } = {
    ca: o.ca,
    servername: PUBLIC_HOST,
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

/** Bytes/s of one flood of output. */
async function throughput(s: Session): Promise<number> {
  const start = performance.now();
  const before = s.received();
  const done = s.until(MARK, 300_000);
  s.write(FLOOD);
  await done;
  return ((s.received() - before) / (performance.now() - start)) * 1000;
}

/** Echo round trips (ms) of single bytes through a raw-mode cat. */
async function echoSamples(s: Session, n: number): Promise<number[]> {
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

function waitLine(
  child: ChildProcess,
  re: RegExp,
  what: string,
  timeoutMs = 120_000,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(
      () => reject(new Error(`${what} did not start: ${buf.slice(-1000)}`)),
      timeoutMs,
    );
    const on = (d: Buffer): void => {
      buf += d.toString();
      const m = re.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout?.on("data", on);
    child.stderr?.on("data", on);
    child.once("exit", (code) => reject(new Error(`${what} exited (${code}): ${buf.slice(-1000)}`)));
  });
}

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

function memoryOf(child: ChildProcess): Promise<Memory> {
  return new Promise((resolve) => {
    child.once("message", (m) => resolve(m as Memory));
    child.send({ cmd: "memory" });
  });
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(t);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

export default async function terminalBench(): Promise<BenchReport> {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const rows: BenchRow[] = [];
  try {
    const env = await startAgentAuthEnv({ heartbeatIntervalSeconds: 3600 });
    cleanups.push(() => env.close());
    const dir = await mkdtemp(join(tmpdir(), "svc-terminal-bench-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const sessionId = await env.login("alice");

    const sshd = await startAgentlessSshd(env, dir, "bench-sshd");
    cleanups.push(() => sshd.stop());

    // The proxy in its own process.
    const clock = systemClock;
    const serverKey = generateEcdsaP256();
    const serverCertPem = await issueTlsServerCert(env.cas.hostCa, {
      publicKey: serverKey.publicKey,
      commonName: PUBLIC_HOST,
      dnsNames: [PUBLIC_HOST],
      ips: ["127.0.0.1"],
      clock,
    });
    const clientKey = generateEcdsaP256();
    const cfg: ProxyProcessConfig = {
      authAddress: env.address,
      authServerName: env.serverName,
      caPems: [env.cas.hostCa.certPem],
      clientCertPem: await issueTlsClientCert(env.cas.hostCa, {
        publicKey: clientKey.publicKey,
        commonName: "proxy",
        uri: serviceIdentityUri("proxy", "bench"),
        clock,
      }),
      clientKeyPem: privateKeyToPem(clientKey.privateKey),
      serverCertPem,
      serverKeyPem: privateKeyToPem(serverKey.privateKey),
      publicUrl: `https://${PUBLIC_HOST}`,
    };
    const proxyChild = fork(
      join(import.meta.dirname, "..", "test", "terminal-proxy-process.ts"),
      [JSON.stringify(cfg)],
      {
        execArgv: ["--expose-gc"],
        stdio: ["ignore", "pipe", "pipe", "ipc"],
      },
    );
    cleanups.push(() => stop(proxyChild));
    const proxyPort = Number((await waitLine(proxyChild, /READY (\d+)/, "proxy"))[1]);
    const proxyUrl = `https://127.0.0.1:${proxyPort}`;

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
    const sshArgs = ["-F", sshConfig, "-tt", "-p", String(sshd.port), "root@127.0.0.1"];

    // wetty over HTTPS (the same kind of certificate), spawning the same ssh to the same sshd.
    const wettyTlsKey = join(dir, "wetty.key");
    const wettyTlsCert = join(dir, "wetty.crt");
    await writeFile(wettyTlsKey, cfg.serverKeyPem, { mode: 0o600 });
    await writeFile(wettyTlsCert, serverCertPem);
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
        "root",
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
    cleanups.push(() => stop(wetty));
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

    const node = "bench-sshd";
    const open = {
      ssh: () => sshSession(sshArgs),
      ws: () => wsSession({ url: proxyUrl, ca: env.cas.hostCa.certPem, sessionId, node }),
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
          rates[p].push(await throughput(s));
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
      const ready = s.until("RDY", 30_000);
      s.write(CAT);
      await ready;
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
    const addedP99 = percentile(echo.ws, 99) - percentile(echo.ssh, 99);
    rows.push({ name: "keystroke echo added by the proxy (ws - ssh)", p50Ms: addedP50, p99Ms: addedP99 });

    // Memory: idle sessions to a node agent, proxy process measured after GC.
    const agentDir = join(dir, "agent");
    const agent = startAgentProcess({
      authAddress: env.address,
      authServerName: env.serverName,
      caPin: env.pin,
      token: await env.addToken("bench-agent-token"),
      dataDir: agentDir,
      listen: "127.0.0.1:0",
      hostname: "bench-agent",
      heartbeatIntervalSeconds: 3600,
    });
    cleanups.push(() => agent.stop());
    await agent.ready;
    const idle: Session[] = [];
    cleanups.push(() => {
      for (const s of idle) s.close();
    });
    const base = await memoryOf(proxyChild);
    let opened = 0;
    let failure = "";
    const started = performance.now();
    while (opened < SESSIONS && failure === "") {
      const batch = Math.min(20, SESSIONS - opened);
      const results = await Promise.allSettled(
        Array.from({ length: batch }, () =>
          wsSession({ url: proxyUrl, ca: env.cas.hostCa.certPem, sessionId, node: "bench-agent" }),
        ),
      );
      for (const r of results) {
        if (r.status === "fulfilled") idle.push(r.value);
        else failure = r.reason instanceof Error ? r.reason.message : String(r.reason);
      }
      opened = idle.length;
    }
    const openSeconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 3000));
    const loaded = await memoryOf(proxyChild);
    const perSession = (k: keyof Memory): number => (loaded[k] - base[k]) / Math.max(1, opened);
    const rssKiB = perSession("rss") / 1024;
    const jsKiB = (perSession("heapUsed") + perSession("external")) / 1024;
    rows.push({
      name: `proxy memory per idle session (${opened} open)`,
      note: `RSS +${rssKiB.toFixed(1)} KiB, V8 heap+external +${jsKiB.toFixed(1)} KiB; opened in ${openSeconds.toFixed(0)} s${failure ? `; stopped early: ${failure}` : ""}`,
    });
    for (const s of idle) s.close();
    idle.length = 0;

    return {
      title: "browser terminal (WebSocket via proxy vs direct ssh vs wetty, same sshd node)",
      rows,
      ratios: [
        { name: "throughput ws / direct ssh", ratio: median(rates.ws) / median(rates.ssh), goal: 0.5 },
        { name: "throughput ws / wetty", ratio: median(rates.ws) / median(rates.wetty), goal: 2 },
        { name: "keystroke p99 added by proxy (ms)", ratio: addedP99, goal: 1, lowerIsBetter: true },
        // The larger of the two views, so neither a pre-reserved heap nor native buffers hide cost.
        {
          name: "proxy memory per idle session (KiB)",
          ratio: Math.max(rssKiB, jsKiB),
          goal: 256,
          lowerIsBetter: true,
        },
      ],
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
