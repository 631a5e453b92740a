// Runs a real OpenSSH sshd in the foreground on a free loopback port with its own config, keys and
// trust anchors in a temp folder. No system service or system config is touched; stop() kills only
// the process this harness started and removes its folder.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const SSHD = process.env["SSHD_PATH"] ?? "/usr/sbin/sshd";

export interface SshdOptions {
  /** OpenSSH public key lines of user CAs (TrustedUserCAKeys) */
  trustedUserCaKeys?: string[];
  /** host key to serve; generated with ssh-keygen when absent */
  hostKey?: { privatePath: string; publicLine: string };
  /** a host certificate for the host key (HostCertificate) */
  hostCertificatePath?: string;
  /**
   * extra sshd_config lines. sshd keeps the first value it reads for a keyword, so these go
   * before the harness defaults and win over them; from the first `Match` line on they go last.
   */
  extraConfig?: string[];
}

export interface RunningSshd {
  host: string;
  port: number;
  dir: string;
  /** the host public key line sshd presents */
  hostPublicKey: string;
  /** sshd's stderr so far (useful in failure messages) */
  log(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitListening(
  child: ChildProcess,
  out: { text: string },
  timeoutMs: number,
  ports: readonly number[],
): Promise<boolean> {
  // sshd logs one "Server listening" line per bound port, in an order of its own: with extra
  // `Port` lines, the first line does not mean the port a test dials is bound yet.
  const listening = (): boolean =>
    ports.every((p) => new RegExp(`Server listening on \\S+ port ${p}\\.`).test(out.text));
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
      resolve(ok);
    };
    const onData = (): void => {
      if (listening()) done(true);
      else if (/Bind to port \d+ .*failed/.test(out.text)) done(false);
    };
    const onExit = (): void => done(false);
    const timer = setTimeout(() => done(false), timeoutMs);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
    onData();
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

export async function startSshd(opts: SshdOptions = {}): Promise<RunningSshd> {
  // sshd insists on its privilege-separation folder.
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const dir = await mkdtemp(join(tmpdir(), "svc-sshd-"));
  try {
    let hostKeyPath: string;
    let hostPublicKey: string;
    if (opts.hostKey) {
      hostKeyPath = opts.hostKey.privatePath;
      hostPublicKey = opts.hostKey.publicLine.trim();
    } else {
      hostKeyPath = join(dir, "ssh_host_ed25519_key");
      await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "svc-test-host", "-f", hostKeyPath]);
      hostPublicKey = (await readFile(`${hostKeyPath}.pub`, "utf8")).trim();
    }
    const caPath = join(dir, "trusted_user_ca_keys");
    await writeFile(caPath, (opts.trustedUserCaKeys ?? []).map((l) => `${l.trim()}\n`).join(""), {
      mode: 0o600,
    });

    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const extra = opts.extraConfig ?? [];
      const firstMatch = extra.findIndex((l) => /^\s*Match\s/i.test(l));
      const head = firstMatch < 0 ? extra : extra.slice(0, firstMatch);
      const tail = firstMatch < 0 ? [] : extra.slice(firstMatch);
      const config = [
        ...head,
        `Port ${port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${hostKeyPath}`,
        ...(opts.hostCertificatePath ? [`HostCertificate ${opts.hostCertificatePath}`] : []),
        `PidFile ${join(dir, "sshd.pid")}`,
        `TrustedUserCAKeys ${caPath}`,
        "AuthorizedKeysFile none",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
        "UsePAM no",
        "StrictModes no",
        "LogLevel VERBOSE",
        ...tail,
      ];
      const configPath = join(dir, "sshd_config");
      await writeFile(configPath, `${config.join("\n")}\n`, { mode: 0o600 });
      const child = spawn(SSHD, ["-D", "-e", "-f", configPath], { stdio: ["ignore", "ignore", "pipe"] });
      const out = { text: "" };
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (d: string) => {
        // bounded: keep the last 64 KiB
        out.text = (out.text + d).slice(-65536);
      });
      child.on("error", (err) => {
        out.text += `\nspawn error: ${err.message}`;
      });
      const ports = [port, ...head.flatMap((l) => /^\s*Port\s+(\d+)\s*$/i.exec(l)?.[1] ?? []).map(Number)];
      if (await waitListening(child, out, 30_000, ports)) {
        return {
          host: "127.0.0.1",
          port,
          dir,
          hostPublicKey,
          log: () => out.text,
          stop: async () => {
            await stopChild(child);
            await rm(dir, { recursive: true, force: true });
          },
        };
      }
      await stopChild(child);
      // Another process may have taken the port between probe and bind: retry a few times.
      if (attempt >= 3 || !/Address already in use|Bind to port/.test(out.text)) {
        throw new Error(`sshd did not start: ${out.text.slice(-2000)}`);
      }
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
