// For test/node-renewal.test.ts: an agent's renewal in a process of its own that is killed with
// SIGKILL at a chosen point: `node test/renewal-crash-process.ts '<json>'` with {dataDir, address,
// serverName, at: "after-rpc" | "mid-save"}. "after-rpc": auth answered, nothing written yet;
// "mid-save": half of the new identity written to the temp file, before the rename.
import { open } from "node:fs/promises";
import { join } from "node:path";
import pino from "pino";
import { AgentCredentials } from "../server/agent/credentials.ts";
import { IDENTITY_FILE, loadIdentity } from "../server/agent/identity.ts";

const o = JSON.parse(process.argv[2] ?? "{}") as {
  dataDir: string;
  address: string;
  serverName: string;
  at: "after-rpc" | "mid-save";
};
const identity = await loadIdentity(o.dataDir);
if (!identity) throw new Error("no identity to renew");
const creds = new AgentCredentials({
  identity,
  route: { address: o.address, serverName: o.serverName },
  dataDir: o.dataDir,
  logger: pino({ level: "silent" }),
  save: async (dir, next) => {
    if (o.at === "mid-save") {
      const text = JSON.stringify(next, null, 2);
      const fh = await open(join(dir, `.${IDENTITY_FILE}.killed.tmp`), "wx", 0o600);
      await fh.write(text.slice(0, text.length / 2));
      await fh.sync();
    }
    process.stdout.write("KILL\n");
    process.kill(process.pid, "SIGKILL");
    await new Promise(() => {});
  },
});
await creds.renew();
