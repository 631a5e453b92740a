// The node agent's SSH server (ssh2, patched to present a host certificate). It accepts only user
// certificates from the user CA (see cert-login.ts) whose carried identity auth allows on this
// node for that login (authorizeLogin: role node_labels, allow and deny), runs sessions as the login
// (as root: any login through setpriv; otherwise only the agent's own user) and reports every
// refusal and every session to the audit sink. Nothing else is served: no password, no plain
// keys, no port forwarding, no agent or X11 forwarding, no subsystems.

import type { KeyObject } from "node:crypto";
import { randomUUID } from "node:crypto";
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import ssh2, { type AuthContext, type Connection, type ServerChannel, type Session } from "ssh2";
import type { ParsedSshCertificate } from "../../core/certs/ssh-cert.ts";
import type { Clock } from "../../core/clock.ts";
import { BadParameterError } from "../../core/errors.ts";
import { ssh2PrivateKey } from "../../core/sshclient/ssh2-key.ts";
import "../../core/sshclient/ssh2-patch-types.ts";
import { type QueriedCert, verifyCertLogin } from "./cert-login.ts";
import { cachedPasswd, getentPasswd, type PasswdEntry, type PasswdLookup } from "./passwd.ts";
import { type ExitInfo, type PtyRequest, startSessionProcess } from "./session-process.ts";

export type AgentSshAuditEvent =
  | {
      type: "ssh.auth.refused";
      login: string;
      remoteAddress: string;
      method: string;
      reason: string;
      /** the certificate's key id, when a certificate was presented */
      keyId?: string;
    }
  | { type: "ssh.auth"; login: string; remoteAddress: string; keyId: string; serial: string }
  | {
      type: "session.start";
      sessionId: string;
      login: string;
      keyId: string;
      remoteAddress: string;
      /** the command run; undefined for an interactive shell */
      command?: string;
      tty: boolean;
    }
  | { type: "session.end"; sessionId: string; login: string; keyId: string; exit: ExitInfo };

/** What a session recorder sees; returned by SessionObserver.start. */
export interface SessionSink {
  output(data: Buffer): void;
  resize(cols: number, rows: number): void;
  end(exit: ExitInfo): void;
}

export interface SessionInfo {
  sessionId: string;
  login: string;
  keyId: string;
  remoteAddress: string;
  command?: string;
  pty?: PtyRequest;
}

export interface SessionObserver {
  start(info: SessionInfo): SessionSink | undefined;
}

/**
 * Where the agent's time went opening one session, ms between stages (performance.now()):
 * connection accepted -> signed login request (key exchange and the client's auth round trips)
 * -> auth said yes (AuthorizeSshLogin) -> login user looked up -> shell or exec requested (the
 * client's channel and PTY requests) -> process spawned -> its first output.
 */
export interface SessionOpenTimings {
  handshakeMs: number;
  authorizeMs: number;
  userMs: number;
  channelMs: number;
  spawnMs: number;
  firstOutputMs: number;
  totalMs: number;
}

export interface AgentSshServerOptions {
  /** the node's host private key (KeyObject or PEM) */
  hostKey: KeyObject | string;
  /** the OpenSSH host certificate for hostKey, issued by the host CA */
  hostCertificate: string;
  /** current user CA public keys (called per login, so a CA rotation needs no restart) */
  trustedUserCaKeys: () => readonly (KeyObject | Uint8Array | string)[];
  /**
   * The node-side role decision, asked after the certificate and its signature check out and
   * before anything runs: resolves when the identity the certificate carries may use this login
   * on this node, rejects (with the reason) otherwise. The agent asks auth (AuthorizeSshLogin);
   * there is deliberately no default, so a server cannot be built that skips it.
   */
  authorizeLogin: (req: LoginQuestion) => Promise<void>;
  /**
   * A local check before authorizeLogin (locks this node holds, server/agent/locks.ts): throws
   * with the reason to refuse at once, without asking auth.
   */
  refuseLocally?: (req: LoginQuestion) => void;
  clock: Clock;
  logger: Logger;
  audit: (event: AgentSshAuditEvent) => void;
  observer?: SessionObserver;
  /** passwd lookup; default `getent passwd`, found users remembered for 10 s (cachedPasswd) */
  lookupUser?: PasswdLookup;
  /** the agent's own uid; default process.getuid() */
  processUid?: number;
  /** failed authentication attempts before the connection is dropped; default 6 */
  maxAuthTries?: number;
  /** PATH given to sessions */
  sessionPath?: string;
  /** a connection that has not authenticated by then is dropped; default 60 s */
  loginGraceMs?: number;
  /** sees each session's open timings once its process first prints (benchmarks, metrics) */
  onSessionOpened?: (timings: SessionOpenTimings) => void;
}

export interface LoginQuestion {
  /** the certificate line as presented ("<type> <base64>") */
  certificateLine: string;
  certificate: ParsedSshCertificate;
  login: string;
  remoteAddress: string;
}

/** How long a lock's message to a session may take to go out before the connection is cut anyway. */
const CLOSE_MESSAGE_GRACE_MS = 1_000;

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

interface LoggedIn {
  cert: ParsedSshCertificate;
  user: PasswdEntry;
  dropPrivileges: boolean;
  /** performance.now() at accept, signed request, auth's answer, user looked up */
  at: { accepted: number; signed: number; authorized: number; user: number };
}

/** An authenticated connection as enforcement sees it (closeWhere). */
export interface LiveLogin {
  login: string;
  keyId: string;
  certificate: ParsedSshCertificate;
  remoteAddress: string;
}

interface Live {
  login: LiveLogin;
  channels: Set<ServerChannel>;
}

/**
 * Which OS user a login may run as. Root may become anyone in passwd; any other agent only
 * serves its own user, since it cannot switch.
 */
export async function resolveLoginUser(
  login: string,
  processUid: number,
  lookup: PasswdLookup,
): Promise<{ user: PasswdEntry; dropPrivileges: boolean }> {
  const user = await lookup(login);
  if (!user) throw new BadParameterError(`login ${JSON.stringify(login)} does not exist on this node`);
  if (processUid === 0) return { user, dropPrivileges: user.uid !== 0 };
  if (user.uid !== processUid) {
    throw new BadParameterError(`this agent is not root and can only serve its own user`);
  }
  return { user, dropPrivileges: false };
}

export class AgentSshServer {
  readonly #opts: AgentSshServerOptions;
  readonly #lookupUser: PasswdLookup;
  /**
   * Runs the SSH handshake of new connections with the host key and certificate in force. A
   * renewal (setHostIdentity) replaces it; connections already open keep the one they started
   * with (an OpenSSH client refuses a host key change on re-key), so nothing live is cut.
   */
  #handshake: InstanceType<typeof ssh2.Server>;
  /** the TCP listener (absent for a tunnel-only agent): hands each socket to #handshake */
  #listener: NetServer | undefined;
  readonly #connections = new Set<Connection>();
  /** authenticated connections with their open session channels */
  readonly #live = new Map<Connection, Live>();
  #local = { host: "0.0.0.0", port: 0 };

  constructor(opts: AgentSshServerOptions) {
    this.#opts = opts;
    this.#lookupUser = opts.lookupUser ?? cachedPasswd(getentPasswd);
    this.#handshake = this.#handshaker(opts.hostKey, opts.hostCertificate);
  }

  #handshaker(hostKey: KeyObject | string, hostCertificate: string): InstanceType<typeof ssh2.Server> {
    const server = new ssh2.Server(
      { hostKeys: [{ key: ssh2PrivateKey(hostKey), certificate: hostCertificate }] },
      (conn, info) => this.#onConnection(conn, info.ip, info.port),
    );
    server.on("error", (err: Error) => this.#opts.logger.warn({ err: err.message }, "ssh server error"));
    return server;
  }

  /** New connections present this host key and certificate from now on (a renewal). */
  setHostIdentity(hostKey: KeyObject | string, hostCertificate: string): void {
    this.#handshake = this.#handshaker(hostKey, hostCertificate);
  }

  /** Listens (port 0: a free port); resolves with the bound address. */
  async listen(port = 0, host = "127.0.0.1"): Promise<{ host: string; port: number }> {
    const listener = createNetServer((socket) => this.#serve(socket));
    listener.on("error", (err: Error) => this.#opts.logger.warn({ err: err.message }, "ssh listener error"));
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(port, host, () => {
        listener.off("error", reject);
        resolve();
      });
    });
    this.#listener = listener;
    const addr = listener.address();
    if (!addr || typeof addr === "string") throw new Error("ssh server has no TCP address");
    this.#local = { host: addr.address, port: addr.port };
    return { ...this.#local };
  }

  /**
   * Serves one SSH connection arriving on a stream that is not a TCP socket (a reverse-tunnel
   * stream), so a tunnel agent needs no listening port. `remote` stands in for the peer address
   * in audit events and SSH_CONNECTION.
   */
  accept(stream: Duplex, remote: { address: string; port: number }): void {
    // ssh2 reads the peer from socket-like fields; a tunnel stream has none of its own.
    Object.assign(stream, { remoteAddress: remote.address, remotePort: remote.port, remoteFamily: "tunnel" });
    this.#serve(stream as Socket);
  }

  #serve(socket: Socket): void {
    // Without TCP_NODELAY the handshake stalls on Nagle + the peer's delayed ACK (~40 ms per
    // login on Linux: the server writes two small packets in a row and the second waits for the
    // ACK of the first). ssh2 does not set it; a tunnel stream has no such call (its connection does).
    if (typeof socket.setNoDelay === "function") socket.setNoDelay(true);
    this.#handshake.injectSocket(socket);
  }

  /** Stops listening and ends every open connection (their sessions' processes get SIGHUP). */
  async close(): Promise<void> {
    for (const c of this.#connections) c.end();
    // A tunnel-only server never listened: close() would wait for a listener that never was.
    const listener = this.#listener;
    if (!listener?.address()) return;
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  }

  /** The authenticated connections now. */
  liveLogins(): LiveLogin[] {
    return [...this.#live.values()].map((l) => l.login);
  }

  /**
   * Ends every authenticated connection `pick` returns a message for. The message is written to
   * each of its open sessions (stderr, so a terminal shows it) before the connection ends; the
   * sessions' processes get SIGHUP as on any disconnect. Returns how many were ended.
   */
  closeWhere(pick: (login: LiveLogin) => string | undefined): number {
    let n = 0;
    for (const [conn, live] of this.#live) {
      const message = pick(live.login);
      if (message === undefined) continue;
      n++;
      this.#live.delete(conn);
      const line = Buffer.from(`\r\n${message.replace(/[\r\n]+/g, " ")}\r\n`);
      // Each session channel gets the message, then EOF and close: a client prints what a channel
      // carried when the channel closes, but drops it when the connection is cut first (OpenSSH
      // exits on DISCONNECT without flushing). The connection ends once the client has closed its
      // channels, or after a grace: a client that does not answer keeps nothing open.
      const closed = [...live.channels].map(
        (ch) =>
          new Promise<void>((resolve) => {
            ch.once("close", () => resolve());
            try {
              ch.stderr.write(line);
              ch.end();
            } catch {
              resolve(); // the channel was closing anyway
            }
          }),
      );
      let timer: NodeJS.Timeout | undefined;
      void Promise.race([
        Promise.all(closed),
        new Promise((resolve) => {
          timer = setTimeout(resolve, CLOSE_MESSAGE_GRACE_MS);
        }),
      ]).then(() => {
        clearTimeout(timer);
        conn.end();
      });
    }
    return n;
  }

  #onConnection(conn: Connection, remoteAddress: string, remotePort: number): void {
    const o = this.#opts;
    this.#connections.add(conn);
    let failures = 0;
    let loggedIn: LoggedIn | undefined;
    /** what this connection's last "would you accept?" query verified (OpenSSH clients ask first) */
    let queried: QueriedCert | undefined;
    const maxTries = o.maxAuthTries ?? 6;
    const grace = setTimeout(() => conn.end(), o.loginGraceMs ?? 60_000);
    const accepted = performance.now();

    const refuse = (ctx: AuthContext, reason: string, keyId?: string): void => {
      o.logger.info({ login: ctx.username, remoteAddress, keyId, reason }, "login refused");
      o.audit({
        type: "ssh.auth.refused",
        login: ctx.username,
        remoteAddress,
        method: ctx.method,
        reason,
        ...(keyId !== undefined ? { keyId } : {}),
      });
      failures++;
      ctx.reject(["publickey"]);
      if (failures >= maxTries) conn.end();
    };

    conn.on("authentication", (ctx) => {
      if (ctx.method === "none") {
        ctx.reject(["publickey"]); // every client probes with "none" first: not an attempt
        return;
      }
      if (ctx.method !== "publickey") {
        refuse(ctx, `method ${ctx.method} is not accepted`);
        return;
      }
      let cert: ParsedSshCertificate;
      const prior = queried;
      queried = undefined;
      try {
        cert = verifyCertLogin(
          {
            login: ctx.username,
            keyAlgo: ctx.key.algo,
            keyData: ctx.key.data,
            ...(ctx.signature ? { signature: ctx.signature } : {}),
            ...(ctx.blob ? { signedData: ctx.blob } : {}),
            remoteAddress,
          },
          { trustedUserCaKeys: o.trustedUserCaKeys(), clock: o.clock },
          ctx.signature ? prior : undefined,
        );
      } catch (err) {
        refuse(ctx, err instanceof Error ? err.message : "certificate refused");
        return;
      }
      if (!ctx.signature) {
        o.logger.debug({ login: ctx.username, remoteAddress, keyId: cert.keyId }, "publickey query accepted");
        queried = { cert, login: ctx.username, keyAlgo: ctx.key.algo, remoteAddress };
        ctx.accept(); // "would you accept this key?": yes, now prove it
        return;
      }
      o.logger.debug(
        { login: ctx.username, remoteAddress, keyId: cert.keyId, queried: prior !== undefined },
        "publickey signed request",
      );
      const question: LoginQuestion = {
        certificateLine: `${cert.certType} ${cert.blob.toString("base64")}`,
        certificate: cert,
        login: ctx.username,
        remoteAddress,
      };
      try {
        o.refuseLocally?.(question);
      } catch (err) {
        refuse(ctx, err instanceof Error ? err.message : "login refused", cert.keyId);
        return;
      }
      const signed = performance.now();
      let authorized = signed;
      // Asked at once: the user lookup needs nothing from auth, so a login waits for the slower of
      // the two, not both. Auth's refusal still wins: the lookup is read only after auth said yes.
      const user = resolveLoginUser(ctx.username, o.processUid ?? process.getuid?.() ?? -1, this.#lookupUser);
      user.catch(() => undefined); // read below, or dropped with auth's refusal
      o.authorizeLogin(question)
        .then(() => {
          authorized = performance.now();
          return user;
        })
        .then(
          ({ user, dropPrivileges }) => {
            loggedIn = {
              cert,
              user,
              dropPrivileges,
              at: { accepted, signed, authorized, user: performance.now() },
            };
            o.audit({
              type: "ssh.auth",
              login: ctx.username,
              remoteAddress,
              keyId: cert.keyId,
              serial: cert.serial.toString(),
            });
            ctx.accept();
          },
          (err: unknown) => refuse(ctx, err instanceof Error ? err.message : "login refused", cert.keyId),
        );
    });

    conn.on("ready", () => {
      clearTimeout(grace);
      const who = loggedIn;
      if (!who) {
        conn.end();
        return;
      }
      const live: Live = {
        login: { login: who.user.name, keyId: who.cert.keyId, certificate: who.cert, remoteAddress },
        channels: new Set(),
      };
      this.#live.set(conn, live);
      // A lock that arrived while auth was being asked: closed right away, not at the next snapshot.
      try {
        o.refuseLocally?.({
          certificateLine: `${who.cert.certType} ${who.cert.blob.toString("base64")}`,
          certificate: who.cert,
          login: who.user.name,
          remoteAddress,
        });
      } catch {
        this.#live.delete(conn);
        conn.end();
        return;
      }
      conn.on("session", (accept) => this.#onSession(accept(), who, remoteAddress, remotePort, live));
      conn.on("tcpip", (_accept, reject) => reject());
      conn.on("openssh.streamlocal", (_accept, reject) => reject());
      conn.on("request", (_accept, reject) => reject?.());
    });
    conn.on("error", (err: Error) =>
      o.logger.debug({ err: err.message, remoteAddress }, "ssh connection error"),
    );
    conn.on("close", () => {
      clearTimeout(grace);
      this.#connections.delete(conn);
      this.#live.delete(conn);
    });
  }

  #onSession(session: Session, who: LoggedIn, remoteAddress: string, remotePort: number, live: Live): void {
    const o = this.#opts;
    const { cert, user } = who;
    let ptyReq: PtyRequest | undefined;
    let started = false;
    let resizeTo: ((cols: number, rows: number) => void) | undefined;

    session.on("pty", (accept, reject, info) => {
      if (!cert.extensions.includes("permit-pty") || started) return reject?.();
      ptyReq = { term: info.term, cols: info.cols, rows: info.rows };
      accept?.();
    });
    session.on("window-change", (accept, reject, info) => {
      if (ptyReq === undefined) return reject?.();
      ptyReq = { ...ptyReq, cols: info.cols, rows: info.rows };
      resizeTo?.(info.cols, info.rows);
      accept?.();
    });
    session.on("env", (_accept, reject) => reject?.());
    session.on("subsystem", (_accept, reject) => reject());
    session.on("x11", (_accept, reject) => reject?.());
    session.on("auth-agent", (_accept, reject) => reject?.());
    session.on("sftp", (_accept, reject) => reject());

    const run = (channel: ServerChannel, requested: string | undefined): void => {
      started = true;
      const requestedAt = performance.now();
      live.channels.add(channel);
      channel.once("close", () => live.channels.delete(channel));
      const forced = cert.criticalOptions["force-command"];
      const command = forced ?? requested;
      const sessionId = randomUUID();
      const env: Record<string, string> = {
        HOME: user.home,
        USER: user.name,
        LOGNAME: user.name,
        SHELL: user.shell,
        PATH: o.sessionPath ?? DEFAULT_PATH,
        SSH_CONNECTION: `${remoteAddress} ${remotePort} ${this.#local.host} ${this.#local.port}`,
        ...(ptyReq ? { TERM: ptyReq.term || "xterm" } : {}),
        ...(forced !== undefined && requested !== undefined ? { SSH_ORIGINAL_COMMAND: requested } : {}),
      };
      o.audit({
        type: "session.start",
        sessionId,
        login: user.name,
        keyId: cert.keyId,
        remoteAddress,
        ...(command !== undefined ? { command } : {}),
        tty: ptyReq !== undefined,
      });
      const sink = o.observer?.start({
        sessionId,
        login: user.name,
        keyId: cert.keyId,
        remoteAddress,
        ...(command !== undefined ? { command } : {}),
        ...(ptyReq ? { pty: ptyReq } : {}),
      });
      const proc = startSessionProcess({
        user,
        dropPrivileges: who.dropPrivileges,
        ...(command !== undefined ? { command } : {}),
        ...(ptyReq ? { pty: ptyReq } : {}),
        env,
      });
      const spawnedAt = performance.now();
      let firstOutput = o.onSessionOpened !== undefined;
      const opened = (): void => {
        firstOutput = false;
        const now = performance.now();
        const at = who.at;
        o.onSessionOpened?.({
          handshakeMs: at.signed - at.accepted,
          authorizeMs: at.authorized - at.signed,
          userMs: at.user - at.authorized,
          channelMs: requestedAt - at.user,
          spawnMs: spawnedAt - requestedAt,
          firstOutputMs: now - spawnedAt,
          totalMs: now - at.accepted,
        });
      };
      resizeTo = (cols, rows) => {
        proc.resize(cols, rows);
        sink?.resize(cols, rows);
      };
      // Back-pressure: stop reading the process while the SSH window is full.
      const forward = (write: (d: Buffer) => boolean) => (data: Buffer) => {
        if (firstOutput) opened();
        sink?.output(data);
        // Ended by closeWhere (a lock): what the process still prints goes nowhere.
        if (channel.writableEnded) return;
        if (!write(data)) proc.pauseOutput();
      };
      channel.on("error", (err: Error) => o.logger.debug({ err: err.message }, "ssh channel error"));
      channel.on("drain", () => proc.resumeOutput());
      proc.onData(forward((d) => channel.write(d)));
      proc.onStderr(forward((d) => channel.stderr.write(d)));
      channel.on("data", (d: Buffer) => proc.write(d));
      channel.on("end", () => proc.endInput());
      channel.on("close", () => proc.kill("SIGHUP"));
      session.on("signal", (_accept, _reject, info) => {
        const name = `SIG${info.name}`;
        if (/^SIG(HUP|INT|KILL|QUIT|TERM|USR1|USR2|ALRM|PIPE)$/.test(name)) proc.kill(name as NodeJS.Signals);
      });
      proc.onExit((exit) => {
        sink?.end(exit);
        o.audit({ type: "session.end", sessionId, login: user.name, keyId: cert.keyId, exit });
        if (exit.signal !== undefined) channel.exit(exit.signal, false, "");
        else channel.exit(exit.code ?? 0);
        channel.end();
      });
    };

    // One program per session channel, as in OpenSSH.
    session.on("shell", (accept, reject) => (started ? reject?.() : run(accept(), undefined)));
    session.on("exec", (accept, reject, info) => (started ? reject?.() : run(accept(), info.command)));
  }
}
