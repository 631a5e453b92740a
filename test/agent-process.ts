// The agent daemon as its own process for the tests: `node test/agent-process.ts '<json options>'`
// runs runAgent (server/agent/main.ts) with those options, prints "READY <json>" once SSH is
// served, and closes cleanly on SIGTERM. Join failures end the process with code 1 and the reason
// on stderr, like `svcd agent` would.
import pino from "pino";
import { runAgent } from "../server/agent/main.ts";

const opts = JSON.parse(process.argv[2] ?? "{}") as Parameters<typeof runAgent>[0];
try {
  const agent = await runAgent({ ...opts, logger: pino({ level: "warn" }, pino.destination(2)) });
  process.stdout.write(
    `READY ${JSON.stringify({ agentId: agent.agentId, hostname: agent.hostname, ssh: agent.ssh, joined: agent.joined })}\n`,
  );
  process.once("SIGTERM", () => {
    void agent.close().then(() => process.exit(0));
  });
} catch (err) {
  process.stderr.write(`agent: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
