// `svc ssh [login@]node [command...]`. Default: an interactive shell through the proxy's terminal
// WebSocket (/v1/webapi/ssh/connect, framing in server/proxy/terminal-protocol.ts): nothing but the
// proxy has to be reachable. With a command: SSH end to end with the node over the proxy's raw node
// stream (/v1/webapi/ssh/dial, docs/tunnels.md), so tunnel nodes work too; with --direct: the node
// is dialled at its advertised address. Either way the CLI logs in with an in-memory key and a
// short-lived certificate from the proxy, and trusts the node only through a host certificate from
// the cluster's host CA naming it.
import type { Duplex } from "node:stream";
import WebSocket, { createWebSocketStream } from "ws";
import { systemClock } from "../core/clock.ts";
import { type ErrorCode, NotFoundError, SvcError, UnavailableError } from "../core/errors.ts";
import {
  connectWithCertificate,
  hostCertificateVerifier,
  type SshClient,
  shell,
} from "../core/sshclient/index.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { requireSession } from "./profile.ts";
import { splitProxyAddress } from "./proxy-client.ts";
import { issueCerts } from "./svc-certs.ts";
import { listNodes } from "./svc-nodes.ts";
import { targetOf } from "./svc-session.ts";

export function parseTarget(target: string, defaultLogin: string): { login: string; node: string } {
  const at = target.lastIndexOf("@");
  const login = at < 0 ? defaultLogin : target.slice(0, at);
  const node = at < 0 ? target : target.slice(at + 1);
  if (!login || !node) throw new CliError(`${JSON.stringify(target)} is not [login@]node`, EXIT.usage);
  return { login, node };
}

function terminalSize(): { cols: number; rows: number } {
  return { cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 };
}

/** Puts a TTY stdin in raw mode for the session; returns how to undo it. */
function rawStdin(): () => void {
  const stdin = process.stdin;
  if (!stdin.isTTY) return () => {};
  stdin.setRawMode(true);
  return () => stdin.setRawMode(false);
}

export async function ssh(
  target: string,
  command: string[],
  opts: { direct?: boolean; login?: string },
): Promise<number> {
  const p = await requireSession();
  const { login, node } = parseTarget(target, opts.login ?? p.user);
  if (opts.direct || command.length > 0)
    return sshSession(p, node, login, command.join(" "), opts.direct ? "direct" : "proxy");
  return viaProxy(p, node, login);
}

type Profile = Awaited<ReturnType<typeof requireSession>>;

/**
 * A byte stream to the node's SSH port through the proxy (WebSocket /v1/webapi/ssh/dial): the
 * proxy checks the login, reaches the node (tunnel or address) and answers `ready`; from then on
 * binary frames carry the SSH connection.
 */
async function dialThroughProxy(p: Profile, node: string, login: string): Promise<Duplex> {
  const t = targetOf(p);
  splitProxyAddress(t.proxy);
  const url = `wss://${t.proxy}/v1/webapi/ssh/dial?${new URLSearchParams({ node, login })}`;
  const ws = new WebSocket(url, {
    headers: { authorization: `Bearer ${p.session_id}` },
    ...(t.insecure ? { rejectUnauthorized: false } : { ca: t.caPem ?? "" }),
    handshakeTimeout: 30_000,
  });
  return new Promise<Duplex>((resolve, reject) => {
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      ws.terminate();
      reject(err);
    };
    ws.on("unexpected-response", (_req, res) => {
      const status = res.statusCode ?? 0;
      const code: ErrorCode =
        status === 401 ? "not_authenticated" : status === 403 ? "access_denied" : "unavailable";
      fail(new SvcError(code, `the proxy refused the node stream (HTTP ${status})`));
    });
    const onMessage = (data: Buffer, isBinary: boolean): void => {
      let m: { type?: string; code?: unknown; message?: unknown } = {};
      try {
        if (!isBinary) m = JSON.parse(data.toString("utf8")) as typeof m;
      } catch {
        // not a control frame
      }
      if (m.type === "ready" && !settled) {
        settled = true;
        ws.off("message", onMessage);
        // Synchronously, so the node's first bytes (its SSH banner) reach the stream.
        const stream = createWebSocketStream(ws);
        // The proxy closing the stream (e.g. the user was locked) must end the SSH connection:
        // the readable side ending alone leaves the client waiting on a half-open stream.
        stream.once("end", () => stream.destroy());
        ws.once("close", (closeCode: number, reason: Buffer) => {
          if (closeCode >= 4000 && reason.length > 0)
            process.stderr.write(`svc: ${reason.toString("utf8")}\n`);
        });
        resolve(stream);
        return;
      }
      const code = typeof m.code === "string" ? (m.code as ErrorCode) : "unavailable";
      fail(new SvcError(code, typeof m.message === "string" ? m.message : "the proxy sent no ready frame"));
    };
    ws.on("message", onMessage);
    ws.on("close", () => fail(new UnavailableError(`the proxy closed the node stream to ${node}`)));
    ws.on("error", (err: Error) =>
      fail(new UnavailableError(`node stream through ${t.proxy} failed: ${err.message}`)),
    );
  });
}

async function sshSession(
  p: Profile,
  hostname: string,
  login: string,
  command: string,
  via: "direct" | "proxy",
): Promise<number> {
  const { nodes } = await listNodes();
  const n = nodes.find((x) => x.hostname === hostname);
  if (!n)
    throw new NotFoundError(`unknown node ${JSON.stringify(hostname)} (svc ls lists the nodes you can see)`);
  // Scoped to this node: the principals are exactly the logins the roles grant there.
  const { key, certs } = await issueCerts(p, 0, n.id);
  if (!certs.principals.includes(login)) {
    throw new SvcError(
      "access_denied",
      `login ${JSON.stringify(login)} is not allowed by your roles (allowed: ${certs.principals.join(", ")})`,
    );
  }
  const hostVerifier = (where: string) =>
    hostCertificateVerifier({
      trustedCaKeys: certs.host_ca_keys,
      // By node ID: the identity auth resolved, which no other node's certificate names.
      principal: n.id,
      clock: systemClock,
      onRefused: (reason) => process.stderr.write(`svc: node ${n.hostname} ${where} refused: ${reason}\n`),
    });
  const credentials = {
    username: login,
    privateKey: key.privateKey,
    certificate: certs.certificate,
    requireHostCertificate: true,
  };
  let client: SshClient | undefined;
  if (via === "proxy") {
    const sock = await dialThroughProxy(p, hostname, login);
    client = await connectWithCertificate({
      ...credentials,
      host: hostname,
      port: 0,
      sock,
      hostVerifier: hostVerifier("through the proxy"),
    }).catch((err: unknown) => {
      sock.destroy();
      throw err;
    });
  } else {
    if (n.addresses.length === 0) throw new UnavailableError(`node ${hostname} advertises no address`);
    let lastError: unknown;
    for (const address of n.addresses) {
      const { host, port } = splitProxyAddress(address);
      try {
        client = await connectWithCertificate({
          ...credentials,
          host,
          port,
          hostVerifier: hostVerifier(`at ${address}`),
        });
        break;
      } catch (err) {
        lastError = err;
      }
    }
    if (!client) {
      const why = lastError instanceof Error ? lastError.message : "unreachable";
      throw new UnavailableError(`cannot connect to ${hostname} directly: ${why}`);
    }
  }
  const c = client;
  try {
    const channel =
      command !== ""
        ? await new Promise<import("ssh2").ClientChannel>((resolve, reject) =>
            c.exec(command, (err, ch) =>
              err ? reject(new UnavailableError(`exec failed: ${err.message}`)) : resolve(ch),
            ),
          )
        : await shell(c, { term: process.env.TERM ?? "xterm-256color", ...terminalSize() });
    const restore = command === "" ? rawStdin() : () => {};
    const onResize = (): void => {
      const s = terminalSize();
      channel.setWindow(s.rows, s.cols, 0, 0);
    };
    process.stdout.on("resize", onResize);
    const code = await new Promise<number>((resolve) => {
      // A channel that closes without an exit status (the connection was cut, or the node ended
      // the session) is a failure, as for OpenSSH's ssh.
      let status: number = EXIT.error;
      channel.on("exit", (codeOrNull: number | null, signal?: string) => {
        status = codeOrNull ?? (signal ? 128 + 1 : EXIT.error);
      });
      channel.on("data", (d: Buffer) => process.stdout.write(d));
      channel.stderr.on("data", (d: Buffer) => process.stderr.write(d));
      channel.on("close", () => resolve(status));
      process.stdin.on("data", (d: Buffer) => channel.write(d));
      process.stdin.on("end", () => channel.end());
    });
    process.stdout.off("resize", onResize);
    restore();
    return code;
  } finally {
    process.stdin.pause();
    c.end();
  }
}

async function viaProxy(p: Profile, node: string, login: string): Promise<number> {
  const t = targetOf(p);
  splitProxyAddress(t.proxy);
  const size = terminalSize();
  const url = `wss://${t.proxy}/v1/webapi/ssh/connect?${new URLSearchParams({
    node,
    login,
    cols: String(size.cols),
    rows: String(size.rows),
  })}`;
  const ws = new WebSocket(url, {
    headers: { authorization: `Bearer ${p.session_id}` },
    ...(t.insecure ? { rejectUnauthorized: false } : { ca: t.caPem ?? "" }),
    handshakeTimeout: 30_000,
  });
  return new Promise<number>((resolve, reject) => {
    let restore = (): void => {};
    let settled = false;
    let exitCode: number | undefined;
    const finish = (err: unknown, code?: number): void => {
      if (settled) return;
      settled = true;
      restore();
      process.stdin.pause();
      process.stdout.off("resize", onResize);
      if (err) reject(err);
      else resolve(code ?? EXIT.ok);
    };
    const onResize = (): void => {
      const s = terminalSize();
      if (ws.readyState === WebSocket.OPEN)
        ws.send(JSON.stringify({ type: "resize", cols: s.cols, rows: s.rows }));
    };
    ws.on("unexpected-response", (_req, res) => {
      const status = res.statusCode ?? 0;
      const code: ErrorCode =
        status === 401 ? "not_authenticated" : status === 403 ? "access_denied" : "unavailable";
      finish(new SvcError(code, `the proxy refused the terminal (HTTP ${status})`));
    });
    ws.on("open", () => {
      // Input is forwarded at once: the proxy keeps what arrives before the shell is ready.
      restore = rawStdin();
      process.stdin.on("data", (d: Buffer) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(d, { binary: true });
      });
      process.stdin.on("end", () => {
        // Without a TTY, the end of input is a Ctrl-D on the remote PTY (EOF for the shell), so
        // output still on its way is not cut off as a "close" control would.
        if (!process.stdin.isTTY && ws.readyState === WebSocket.OPEN)
          ws.send(Buffer.from([4]), { binary: true });
      });
      process.stdin.resume();
      process.stdout.on("resize", onResize);
    });
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        process.stdout.write(data);
        return;
      }
      let m: { type?: string; code?: unknown; message?: unknown };
      try {
        m = JSON.parse(data.toString("utf8")) as typeof m;
      } catch {
        return;
      }
      if (m.type === "error") {
        const code = typeof m.code === "string" ? (m.code as ErrorCode) : "internal";
        finish(new SvcError(code, typeof m.message === "string" ? m.message : "terminal error"));
        ws.close();
      } else if (m.type === "exit") {
        exitCode = typeof m.code === "number" ? m.code : EXIT.error;
      }
    });
    ws.on("close", () => finish(undefined, exitCode ?? EXIT.ok));
    ws.on("error", (err: Error) =>
      finish(new UnavailableError(`terminal connection to ${t.proxy} failed: ${err.message}`)),
    );
  });
}
