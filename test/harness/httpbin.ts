// go-httpbin (pinned in scripts/tools/versions.env) as the internal web app behind the proxy:
// it echoes headers (/headers), sets cookies (/cookies/set), redirects (/redirect-to), streams
// (/drip, /stream/N) and echoes WebSocket messages (/websocket/echo).
import { type ChildProcess, spawn } from "node:child_process";
import { freePort } from "./ports.ts";
import { until } from "./svcd.ts";
import { toolPath } from "./tools.ts";

export interface Httpbin {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Kills it and waits for the exit (a stopped upstream for "upstream down" cases). */
  stop(): Promise<void>;
}

export async function startHttpbin(o: { extraArgs?: string[] } = {}): Promise<Httpbin> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    toolPath("go-httpbin"),
    ["-host", "127.0.0.1", "-port", String(port), "-log-level", "OFF", ...(o.extraArgs ?? [])],
    { stdio: "ignore" },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  try {
    await until(
      "go-httpbin",
      async () => child.exitCode === null && (await fetch(`${url}/get`)).ok,
      30_000,
      100,
    );
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return {
    url,
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
