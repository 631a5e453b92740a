// WebSocket /v1/webapi/ssh/dial?node=<name>&login=<login> (docs/tunnels.md): a raw byte stream to a
// node's SSH port for `svc ssh`, so a CLI reaches tunnel nodes (and any node) through the proxy
// alone. The proxy asks auth whether the caller may log in there as that login (the terminal's
// check), reaches the node through the NodeDialer, sends one `ready` control frame and then relays
// binary frames both ways. SSH runs end to end between the CLI and the node with the user's own
// certificate: the proxy sees only ciphertext; the node decides, records and audits as for a
// direct connection. A refusal is an `error` control frame and a 44xx/45xx close, as for the
// terminal.
import { type Duplex, pipeline } from "node:stream";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { createWebSocketStream, type WebSocket } from "ws";
import { UnavailableError } from "../../core/errors.ts";
import type { NodeInfo } from "./auth-client.ts";
import type { ProxyLocks } from "./locks.ts";
import { sessionOf } from "./plugins/session.ts";
import type { TerminalAuthApi } from "./terminal-auth.ts";
import { refuse } from "./terminal-bridge.ts";
import { closeCodeOf, encodeControl } from "./terminal-protocol.ts";
import type { NodeDialer } from "./tunnel/dialer.ts";

export const DIAL_PATH = "/v1/webapi/ssh/dial";

/** How long the node has to send its SSH identification string (servers send it at once). */
export const SSH_BANNER_TIMEOUT_MS = 10_000;
const SSH_BANNER_PREFIX = Buffer.from("SSH-");

/**
 * Resolves once the node's first bytes are an SSH identification string ("SSH-", RFC 4253 4.2),
 * with them put back for the relay. A node's address is its own claim: without this check a
 * node (or whoever rewrote its record) could point the caller's raw stream at any TCP service
 * the proxy reaches (a metadata endpoint, an internal API). Such services wait for the client or
 * answer otherwise, so they are refused before the caller may send a byte. Strict on purpose:
 * the lines RFC 4253 lets a server send before its version are what a non-SSH service says.
 */
export function awaitSshBanner(
  sock: Duplex,
  hostname: string,
  timeoutMs = SSH_BANNER_TIMEOUT_MS,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: Error): void => {
      clearTimeout(timer);
      sock.off("data", onData);
      sock.off("end", onEnd);
      sock.off("close", onEnd);
      sock.off("error", onError);
      sock.pause();
      if (err) reject(err);
      else {
        sock.unshift(Buffer.concat(chunks, size));
        resolve();
      }
    };
    const refused = (): UnavailableError =>
      new UnavailableError(`node ${JSON.stringify(hostname)} did not answer as an SSH server`);
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      const head = Buffer.concat(chunks, size).subarray(0, SSH_BANNER_PREFIX.length);
      if (!SSH_BANNER_PREFIX.subarray(0, head.length).equals(head)) done(refused());
      else if (head.length === SSH_BANNER_PREFIX.length) done();
    };
    const onEnd = (): void => done(refused());
    const onError = (): void => done(refused());
    const timer = setTimeout(() => done(refused()), timeoutMs);
    sock.on("data", onData);
    sock.once("end", onEnd);
    sock.once("close", onEnd);
    sock.once("error", onError);
  });
}

/** How long a locked user's node stream stays open for the node to end the session itself. */
export const DIAL_LOCK_GRACE_MS = 500;

/** A WebSocket close reason is at most 123 bytes of UTF-8. */
function closeReason(message: string): string {
  let out = message;
  while (Buffer.byteLength(out) > 123) out = out.slice(0, -1);
  return out;
}

const DialQuery = Type.Object(
  {
    node: Type.String({ minLength: 1, maxLength: 253, description: "target node hostname" }),
    login: Type.String({
      minLength: 1,
      maxLength: 32,
      pattern: "^[A-Za-z0-9_][A-Za-z0-9._-]*$",
      description: "the login the caller will use (checked here and again by the node)",
    }),
  },
  { additionalProperties: false },
);
type DialQuery = Static<typeof DialQuery>;

export interface DialRouteDeps {
  terminalAuth: TerminalAuthApi;
  dialer: NodeDialer;
  /** the terminal's credential check (upgradeAuthenticator) */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** node online check (requireReachable) */
  requireOnline: (node: NodeInfo) => NodeInfo;
  /** takes one of the caller's terminal slots; returns the release */
  takeSlot: (request: FastifyRequest) => void;
  /** closes the stream of a user a lock covers (server/proxy/locks.ts) */
  locks?: Pick<ProxyLocks, "track">;
}

export function registerDialRoute(app: FastifyInstance, deps: DialRouteDeps): void {
  app.get<{ Querystring: DialQuery }>(
    DIAL_PATH,
    {
      websocket: true,
      schema: { hide: true, querystring: DialQuery },
      preValidation: async (request, reply) => {
        await app.limitSessionRequests(request, reply);
        await deps.authenticate(request, reply);
      },
      preHandler: async (request) => {
        if (request.ws) deps.takeSlot(request);
      },
    },
    (socket: WebSocket, request) => {
      const q = request.query as DialQuery;
      let closed = false;
      const onClose = (): void => {
        closed = true;
      };
      socket.once("close", onClose);
      // Nothing may be sent before `ready`: the CLI starts SSH only after it.
      const early = (): void => refuse(socket, new UnavailableError("data sent before the node was ready"));
      socket.once("message", early);
      void (async () => {
        try {
          const sessionId = sessionOf(request).sessionId;
          const node = deps.requireOnline(
            await deps.terminalAuth.authorizeNodeLogin(sessionId, q.node, q.login),
          );
          const sock = await deps.dialer.dial(node);
          try {
            await awaitSshBanner(sock, node.hostname);
          } catch (err) {
            sock.destroy();
            throw err;
          }
          if (closed) {
            sock.destroy();
            return;
          }
          socket.off("message", early);
          socket.off("close", onClose);
          socket.send(encodeControl({ type: "ready", node: node.hostname, login: q.login }));
          request.log.info(
            { user: sessionOf(request).info.username, node: node.hostname, login: q.login },
            "node stream opened",
          );
          // ws's stream wrapper gives the socket back-pressure in both directions.
          const ws = createWebSocketStream(socket);
          pipeline(ws, sock, ws, () => {
            sock.destroy();
            socket.close();
          });
          const untrack = deps.locks?.track(sessionOf(request).info, (message) => {
            // Binary frames carry the CLI's SSH stream now, so no error frame: the message rides
            // in the close reason (at most 123 bytes). An agent ends the SSH session itself with
            // the message on the user's terminal, so it gets a moment to; the proxy's close is
            // what ends a stream to a node that does not (an agentless sshd).
            setTimeout(() => {
              socket.close(closeCodeOf("access_denied"), closeReason(message));
              sock.destroy();
            }, DIAL_LOCK_GRACE_MS).unref();
          });
          if (untrack) socket.once("close", untrack);
        } catch (err) {
          request.log.info(
            { err: err instanceof Error ? err.message : String(err), node: q.node },
            "node stream refused",
          );
          refuse(socket, err);
        }
      })();
    },
  );
}
