// The node agent as its own process for the terminal benchmark, so its CPU is its own and it can
// say where each session's open time went: `node bench/terminal-agent-process.ts '<json options>'`
// runs runAgent (server/agent/main.ts) as test/agent-process.ts does, prints "READY <json>" once
// SSH is served and answers {cmd:"opens"} over IPC with the open timings of the sessions started
// since the last ask (AgentSshServer's onSessionOpened) and {cmd:"cpu"} with its CPU time so far
// (µs). SVC_BENCH_CPU_PROF=<folder> runs it under --cpu-prof (a profile written at exit).
import { type ChildProcess, fork } from "node:child_process";
import pino from "pino";
import { runAgent } from "../server/agent/main.ts";
import type { SessionOpenTimings } from "../server/agent/ssh-server.ts";
import { stopChild } from "./tunnel-proxy-process.ts";

export interface BenchAgent {
  child: ChildProcess;
  opens(): Promise<SessionOpenTimings[]>;
  /** user + system CPU time since the process started, µs */
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

/** Forks the agent with runAgent `options` (JSON-able); resolves once it serves SSH. */
export async function startBenchAgent(options: Record<string, unknown>): Promise<BenchAgent> {
  const profDir = process.env["SVC_BENCH_CPU_PROF"];
  const child = fork(import.meta.filename, [JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    execArgv: profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--cpu-prof-name=agent.cpuprofile"] : [],
  });
  const ask = <T>(cmd: string): Promise<T> =>
    new Promise((resolve) => {
      child.once("message", (m) => resolve(m as T));
      child.send({ cmd });
    });
  let out = "";
  const onData = (d: Buffer): void => {
    out = (out + d.toString()).slice(-65536);
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`agent did not start: ${out.slice(-1000)}`)), 120_000);
      const check = (): void => {
        if (/^READY /m.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on("data", check);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`agent exited (${code}): ${out.slice(-1000)}`));
      });
    });
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  return {
    child,
    opens: async () => (await ask<{ opens: SessionOpenTimings[] }>("opens")).opens,
    cpuMicros: async () => (await ask<{ cpuMicros: number }>("cpu")).cpuMicros,
    stop: () => stopChild(child),
  };
}

async function main(options: Parameters<typeof runAgent>[0]): Promise<void> {
  const opens: SessionOpenTimings[] = [];
  const agent = await runAgent({
    ...options,
    logger: pino({ level: "warn" }, pino.destination(2)),
    ssh: { ...options.ssh, onSessionOpened: (t) => opens.push(t) },
  });
  process.on("message", (msg: { cmd?: string }) => {
    if (msg?.cmd === "opens") process.send?.({ opens: opens.splice(0) });
    else if (msg?.cmd === "cpu") {
      const c = process.cpuUsage();
      process.send?.({ cpuMicros: c.user + c.system });
    }
  });
  process.once("SIGTERM", () => {
    void agent.close().then(() => process.exit(0));
  });
  process.stdout.write(`READY ${JSON.stringify({ agentId: agent.agentId, ssh: agent.ssh })}\n`);
}

if (import.meta.main) await main(JSON.parse(process.argv[2] ?? "{}") as Parameters<typeof runAgent>[0]);
