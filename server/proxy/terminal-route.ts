// WebSocket /v1/webapi/ssh/connect (spec 4.3, docs/terminal.md). The upgrade needs a session
// (Bearer header or svc_session cookie); a cookie upgrade must come from our own Origin, so another
// site cannot ride a user's cookie into a shell. Everything that can be refused (unknown node,
// login not granted, node offline) is refused with an error frame before any SSH starts; then the
// proxy dials the node with an ephemeral key and a short-lived certificate from auth, trusting the
// node only through its host certificate, and bridges.
import websocket, { type WebsocketPluginOptions } from "@fastify/websocket";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import WebSocket from "ws";
import { generateSshKeyPair } from "../../core/certs/ssh-keys.ts";
import type { Clock } from "../../core/clock.ts";
import {
  AccessDeniedError,
  BadParameterError,
  LimitExceededError,
  NotAuthenticatedError,
  UnavailableError,
} from "../../core/errors.ts";
import { connectWithCertificate, type SshClient, shell } from "../../core/sshclient/index.ts";
import type { NodeInfo } from "./auth-client.ts";
import { readCredential } from "./credentials.ts";
import { registerDialRoute } from "./dial-route.ts";
import type { ProxyLocks } from "./locks.ts";
import { sessionOf } from "./plugins/session.ts";
import type { SessionCache } from "./session-cache.ts";
import type { TerminalAuthApi } from "./terminal-auth.ts";
import {
  type BridgeLimits,
  type BridgeStats,
  bridge,
  defaultBridgeLimits,
  type EarlyMessage,
  refuse,
} from "./terminal-bridge.ts";
import { TerminalCerts, type TerminalCredential } from "./terminal-certs.ts";
import { VerifiedHostCerts } from "./terminal-host-certs.ts";
import { encodeControl, MAX_COLS, MAX_ROWS, parseClientControl } from "./terminal-protocol.ts";
import { NodeDialer } from "./tunnel/dialer.ts";

export interface TerminalRouteOptions {
  terminalAuth: TerminalAuthApi;
  clock: Clock;
  /** lifetime of the ephemeral certificate; it only has to outlive the SSH handshake */
  certTtlSeconds?: number;
  /** SSH handshake budget per node dial */
  connectTimeoutMs?: number;
  limits?: BridgeLimits;
  /** largest WebSocket message accepted from a browser (default: proxy.limits.ws_message_bytes) */
  maxMessageBytes?: number;
  /** open terminals per user and per proxy (default: from proxy.limits) */
  slots?: TerminalSlots;
  /** bytes of input kept while the SSH connection is being set up */
  maxEarlyBytes?: number;
  /** sees every bridged session's live counters (metrics, tests) */
  onBridge?: (stats: BridgeStats) => void;
  /** sees where each opened terminal's time went (benchmarks, metrics) */
  onOpened?: (timings: TerminalOpenTimings, opened: TerminalOpened) => void;
  /** how nodes are reached (tunnels, peers, addresses); default: their addresses over TCP */
  dialer?: NodeDialer;
  /** closes a locked user's terminals and node streams (server/proxy/locks.ts) */
  locks?: Pick<ProxyLocks, "track">;
  /**
   * The proxy's session cache: with it, a web session reuses its key and certificate for the same
   * node while enough of the certificate is left, dropped on its revocation and user/role events
   * (server/proxy/terminal-certs.ts). Without it every open asks auth for a new certificate.
   */
  sessions?: Pick<SessionCache, "onChange" | "live">;
}

export const TERMINAL_PATH = "/v1/webapi/ssh/connect";

/**
 * Where the proxy's time went opening one terminal, ms between stages (performance.now()):
 * request received -> session checked and upgraded -> auth's per-node decision
 * (AuthorizeNodeLogin) -> ephemeral key -> certificate (IssueUserCerts) -> node dialed -> SSH
 * handshake and login (the node's own decision included) -> shell channel with its PTY.
 */
export interface TerminalOpenTimings {
  sessionMs: number;
  authorizeMs: number;
  keyMs: number;
  certMs: number;
  dialMs: number;
  handshakeMs: number;
  shellMs: number;
  totalMs: number;
}

/** How a terminal was opened, beside its timings. */
export interface TerminalOpened {
  /** the session's held key and certificate for this node were used (keyMs, certMs ~0) */
  certReused: boolean;
}

/** performance.now() when each terminal upgrade request arrived. */
const receivedAt = new WeakMap<FastifyRequest, number>();

const Login = Type.String({ minLength: 1, maxLength: 32, pattern: "^[A-Za-z0-9_][A-Za-z0-9._-]*$" });
const ConnectQuery = Type.Object(
  {
    node: Type.String({ minLength: 1, maxLength: 253, description: "target node hostname" }),
    login: Type.Optional(Login),
    cols: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_COLS })),
    rows: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ROWS })),
  },
  { additionalProperties: false },
);
type ConnectQuery = Static<typeof ConnectQuery>;

/** "host:port" or "[v6]:port" -> parts. */
export function splitAddress(address: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(address) ?? /^([^:]+):(\d{1,5})$/.exec(address);
  const port = Number(m?.[2]);
  if (!m?.[1] || !(port >= 1 && port <= 65535)) throw new UnavailableError("the node has no usable address");
  return { host: m[1], port };
}

/**
 * A node auth let us log in to must also be online (heartbeating). Whether it can be reached
 * (tunnel, peer proxy, an address) is the NodeDialer's answer.
 */
export function requireReachable(node: NodeInfo): NodeInfo {
  if (node.status !== "online")
    throw new UnavailableError(`node ${JSON.stringify(node.hostname)} is offline`);
  return node;
}

/**
 * Open terminals per user and in all (`proxy.limits.terminals_per_user` / `terminals_per_proxy`).
 * A slot is taken before the upgrade and freed when the connection's socket closes, however the
 * terminal ended (exit, browser gone, refusal, failed upgrade).
 */
export class TerminalSlots {
  #total = 0;
  readonly #perUser = new Map<string, number>();
  readonly perUser: number;
  readonly perProxy: number;

  constructor(limits: { perUser: number; perProxy: number }) {
    this.perUser = limits.perUser;
    this.perProxy = limits.perProxy;
  }

  /** Takes a slot for `user` or throws 429; the answer frees it (only the first call counts). */
  take(user: string): () => void {
    const mine = this.#perUser.get(user) ?? 0;
    if (mine >= this.perUser) {
      throw new LimitExceededError(
        `too many terminals open: ${mine} of ${this.perUser} allowed per user; close one and try again`,
      );
    }
    if (this.#total >= this.perProxy) {
      throw new LimitExceededError(
        `too many terminals open on this proxy (${this.perProxy}); try again later`,
      );
    }
    this.#total++;
    this.#perUser.set(user, mine + 1);
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.#total--;
      const left = (this.#perUser.get(user) ?? 1) - 1;
      if (left > 0) this.#perUser.set(user, left);
      else this.#perUser.delete(user);
    };
  }

  get open(): number {
    return this.#total;
  }

  openFor(user: string): number {
    return this.#perUser.get(user) ?? 0;
  }
}

/** ws closes an over-size message with 1009 but no reason; this one says what happened. */
class TerminalSocket extends WebSocket {
  override close(code?: number, reason?: string | Buffer): void {
    super.close(code, reason ?? (code === 1009 ? "message too big" : undefined));
  }
}

/**
 * The credential check of a WebSocket upgrade (terminal, node dial): a session from the Bearer
 * header or the svc_session cookie, and a cookie only from our own Origin, so another site cannot
 * ride a user's cookie into a shell.
 */
export function upgradeAuthenticator(
  app: FastifyInstance,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const publicOrigin = new URL(app.proxyConfig.publicUrl).origin;
  return async (request, reply) => {
    const auth = request.headers.authorization;
    const credential = readCredential(Array.isArray(auth) ? auth[0] : auth, request.cookies);
    if (credential === undefined) throw new NotAuthenticatedError();
    // Browsers always send Origin on a WebSocket upgrade; a cookie without our Origin is a
    // cross-site page (or a client that should be using the Bearer header).
    if (credential.via === "cookie" && request.headers.origin !== publicOrigin) {
      throw new AccessDeniedError("cross-origin WebSocket refused");
    }
    await app.requireSession(request, reply);
  };
}

/** The node runs our agent (it reports its version), not a plain sshd registered agentless. */
function auditsSessions(node: NodeInfo): boolean {
  return node.version !== "" && node.version !== "agentless";
}

/** The stage durations from the timestamps pushed while opening (see TerminalOpenTimings). */
function openTimings(at: readonly number[]): TerminalOpenTimings {
  const d = (i: number): number => (at[i + 1] ?? 0) - (at[i] ?? 0);
  return {
    sessionMs: d(0),
    authorizeMs: d(1),
    keyMs: d(2),
    certMs: d(3),
    dialMs: d(4),
    handshakeMs: d(5),
    shellMs: d(6),
    totalMs: (at[at.length - 1] ?? 0) - (at[0] ?? 0),
  };
}

export function terminalRoutes(opts: TerminalRouteOptions): FastifyPluginAsync {
  const limits = opts.limits ?? defaultBridgeLimits;
  const maxEarly = opts.maxEarlyBytes ?? 64 * 1024;
  const dialer = opts.dialer ?? new NodeDialer();
  return async (app: FastifyInstance) => {
    const certs = opts.sessions
      ? new TerminalCerts({ clock: opts.clock, sessions: opts.sessions })
      : undefined;
    if (certs) app.addHook("onClose", async () => certs.close());
    const hostCerts = new VerifiedHostCerts({ clock: opts.clock });
    const configured = app.proxyConfig.limits;
    const slots =
      opts.slots ??
      new TerminalSlots({ perUser: configured.terminalsPerUser, perProxy: configured.terminalsPerProxy });
    await app.register(websocket, {
      // @types/ws types this option as the module itself (statics included); a subclass is what
      // ws takes at run time.
      options: {
        maxPayload: opts.maxMessageBytes ?? configured.wsMessageBytes,
        WebSocket: TerminalSocket,
      } as unknown as WebsocketPluginOptions["options"],
      // ws has already started the close handshake with the right code (1009 for an over-size
      // message) when it reports a protocol error: let the handshake finish instead of cutting
      // the connection, so the browser learns why.
      errorHandler: (error, socket, request) => {
        if ((error as { code?: unknown }).code?.toString().startsWith("WS_ERR_")) {
          request.log.info({ err: error.message }, "terminal closed: WebSocket protocol error");
          return;
        }
        request.log.warn({ err: error.message }, "terminal socket error");
        socket.terminate();
      },
    });
    const authenticate = upgradeAuthenticator(app);
    const takeSlot = (request: FastifyRequest): void => {
      const socket = request.raw.socket;
      const release = slots.take(sessionOf(request).info.username);
      if (socket.destroyed) release();
      else socket.once("close", release);
    };
    // `svc ssh`'s raw stream to a node shares the terminal's plugin (one WebSocket server) and slots.
    registerDialRoute(app, {
      terminalAuth: opts.terminalAuth,
      dialer,
      authenticate,
      requireOnline: requireReachable,
      takeSlot,
      ...(opts.locks ? { locks: opts.locks } : {}),
    });

    async function open(
      request: FastifyRequest,
      q: ConnectQuery,
      at: number[],
    ): Promise<{ client: SshClient; node: NodeInfo; login: string; certReused: boolean }> {
      const session = sessionOf(request);
      const sessionId = session.sessionId;
      const login = q.login ?? "root";
      // Auth decides per node (roles' logins for its labels); hidden nodes are "unknown" too.
      const node = requireReachable(await opts.terminalAuth.authorizeNodeLogin(sessionId, q.node, login));
      at.push(performance.now());
      let keyAt: number | undefined;
      const issue = async (): Promise<TerminalCredential> => {
        const key = generateSshKeyPair("ed25519", { comment: "svc-proxy-terminal" });
        keyAt = performance.now();
        const cert = await opts.terminalAuth.issueUserCertificate(
          sessionId,
          key.publicLine,
          opts.certTtlSeconds ?? 120,
          node.id,
        );
        // The OpenSSH form made with the key: what ssh2 reads, so no export per open.
        return { privateKey: key.privateOpenSsh, cert };
      };
      // Only after the session check passed (preValidation): a held certificate never stands in
      // for it. Only towards our agent, which audits every session it starts (session.start); an
      // agentless sshd audits nothing, so there auth's cert.create per open is the audit trail.
      const { credential, reused } =
        certs && auditsSessions(node)
          ? await certs.obtain(session, node.id, issue)
          : { credential: await issue(), reused: false };
      const cert = credential.cert;
      const certAt = performance.now();
      // A held certificate: no key made, no call to auth (both stages ~0 ms).
      at.push(keyAt ?? certAt);
      // Second guard: the certificate is scoped to this node, so it must carry the login; the node
      // itself decides a third time (AuthorizeSshLogin, or the agentless principals rule).
      if (!cert.principals.includes(login)) {
        throw new AccessDeniedError(`login ${JSON.stringify(login)} is not allowed by your roles`);
      }
      if (cert.hostCaKeys.length === 0) throw new UnavailableError("auth published no host CA key");
      at.push(performance.now());
      // Tunnel, peer proxy or TCP: the dialer decides; the SSH handshake is the same over each.
      const sock = await dialer.dial(node);
      at.push(performance.now());
      const client = await connectWithCertificate({
        host: node.hostname,
        port: 0,
        sock,
        username: login,
        privateKey: credential.privateKey,
        certificate: cert.certificate,
        requireHostCertificate: true,
        // Principal: the node ID auth resolved, not the name asked for: names are unique, but an
        // ID is what a removed node's old certificate can never carry for a newer node. A
        // certificate already verified for this node under these CA keys is not verified again.
        hostVerifier: hostCerts.verifier(node.id, cert.hostCaKeys, (reason) =>
          request.log.warn({ node: node.hostname, reason }, "node host certificate refused"),
        ),
        timeoutMs: opts.connectTimeoutMs ?? 20_000,
      }).catch((err: unknown) => {
        sock.destroy();
        // The node refused it or its host certificate did not verify with the held CA keys (a
        // rotation): the next open asks auth again.
        certs?.drop(sessionId, node.id);
        throw err;
      });
      return { client, node, login, certReused: reused };
    }

    app.get<{ Querystring: ConnectQuery }>(
      TERMINAL_PATH,
      {
        websocket: true,
        schema: { hide: true, querystring: ConnectQuery },
        preValidation: async (request, reply) => {
          receivedAt.set(request, performance.now());
          await app.limitSessionRequests(request, reply);
          await authenticate(request, reply);
        },
        // Last step before the upgrade (the query is valid by now): a plain GET gets its 404
        // without holding a slot.
        preHandler: async (request) => {
          if (request.ws) takeSlot(request);
        },
      },
      (socket: WebSocket, request) => {
        const q = request.query as ConnectQuery;
        // Listen at once: messages sent while we dial would otherwise be lost.
        const early: EarlyMessage[] = [];
        let earlyBytes = 0;
        let closed = false;
        const onEarly = (data: Buffer, isBinary: boolean): void => {
          earlyBytes += data.length;
          try {
            if (earlyBytes > maxEarly)
              throw new BadParameterError("too much input before the session was ready");
            early.push(
              isBinary ? { binary: true, data } : { binary: false, control: parseClientControl(data) },
            );
          } catch (err) {
            refuse(socket, err);
          }
        };
        const onEarlyClose = (): void => {
          closed = true;
        };
        socket.on("message", onEarly);
        socket.on("close", onEarlyClose);
        socket.on("error", onEarlyClose);

        void (async () => {
          let client: SshClient | undefined;
          // Stage timestamps: received, upgraded, then pushed by open() and below.
          const at = [receivedAt.get(request) ?? performance.now(), performance.now()];
          try {
            const opened = await open(request, q, at);
            at.push(performance.now());
            client = opened.client;
            if (closed) throw new UnavailableError("browser went away");
            const channel = await shell(client, {
              term: "xterm-256color",
              cols: q.cols ?? 80,
              rows: q.rows ?? 24,
            });
            socket.off("message", onEarly);
            socket.off("close", onEarlyClose);
            socket.off("error", onEarlyClose);
            const c = client;
            if (closed) {
              c.end();
              return;
            }
            socket.send(encodeControl({ type: "ready", node: opened.node.hostname, login: opened.login }));
            at.push(performance.now());
            const timings = openTimings(at);
            opts.onOpened?.(timings, { certReused: opened.certReused });
            request.log.info(
              {
                user: sessionOf(request).info.username,
                node: opened.node.hostname,
                login: opened.login,
                openMs: Math.round(timings.totalMs),
              },
              "terminal session started",
            );
            const stats = bridge(socket, channel, { limits, early, onEnd: () => c.end() });
            opts.onBridge?.(stats);
            // A lock on this user ends the terminal with its message (at once if already locked).
            const untrack = opts.locks?.track(sessionOf(request).info, (message) => {
              refuse(socket, new AccessDeniedError(message));
              c.end();
            });
            if (untrack) socket.once("close", untrack);
          } catch (err) {
            client?.end();
            request.log.info(
              { err: err instanceof Error ? err.message : String(err), node: q.node },
              "terminal refused",
            );
            refuse(socket, err);
          }
        })();
      },
    );
  };
}
