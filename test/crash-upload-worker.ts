// The agent's upload of leftover recordings as its own process, so a test can kill it mid-upload:
// `node test/crash-upload-worker.ts '<json>'` runs uploadPending (server/agent/upload.ts) on a
// recordings folder with a joined node's credentials and prints "DONE <count>".
import pino from "pino";
import { uploadPending } from "../server/agent/upload.ts";
import { agentMetadata, createAuthClient } from "../server/auth/client.ts";

const o = JSON.parse(process.argv[2] ?? "{}") as {
  address: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  agentId: string;
  dir: string;
};
const client = createAuthClient({
  address: o.address,
  caPems: [o.caPem],
  serverName: "localhost",
  certPem: o.certPem,
  keyPem: o.keyPem,
});
const sent = await uploadPending(client, () => agentMetadata(o.agentId), o.dir, pino({ level: "warn" }));
process.stdout.write(`DONE ${sent}\n`);
client.close();
