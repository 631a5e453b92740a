// core/sshclient logs in with one signed publickey request, without first asking "would you accept
// this key?" (the patched ssh2's signAtOnce), against a real OpenSSH sshd (its debug log names every
// query: "test pkalg") and against our agent's SSH server (its debug log names queries and signed
// requests). The plain ssh2 client (no signAtOnce) is the control: it does ask, so the logs are
// shown to see a query when there is one, and the agent then reuses the query's certificate check.
// The agent also turns Nagle off on the sockets it serves (a login otherwise stalls on delayed ACKs).
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import pino from "pino";
import ssh2, { type PublicKeyAuthMethod } from "ssh2";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemClock } from "../core/clock.ts";
import { connectWithCertificate, exec, hostCertificateVerifier } from "../core/sshclient/index.ts";
import { ssh2PrivateKey } from "../core/sshclient/ssh2-key.ts";
import { getentPasswd } from "../server/agent/passwd.ts";
import { AgentSshServer } from "../server/agent/ssh-server.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";

const run = promisify(execFile);

let dir = "";
let sshd: RunningSshd | undefined;
let agent: AgentSshServer | undefined;
let agentPort = 0;
let hostCaPub = "";
/** the agent's debug log lines */
const agentLog: Array<{ msg: string; keyId?: string; queried?: boolean }> = [];

async function keygen(name: string): Promise<string> {
  const path = join(dir, name);
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path]);
  return path;
}

async function userCert(name: string): Promise<{ key: string; cert: string }> {
  const path = await keygen(name);
  await run("ssh-keygen", [
    "-q",
    "-s",
    join(dir, "user_ca"),
    "-I",
    `id-${name}`,
    "-n",
    "root",
    "-V",
    "+5m",
    `${path}.pub`,
  ]);
  return { key: await readFile(path, "utf8"), cert: (await readFile(`${path}-cert.pub`, "utf8")).trim() };
}

const trustHost = (blob: Buffer): boolean =>
  hostCertificateVerifier({ trustedCaKeys: [hostCaPub], principal: "127.0.0.1", clock: systemClock })(blob);

/** The unchanged ssh2 behaviour: a certificate login that asks before it signs. */
async function loginAskingFirst(port: number, u: { key: string; cert: string }): Promise<void> {
  const method: PublicKeyAuthMethod = {
    type: "publickey",
    username: "root",
    key: ssh2PrivateKey(u.key),
    cert: u.cert,
  };
  const client = new ssh2.Client();
  try {
    await new Promise<void>((resolve, reject) => {
      client.once("ready", () => resolve());
      client.once("error", reject);
      client.connect({
        host: "127.0.0.1",
        port,
        username: "root",
        readyTimeout: 30_000,
        authHandler: [method],
      });
    });
  } finally {
    client.end();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-sign-at-once-"));
  await keygen("user_ca");
  await keygen("host_ca");
  const userCaPub = (await readFile(join(dir, "user_ca.pub"), "utf8")).trim();
  hostCaPub = (await readFile(join(dir, "host_ca.pub"), "utf8")).trim();
  const hostKey = await keygen("host");
  await run("ssh-keygen", [
    "-q",
    "-s",
    join(dir, "host_ca"),
    "-I",
    "host",
    "-h",
    "-n",
    "127.0.0.1",
    "-V",
    "+1h",
    `${hostKey}.pub`,
  ]);
  sshd = await startSshd({
    trustedUserCaKeys: [userCaPub],
    hostKey: { privatePath: hostKey, publicLine: await readFile(`${hostKey}.pub`, "utf8") },
    hostCertificatePath: `${hostKey}-cert.pub`,
    // DEBUG1 logs each publickey query ("test pkalg"); the login itself is logged at VERBOSE
    extraConfig: ["LogLevel DEBUG1"],
  });
  const logSink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line) agentLog.push(JSON.parse(line));
      done();
    },
  });
  agent = new AgentSshServer({
    hostKey: await readFile(hostKey, "utf8"),
    hostCertificate: await readFile(`${hostKey}-cert.pub`, "utf8"),
    trustedUserCaKeys: () => [userCaPub],
    authorizeLogin: async () => {},
    clock: systemClock,
    logger: pino({ level: "debug" }, logSink),
    audit: () => {},
    lookupUser: getentPasswd,
  });
  ({ port: agentPort } = await agent.listen(0, "127.0.0.1"));
});

afterAll(async () => {
  await agent?.close();
  await sshd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** sshd's log lines about one certificate (its key id appears in the login line; queries name the key). */
const queries = (log: string): number =>
  (log.match(/test pkalg ssh-ed25519-cert-v01@openssh.com/g) ?? []).length;

describe("agent sockets", () => {
  it("sets TCP_NODELAY on the sockets it accepts, and core/sshclient on the one it dials", async () => {
    // the server side of a connection is the socket whose local port is the agent's
    const orig = Socket.prototype.setNoDelay;
    const onAgentSide: boolean[] = [];
    const onClientSide: boolean[] = [];
    const spy = vi.spyOn(Socket.prototype, "setNoDelay").mockImplementation(function (this: Socket, v) {
      if (this.localPort === agentPort) onAgentSide.push(v === true);
      else if (this.remotePort === agentPort || this.connecting) onClientSide.push(v === true);
      return orig.call(this, v);
    });
    try {
      const u = await userCert("u_nodelay");
      const client = await connectWithCertificate({
        host: "127.0.0.1",
        port: agentPort,
        username: "root",
        privateKey: u.key,
        certificate: u.cert,
        hostVerifier: trustHost,
        requireHostCertificate: true,
        timeoutMs: 30_000,
      });
      client.end();
    } finally {
      spy.mockRestore();
    }
    expect(onAgentSide).toEqual([true]);
    expect(onClientSide).toEqual([true]);
  });
});

describe("certificate login without the publickey query", () => {
  it("sends OpenSSH sshd only the signed request", async () => {
    const s = sshd!;
    const u = await userCert("u_sshd");
    const before = queries(s.log());
    const client = await connectWithCertificate({
      host: s.host,
      port: s.port,
      username: "root",
      privateKey: u.key,
      certificate: u.cert,
      hostVerifier: trustHost,
      requireHostCertificate: true,
      timeoutMs: 30_000,
    });
    try {
      expect((await exec(client, "echo ok", { timeoutMs: 30_000 })).stdout.toString()).toBe("ok\n");
    } finally {
      client.end();
    }
    expect(s.log()).toMatch(/Accepted certificate ID "id-u_sshd"/);
    expect(queries(s.log()) - before).toBe(0);

    // control: the unchanged client asks first, and sshd's log shows it
    const c = await userCert("u_sshd_asks");
    const mid = queries(s.log());
    await loginAskingFirst(s.port, c);
    expect(s.log()).toMatch(/Accepted certificate ID "id-u_sshd_asks"/);
    expect(queries(s.log()) - mid).toBe(1);
  });

  it("sends our agent only the signed request; a query's certificate check is reused", async () => {
    const u = await userCert("u_agent");
    const client = await connectWithCertificate({
      host: "127.0.0.1",
      port: agentPort,
      username: "root",
      privateKey: u.key,
      certificate: u.cert,
      hostVerifier: trustHost,
      requireHostCertificate: true,
      timeoutMs: 30_000,
    });
    client.end();
    const mine = agentLog.filter((l) => l.keyId === "id-u_agent");
    expect(mine.map((l) => l.msg)).toEqual(["publickey signed request"]);
    expect(mine[0]?.queried).toBe(false);

    const c = await userCert("u_agent_asks");
    await loginAskingFirst(agentPort, c);
    const asked = agentLog.filter((l) => l.keyId === "id-u_agent_asks");
    expect(asked.map((l) => l.msg)).toEqual(["publickey query accepted", "publickey signed request"]);
    expect(asked[1]?.queried).toBe(true);
  });
});
