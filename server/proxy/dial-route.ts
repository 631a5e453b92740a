// WebSocket /v1/webapi/ssh/dial?node=<name>&login=<login> (docs/tunnels.md): a raw byte stream to a
// node's SSH port for `svc ssh`, so a CLI reaches tunnel nodes (and any node) through the proxy
// alone. The proxy asks auth whether the caller may log in there as that login (the terminal's
// check), reaches the node through the NodeDialer, sends one `ready` control frame and then relays
// binary frames both ways. SSH runs end to end between the CLI and the node with the user's own
// certificate: the proxy sees only ciphertext; the node decides, records and audits as for a
// direct connection. A refusal is an `error` control frame and a 44xx/45xx close, as for the
// terminal.
import { pipeline } from "node:stream";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { createWebSocketStream, type WebSocket } from "ws";
import { UnavailableError } from "../../core/errors.ts";
import type { NodeInfo } from "./auth-client.ts";
import { sessionOf } from "./plugins/session.ts";
import type { TerminalAuthApi } from "./terminal-auth.ts";
import { refuse } from "./terminal-bridge.ts";
import { encodeControl } from "./terminal-protocol.ts";
import type { NodeDialer } from "./tunnel/dialer.ts";

export const DIAL_PATH = "/v1/webapi/ssh/dial";

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
