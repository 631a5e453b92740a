// A network namespace for a test: a veth pair with a private /30, loopback up inside, the only
// route pointing at the host side, and an iptables OUTPUT policy inside that lets out nothing but
// the allowed host:port pairs (plus loopback and replies). A process started with `exec()` runs
// in it and can reach the host only where a node behind a firewall could. iproute2 and iptables
// do the work (there is no Node API for namespaces); needs root.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Names start with this and end with the creating pid, so stale ones of dead runs can be found. */
const PREFIX = "svct";

export interface NetnsOptions {
  /** host:port pairs (host = the host side address) the namespace may open TCP connections to */
  allow?: Array<{ host: string; port: number }>;
}

export interface Netns {
  name: string;
  /** the host side of the veth pair: what the namespace reaches the host at */
  hostIp: string;
  /** the namespace side */
  nsIp: string;
  /** opens TCP to host:port (after the rules allow it); replaces the allow list */
  allow(targets: Array<{ host: string; port: number }>): Promise<void>;
  /** spawns a command inside the namespace */
  spawn(cmd: string, args: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  /** runs a command inside the namespace to completion */
  exec(cmd: string, args: string[]): Promise<{ stdout: string; stderr: string }>;
  destroy(): Promise<void>;
}

async function ip(args: string[]): Promise<string> {
  return (await run("ip", args)).stdout;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes namespaces (and their host-side veths) that an earlier run left behind when it died. */
export async function removeStaleNamespaces(): Promise<string[]> {
  const removed: string[] = [];
  const list = await ip(["netns", "list"]).catch(() => "");
  for (const line of list.split("\n")) {
    const name = line.split(" ")[0] ?? "";
    const m = new RegExp(`^${PREFIX}(\\d+)x(\\d+)$`).exec(name);
    if (!m || alive(Number(m[1]))) continue;
    await ip(["netns", "del", name]).catch(() => undefined);
    await ip(["link", "del", `${name}h`]).catch(() => undefined);
    removed.push(name);
  }
  return removed;
}

/** 10.213.<n>.0/30 subnets not used by any address on the host or by a live namespace. */
async function pickSubnet(): Promise<number> {
  const used = await ip(["-4", "-o", "addr", "show"]);
  for (let n = (process.pid % 200) + 1, tries = 0; tries < 255; tries++, n = (n % 254) + 1) {
    if (!used.includes(`10.213.${n}.`)) return n;
  }
  throw new Error("no free 10.213.x.0/30 subnet for a test namespace");
}

let seq = 0;

export async function createNetns(o: NetnsOptions = {}): Promise<Netns> {
  await removeStaleNamespaces();
  seq += 1;
  // Interface names are at most 15 bytes: "svct" + pid + "x" + seq + "h" fits for pids < 10^8.
  const name = `${PREFIX}${process.pid}x${seq}`;
  const hostIf = `${name}h`;
  const nsIf = `${name}n`;
  const n = await pickSubnet();
  const hostIp = `10.213.${n}.1`;
  const nsIp = `10.213.${n}.2`;
  const inNs = (args: string[]) => run("ip", ["netns", "exec", name, ...args]);
  const iptables = (args: string[]) => inNs(["iptables", "-w", ...args]);

  const destroy = async (): Promise<void> => {
    await ip(["netns", "del", name]).catch(() => undefined);
    // Deleting the namespace deletes its veth end, which deletes the pair; this covers a
    // half-built setup.
    await ip(["link", "del", hostIf]).catch(() => undefined);
  };

  try {
    await ip(["netns", "add", name]);
    await ip(["link", "add", hostIf, "type", "veth", "peer", "name", nsIf]);
    await ip(["link", "set", nsIf, "netns", name]);
    await ip(["addr", "add", `${hostIp}/30`, "dev", hostIf]);
    await ip(["link", "set", hostIf, "up"]);
    await ip(["-n", name, "addr", "add", `${nsIp}/30`, "dev", nsIf]);
    await ip(["-n", name, "link", "set", nsIf, "up"]);
    await ip(["-n", name, "link", "set", "lo", "up"]);
    // Everything off-link goes to the host side, where the OUTPUT rules below have already
    // decided: the firewall, not a missing route, is what keeps the node in.
    await ip(["-n", name, "route", "add", "default", "via", hostIp]);
    await iptables(["-P", "OUTPUT", "DROP"]);
    await iptables(["-A", "OUTPUT", "-o", "lo", "-j", "ACCEPT"]);
    await iptables(["-A", "OUTPUT", "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"]);
    await iptables(["-N", "SVC_ALLOW"]);
    await iptables(["-A", "OUTPUT", "-j", "SVC_ALLOW"]);
    // Refused at once rather than left to time out, so a test sees the refusal quickly; the
    // policy behind it still drops anything else (UDP, ICMP).
    await iptables(["-A", "OUTPUT", "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"]);
  } catch (err) {
    await destroy();
    throw err;
  }

  const ns: Netns = {
    name,
    hostIp,
    nsIp,
    async allow(targets) {
      await iptables(["-F", "SVC_ALLOW"]);
      for (const t of targets) {
        await iptables([
          "-A",
          "SVC_ALLOW",
          "-p",
          "tcp",
          "-d",
          `${t.host}/32`,
          "--dport",
          String(t.port),
          "-j",
          "ACCEPT",
        ]);
      }
    },
    spawn(cmd, args, env) {
      return spawn("ip", ["netns", "exec", name, cmd, ...args], {
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "pipe"],
      });
    },
    async exec(cmd, args) {
      return inNs([cmd, ...args]);
    },
    destroy,
  };
  if (o.allow) await ns.allow(o.allow);
  return ns;
}

/**
 * Tries a TCP connection from inside the namespace (a tiny node script run there): resolves
 * "connected" or the error code (ECONNRESET/ECONNREFUSED/ETIMEDOUT...).
 */
export async function tcpProbe(ns: Netns, host: string, port: number, timeoutMs = 3000): Promise<string> {
  const script = `const s=require("node:net").connect(${port},${JSON.stringify(host)});
s.setTimeout(${timeoutMs},()=>{console.log("ETIMEDOUT");process.exit(0)});
s.on("connect",()=>{console.log("connected");s.destroy();process.exit(0)});
s.on("error",(e)=>{console.log(e.code||e.message);process.exit(0)});`;
  const { stdout } = await ns.exec(process.execPath, ["-e", script]);
  return stdout.trim();
}
