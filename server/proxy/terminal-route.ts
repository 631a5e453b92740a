// WebSocket /v1/webapi/ssh/connect (spec 4.3, docs/terminal.md). The upgrade needs a session
// (Bearer header or svc_session cookie); a cookie upgrade must come from our own Origin, so another
// site cannot ride a user's cookie into a shell. Everything that can be refused (unknown node,
// login not granted, node offline) is refused with an error frame before any SSH starts; then the
// proxy dials the node with an ephemeral key and a short-lived certificate from auth, trusting the
// node only through its host certificate, and bridges.
import websocket from "@fastify/websocket";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { generateSshKeyPair } from "../../core/certs/ssh-keys.ts";
import type { Clock } from "../../core/clock.ts";
import {
  AccessDeniedError,
  BadParameterError,
  NotAuthenticatedError,
  UnavailableError,
} from "../../core/errors.ts";
import {
  connectWithCertificate,
  hostCertificateVerifier,
  type SshClient,
  shell,
} from "../../core/sshclient/index.ts";
import type { NodeInfo } from "./auth-client.ts";
import { readCredential } from "./credentials.ts";
import { sessionOf } from "./plugins/session.ts";
import type { TerminalAuthApi } from "./terminal-auth.ts";
import {
  type BridgeLimits,
  type BridgeStats,
  bridge,
  defaultBridgeLimits,
  type EarlyMessage,
  refuse,
} from "./terminal-bridge.ts";
import { encodeControl, MAX_COLS, MAX_ROWS, parseClientControl } from "./terminal-protocol.ts";

export interface TerminalRouteOptions {
  terminalAuth: TerminalAuthApi;
  clock: Clock;
  /** lifetime of the ephemeral certificate; it only has to outlive the SSH handshake */
  certTtlSeconds?: number;
  /** SSH handshake budget per node dial */
  connectTimeoutMs?: number;
  limits?: BridgeLimits;
  /** largest WebSocket message accepted from a browser */
  maxMessageBytes?: number;
  /** bytes of input kept while the SSH connection is being set up */
  maxEarlyBytes?: number;
  /** sees every bridged session's live counters (metrics, tests) */
  onBridge?: (stats: BridgeStats) => void;
}

export const TERMINAL_PATH = "/v1/webapi/ssh/connect";

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

/** A node auth let us log in to must also be reachable: online, with an address. */
export function requireReachable(node: NodeInfo): NodeInfo {
  if (node.status !== "online")
    throw new UnavailableError(`node ${JSON.stringify(node.hostname)} is offline`);
  if (node.addresses.length === 0) {
    throw new UnavailableError(`node ${JSON.stringify(node.hostname)} has no address`);
  }
  return node;
}

export function terminalRoutes(opts: TerminalRouteOptions): FastifyPluginAsync {
  const limits = opts.limits ?? defaultBridgeLimits;
  const maxEarly = opts.maxEarlyBytes ?? 64 * 1024;
  return async (app: FastifyInstance) => {
    await app.register(websocket, { options: { maxPayload: opts.maxMessageBytes ?? 64 * 1024 } });
    const publicOrigin = new URL(app.proxyConfig.publicUrl).origin;

    async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const auth = request.headers.authorization;
      const credential = readCredential(Array.isArray(auth) ? auth[0] : auth, request.cookies);
      if (credential === undefined) throw new NotAuthenticatedError();
      // Browsers always send Origin on a WebSocket upgrade; a cookie without our Origin is a
      // cross-site page (or a client that should be using the Bearer header).
      if (credential.via === "cookie" && request.headers.origin !== publicOrigin) {
        throw new AccessDeniedError("cross-origin WebSocket refused");
      }
      await app.requireSession(request, reply);
    }

    async function open(
      request: FastifyRequest,
      q: ConnectQuery,
    ): Promise<{ client: SshClient; node: NodeInfo; login: string }> {
      const sessionId = sessionOf(request).sessionId;
      const login = q.login ?? "root";
      // Auth decides per node (roles' logins for its labels); hidden nodes are "unknown" too.
      const node = requireReachable(await opts.terminalAuth.authorizeNodeLogin(sessionId, q.node, login));
      const key = generateSshKeyPair("ed25519", { comment: "svc-proxy-terminal" });
      const cert = await opts.terminalAuth.issueUserCertificate(
        sessionId,
        key.publicLine,
        opts.certTtlSeconds ?? 120,
        node.id,
      );
      // Second guard: the certificate is scoped to this node, so it must carry the login; the node
      // itself decides a third time (AuthorizeSshLogin, or the agentless principals rule).
      if (!cert.principals.includes(login)) {
        throw new AccessDeniedError(`login ${JSON.stringify(login)} is not allowed by your roles`);
      }
      if (cert.hostCaKeys.length === 0) throw new UnavailableError("auth published no host CA key");
      let lastError: unknown;
      for (const address of node.addresses) {
        const { host, port } = splitAddress(address);
        try {
          const client = await connectWithCertificate({
            host,
            port,
            username: login,
            privateKey: key.privateKey,
            certificate: cert.certificate,
            requireHostCertificate: true,
            hostVerifier: hostCertificateVerifier({
              trustedCaKeys: cert.hostCaKeys,
              // The node ID auth resolved, not the name asked for: names are unique, but an ID is
              // what a removed node's old certificate can never carry for a newer node.
              principal: node.id,
              clock: opts.clock,
              onRefused: (reason) =>
                request.log.warn({ node: node.hostname, reason }, "node host certificate refused"),
            }),
            timeoutMs: opts.connectTimeoutMs ?? 20_000,
          });
          // Keystrokes are tiny writes: without TCP_NODELAY, Nagle holds one back until the
          // previous one is acknowledged (OpenSSH's client sets it for interactive sessions too).
          client.setNoDelay(true);
          return { client, node, login };
        } catch (err) {
          lastError = err;
        }
      }
      throw lastError ?? new UnavailableError("node unreachable");
    }

    app.get<{ Querystring: ConnectQuery }>(
      TERMINAL_PATH,
      {
        websocket: true,
        schema: { hide: true, querystring: ConnectQuery },
        preValidation: async (request, reply) => authenticate(request, reply),
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
          try {
            const opened = await open(request, q);
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
            request.log.info(
              { user: sessionOf(request).info.username, node: opened.node.hostname, login: opened.login },
              "terminal session started",
            );
            const stats = bridge(socket, channel, { limits, early, onEnd: () => c.end() });
            opts.onBridge?.(stats);
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
