// Child process for bench/renewal.bench.ts: the real auth server (test/agent-fixture.ts: TLS 1.3,
// real CAs, SQLite, node join and RenewNodeCredentials with 24 h node certificates) in a process of
// its own, so its CPU time is auth's alone. Line protocol on stdin/stdout (one JSON per line):
//   start: prints {address, serverName, hostCaPem}
//   {"cmd":"join","n":N} -> {nodes:[{agentId, certPem, keyPem}]} (N nodes joined in-process)
//   {"cmd":"cpu"} -> {userUs, systemUs} (process.cpuUsage since start)
// Stops when stdin closes.
import { createInterface } from "node:readline";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import { startAgentAuthEnv } from "../test/agent-fixture.ts";

const env = await startAgentAuthEnv({ nodeCertTtlSeconds: 24 * 3600 });
const reply = (v: unknown): void => void process.stdout.write(`${JSON.stringify(v)}\n`);
reply({ address: env.address, serverName: env.serverName, hostCaPem: env.cas.hostCa.certPem });

let joined = 0;
async function join(n: number): Promise<unknown> {
  const nodes = [];
  for (let i = 0; i < n; i++) {
    const name = `bench-${joined++}`;
    const tls = generateEcdsaP256();
    const res = await env.join.register(
      {
        token: await env.addToken(name),
        hostname: name,
        host_ssh_public_key: generateSshKeyPair("ed25519").publicLine,
        tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
        labels: {},
        addresses: ["127.0.0.1:3022"],
        agentless: false,
      },
      { peer: "ipv4:127.0.0.1:1" },
    );
    nodes.push({
      agentId: res.agent_id,
      certPem: res.tls_certificate_pem,
      keyPem: privateKeyToPem(tls.privateKey),
    });
  }
  return { nodes };
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const msg = JSON.parse(line) as { cmd: string; n?: number };
  if (msg.cmd === "join") void join(msg.n ?? 1).then(reply);
  else if (msg.cmd === "cpu") {
    const c = process.cpuUsage();
    reply({ userUs: c.user, systemUs: c.system });
  }
});
lines.on("close", () => {
  void env.close().then(() => process.exit(0));
});
