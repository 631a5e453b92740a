// The agent's SSH server against the real OpenSSH client: user certificates from ssh-keygen, the
// agent's host certificate trusted through @cert-authority, exec, exit status, an interactive -tt
// session on a real PTY, window-change, force-command, source-address, running as another login,
// and refusals (plain keys, wrong principal, expired, untrusted CA, password), all audited.
import { execFile, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import ssh2 from "ssh2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../core/clock.ts";
import { BadParameterError } from "../core/errors.ts";
import { connectWithCertificate, hostCertificateVerifier, shell } from "../core/sshclient/index.ts";
import type { PasswdLookup } from "../server/agent/passwd.ts";
import { getentPasswd } from "../server/agent/passwd.ts";
import {
  type AgentSshAuditEvent,
  AgentSshServer,
  resolveLoginUser,
  type SessionInfo,
} from "../server/agent/ssh-server.ts";
import { certSsh, certSshArgs, type SshResult } from "./harness/ssh-login.ts";

const run = promisify(execFile);

let dir = "";
let server: AgentSshServer | undefined;
let port = 0;
let userCaPub = "";
let hostCaPub = "";
const audit: AgentSshAuditEvent[] = [];
/** What the server asked the node-side decision; key ids listed in `refusedKeyIds` are refused. */
const questions: { keyId: string; login: string; line: string }[] = [];
const refusedKeyIds = new Set<string>();
const recorded: Array<{ info: SessionInfo; out: Buffer[]; resizes: string[] }> = [];

async function keygen(name: string, args: string[] = ["-t", "ed25519"]): Promise<string> {
  const path = join(dir, name);
  await run("ssh-keygen", ["-q", ...args, "-N", "", "-C", name, "-f", path]);
  return path;
}

/** A user key + certificate from the real ssh-keygen; returns the private key path. */
async function userCert(
  name: string,
  principal: string,
  extra: string[] = [],
  ca = "user_ca",
  keyArgs = ["-t", "ed25519"],
): Promise<string> {
  const path = await keygen(name, keyArgs);
  await run("ssh-keygen", [
    "-q",
    "-s",
    join(dir, ca),
    "-I",
    `id-${name}`,
    "-n",
    principal,
    "-V",
    "+5m",
    ...extra,
    `${path}.pub`,
  ]);
  return path;
}

function sshArgs(key: string, knownHosts: string, login: string, extra: string[] = []): string[] {
  return certSshArgs({ key, knownHosts, port, user: login, extra });
}

function ssh(
  key: string,
  login: string,
  command: string,
  knownHosts = join(dir, "known_hosts"),
): Promise<SshResult> {
  return certSsh({ key, knownHosts, port, user: login }, command);
}

// Test logins: root comes from the real passwd; "svc-test-nobody" is nobody's uid/gid with a
// real shell, so privilege dropping is exercised without adding a user to this machine.
const lookupUser: PasswdLookup = async (login) => {
  if (login === "svc-test-nobody")
    return { name: login, uid: 65534, gid: 65534, home: dir, shell: "/bin/sh" };
  return getentPasswd(login);
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-agent-ssh-"));
  await chmod(dir, 0o755);
  await keygen("user_ca");
  await keygen("host_ca");
  await keygen("other_ca");
  userCaPub = (await readFile(join(dir, "user_ca.pub"), "utf8")).trim();
  hostCaPub = (await readFile(join(dir, "host_ca.pub"), "utf8")).trim();
  const hostKey = await keygen("host");
  await run("ssh-keygen", [
    "-q",
    "-s",
    join(dir, "host_ca"),
    "-I",
    "node-1",
    "-h",
    "-n",
    "127.0.0.1",
    "-V",
    "+1h",
    `${hostKey}.pub`,
  ]);
  server = new AgentSshServer({
    hostKey: await readFile(hostKey, "utf8"),
    hostCertificate: await readFile(`${hostKey}-cert.pub`, "utf8"),
    trustedUserCaKeys: () => [userCaPub],
    authorizeLogin: async (q) => {
      questions.push({ keyId: q.certificate.keyId, login: q.login, line: q.certificateLine });
      if (refusedKeyIds.has(q.certificate.keyId)) throw new Error("no role allows this login here");
    },
    clock: systemClock,
    logger: pino({ level: "silent" }),
    audit: (e) => audit.push(e),
    observer: {
      start: (info) => {
        const rec = { info, out: [] as Buffer[], resizes: [] as string[] };
        recorded.push(rec);
        return {
          output: (d) => rec.out.push(Buffer.from(d)),
          resize: (c, r) => rec.resizes.push(`${c}x${r}`),
          end: () => {},
        };
      },
    },
    lookupUser,
  });
  ({ port } = await server.listen(0, "127.0.0.1"));
  await writeFile(join(dir, "known_hosts"), `@cert-authority [127.0.0.1]:${port} ${hostCaPub}\n`);
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("agent SSH server with the OpenSSH client", () => {
  it("runs a command for a certificate login, trusted through @cert-authority", async () => {
    const key = await userCert("u_exec", "root");
    const r = await ssh(key, "root", "echo hello");
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("hello\n");
    expect(r.code).toBe(0);
    expect(audit).toContainEqual(
      expect.objectContaining({ type: "ssh.auth", login: "root", keyId: "id-u_exec" }),
    );
    expect(audit).toContainEqual(
      expect.objectContaining({ type: "session.start", login: "root", command: "echo hello", tty: false }),
    );
    expect(audit).toContainEqual(
      expect.objectContaining({ type: "session.end", login: "root", exit: { code: 0 } }),
    );
  });

  for (const [kind, args] of [
    ["ecdsa-p256", ["-t", "ecdsa", "-b", "256"]],
    ["rsa-3072", ["-t", "rsa", "-b", "3072"]],
  ] as const) {
    it(`accepts an ${kind} user certificate`, async () => {
      const key = await userCert(`u_${kind}`, "root", [], "user_ca", [...args]);
      const r = await ssh(key, "root", "echo hello");
      expect(r.stdout).toBe("hello\n");
      expect(audit).toContainEqual(expect.objectContaining({ type: "ssh.auth", keyId: `id-u_${kind}` }));
    });
  }

  it("returns the exit status and stderr", async () => {
    const key = await userCert("u_status", "root");
    const r = await ssh(key, "root", "echo oops >&2; exit 7");
    expect(r.code).toBe(7);
    expect(r.stderr).toBe("oops\n");
  });

  it("refuses to connect when the host certificate is not from the trusted host CA", async () => {
    const key = await userCert("u_hostca", "root");
    const otherCa = (await readFile(join(dir, "other_ca.pub"), "utf8")).trim();
    const kh = join(dir, "known_hosts_other");
    await writeFile(kh, `@cert-authority [127.0.0.1]:${port} ${otherCa}\n`);
    const r = await ssh(key, "root", "echo hello", kh);
    expect(r.code).toBe(255);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/Host key verification failed/);
  });

  it("serves an interactive -tt session on a real PTY and records it", async () => {
    const key = await userCert("u_tty", "root");
    const child = spawn("ssh", [...sshArgs(key, join(dir, "known_hosts"), "root", ["-tt"])], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    child.stdin.write("tty; echo result=$((6*7))\n");
    child.stdin.write("exit 3\n");
    const code = await exited;
    expect(out).toMatch(/\/dev\/pts\/\d+/);
    expect(out).toContain("result=42");
    expect(code).toBe(3);
    const rec = recorded.find((r) => r.info.keyId === "id-u_tty");
    expect(rec?.info.pty).toBeDefined();
    expect(Buffer.concat(rec?.out ?? []).toString()).toContain("result=42");
  });

  it("runs a command on a PTY (-tt) with all of its output", async () => {
    const key = await userCert("u_ttexec", "root");
    const { stdout } = await run(
      "ssh",
      [...sshArgs(key, join(dir, "known_hosts"), "root", ["-tt"]), "seq 1 2000; test -t 0 && echo on-a-tty"],
      { timeout: 60_000 },
    );
    const lines = stdout.split(/\r?\n/);
    expect(lines).toContain("2000");
    expect(lines).toContain("on-a-tty");
  });

  it("gives sessions a clean environment, not the agent's", async () => {
    process.env["SVC_AGENT_TEST_SECRET"] = "must-not-leak";
    try {
      const key = await userCert("u_env", "root");
      const plain = await ssh(key, "root", "env");
      const { stdout: onTty } = await run(
        "ssh",
        [...sshArgs(key, join(dir, "known_hosts"), "root", ["-tt"]), "env"],
        { timeout: 60_000 },
      );
      for (const out of [plain.stdout, onTty]) {
        expect(out).toContain("USER=root");
        expect(out).toMatch(new RegExp(`SSH_CONNECTION=127\\.0\\.0\\.1 \\d+ 127\\.0\\.0\\.1 ${port}`));
        expect(out).not.toContain("must-not-leak");
      }
      expect(onTty).toMatch(/TERM=\S+/);
    } finally {
      delete process.env["SVC_AGENT_TEST_SECRET"];
    }
  });

  it("applies force-command and passes the original command", async () => {
    const key = await userCert("u_forced", "root", ["-O", "force-command=echo forced:$SSH_ORIGINAL_COMMAND"]);
    const r = await ssh(key, "root", "echo hello");
    expect(r.stdout).toBe("forced:echo hello\n");
  });

  it("runs the session as the requested login, with that login's groups only", async () => {
    const key = await userCert("u_nobody", "svc-test-nobody");
    const r = await ssh(key, "svc-test-nobody", "id -u; id -G; echo $USER");
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("65534\n65534\nsvc-test-nobody\n");
  });

  const refusals: Array<[string, () => Promise<string>, string, RegExp]> = [
    [
      "a certificate for another principal",
      () => userCert("u_alice", "alice"),
      "root",
      /not valid for principal/,
    ],
    [
      "an expired certificate",
      () => userCert("u_old", "root", ["-V", "20200101:20200102"]),
      "root",
      /expired/,
    ],
    [
      "a certificate from an untrusted CA",
      () => userCert("u_other", "root", [], "other_ca"),
      "root",
      /trusted CA/,
    ],
    [
      "a certificate limited to other source addresses",
      () => userCert("u_src", "root", ["-O", "source-address=10.9.0.0/16"]),
      "root",
      /address/,
    ],
    [
      "a login that does not exist",
      () => userCert("u_ghost", "svc-no-such-user"),
      "svc-no-such-user",
      /does not exist/,
    ],
  ];
  for (const [what, make, login, reason] of refusals) {
    it(`refuses ${what} and audits it`, async () => {
      const key = await make();
      const r = await ssh(key, login, "echo hello");
      expect(r.code).toBe(255);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/Permission denied/);
      expect(audit).toContainEqual(
        expect.objectContaining({ type: "ssh.auth.refused", login, reason: expect.stringMatching(reason) }),
      );
    });
  }

  it("asks the node-side decision with the presented certificate, and a refusal there ends the login", async () => {
    const key = await userCert("u_refused", "root");
    refusedKeyIds.add("id-u_refused");
    const r = await ssh(key, "root", "echo should-not-run");
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    const asked = questions.find((q) => q.keyId === "id-u_refused");
    expect(asked?.login).toBe("root");
    // The exact certificate the client presented is what the decision sees.
    const presented = (await readFile(`${key}-cert.pub`, "utf8")).trim().split(/\s+/).slice(0, 2).join(" ");
    expect(asked?.line).toBe(presented);
    expect(audit).toContainEqual(
      expect.objectContaining({
        type: "ssh.auth.refused",
        login: "root",
        keyId: "id-u_refused",
        reason: "no role allows this login here",
      }),
    );
    expect(audit).not.toContainEqual(expect.objectContaining({ type: "ssh.auth", keyId: "id-u_refused" }));
  });

  it("refuses a plain key (no certificate)", async () => {
    const key = await keygen("u_plain");
    const args = sshArgs(key, join(dir, "known_hosts"), "root");
    const at = args.findIndex((a) => a.startsWith("CertificateFile="));
    args.splice(at - 1, 2);
    const { stdout, stderr } = await run("ssh", [...args, "echo hi"], { timeout: 60_000 }).catch(
      (e: { stdout: string; stderr: string }) => e,
    );
    expect(stdout).toBe("");
    expect(stderr).toMatch(/Permission denied/);
    expect(audit).toContainEqual(
      expect.objectContaining({ type: "ssh.auth.refused", reason: "only certificates are accepted" }),
    );
  });
});

describe("agent SSH server with the ssh2 client (core/sshclient)", () => {
  it("verifies the host certificate, opens a PTY shell and follows window changes", async () => {
    const key = await userCert("u_ssh2", "root");
    const client = await connectWithCertificate({
      host: "127.0.0.1",
      port,
      username: "root",
      privateKey: await readFile(key, "utf8"),
      certificate: await readFile(`${key}-cert.pub`, "utf8"),
      hostVerifier: hostCertificateVerifier({
        trustedCaKeys: [hostCaPub],
        principal: "127.0.0.1",
        clock: systemClock,
      }),
      requireHostCertificate: true,
      timeoutMs: 30_000,
    });
    try {
      const ch = await shell(client, { cols: 80, rows: 24 });
      let out = "";
      ch.on("data", (d: Buffer) => {
        out += d.toString();
      });
      const closed = new Promise<void>((resolve) => ch.on("close", () => resolve()));
      ch.write("stty size\n");
      await waitFor(() => /24 80/.test(out));
      ch.setWindow(40, 132, 0, 0);
      // window-change is not acknowledged: poll until the PTY reports the new size
      for (let i = 0; i < 50 && !/40 132/.test(out); i++) {
        ch.write("stty size\n");
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(out).toMatch(/40 132/);
      ch.write("exit\n");
      await closed;
      const rec = recorded.find((r) => r.info.keyId === "id-u_ssh2");
      expect(rec?.resizes).toContain("132x40");
    } finally {
      client.end();
    }
  });

  it("refuses password authentication", async () => {
    const client = new ssh2.Client();
    const err = await new Promise<Error & { level?: string }>((resolve) => {
      client.on("error", resolve);
      client.on("ready", () => resolve(new Error("unexpectedly logged in")));
      client.connect({
        host: "127.0.0.1",
        port,
        username: "root",
        password: "hunter2",
        readyTimeout: 30_000,
      });
    });
    client.end();
    expect(err.level).toBe("client-authentication");
    expect(audit).toContainEqual(
      expect.objectContaining({ type: "ssh.auth.refused", method: "password", login: "root" }),
    );
    // the password itself is never recorded
    expect(JSON.stringify(audit)).not.toContain("hunter2");
  });
});

describe("resolveLoginUser", () => {
  it("lets root serve any existing login and a non-root agent only its own user", async () => {
    const me = { name: "svc", uid: 1000, gid: 1000, home: "/home/svc", shell: "/bin/sh" };
    const root = { name: "root", uid: 0, gid: 0, home: "/root", shell: "/bin/sh" };
    const lookup: PasswdLookup = async (l) => (l === "svc" ? me : l === "root" ? root : undefined);
    await expect(resolveLoginUser("svc", 0, lookup)).resolves.toEqual({ user: me, dropPrivileges: true });
    await expect(resolveLoginUser("root", 0, lookup)).resolves.toEqual({ user: root, dropPrivileges: false });
    await expect(resolveLoginUser("svc", 1000, lookup)).resolves.toEqual({ user: me, dropPrivileges: false });
    await expect(resolveLoginUser("root", 1000, lookup)).rejects.toBeInstanceOf(BadParameterError);
    await expect(resolveLoginUser("ghost", 0, lookup)).rejects.toBeInstanceOf(BadParameterError);
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}
