// The one server interceptor: decides who the caller is, then applies the authorization table.
// - `authorization: Bearer <session_id>` -> a user (the session must be live in the backend);
// - `x-agent-id: <id>` -> an agent or bot, ONLY when the connection's client certificate was
//   verified against the host CA and issued to that same id;
// - nothing -> anonymous. A credential that is presented but does not hold is refused
//   (UNAUTHENTICATED), never silently downgraded.
import type { PeerCertificate } from "node:tls";
import {
  type Metadata,
  ServerInterceptingCall,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
  ServerListenerBuilder,
} from "@grpc/grpc-js";
import { AccessDeniedError, NotAuthenticatedError } from "../../core/errors.ts";
import type { RuleResource, RuleVerb } from "../../core/resources/index.ts";
import { AUTHZ_TABLE, MFA_ENROLLMENT_RPCS } from "./authz.ts";
import { attachCaller, type Caller } from "./caller.ts";
import { toGrpcError } from "./errors.ts";
import { rpcNameOf } from "./proto.ts";
import type { SessionStore, WebSession } from "./sessions.ts";

/** Who a verified host-CA client certificate was issued to. */
export type PeerIdentity =
  | { kind: "agent"; id: string }
  | { kind: "bot"; id: string }
  /** id is "operator:<name>" (the x-agent-id it sends). */
  | { kind: "operator"; id: string };

export interface InterceptorDeps {
  sessions: SessionStore;
  /** Reads the identity a host-CA client certificate was issued to (undefined: none). */
  peerIdentity: (cert: PeerCertificate) => PeerIdentity | undefined;
  /**
   * The session's user still exists and may hold it (not deleted, disabled or locked; for a single
   * sign-on session, the live SSO user of the same connector). Called before `can`/`requireMfa`,
   * so it also loads what they need (an SSO user's record).
   */
  userActive: (username: string, session: WebSession) => boolean | Promise<boolean>;
  /** RBAC decision of core/rbac for the user's roles. */
  can: (username: string, resource: RuleResource, verb: RuleVerb) => boolean;
  /**
   * Whether an agent (a joined node) is still registered. A removed node's certificates stay
   * cryptographically valid until they expire; this is what stops them at auth. `caller` is the
   * object the call's handler will receive: a per-call key, so what this read finds can be handed
   * on to the handler (Heartbeat) without a second read and never to another call.
   */
  agentActive?: (agentId: string, caller: Caller) => Promise<boolean>;
  /** Do the user's roles require a second factor (role option require_mfa)? */
  requireMfa?: (username: string) => boolean;
  /**
   * Locks (docs/locks.md): the refusal ("locked: <message>") when a lock covers this caller for
   * this RPC, else undefined. Asked once the caller is known and admitted by the table.
   */
  lockedOut?: (rpc: string, caller: Caller) => string | undefined;
}

function single(metadata: Metadata, key: string): string | undefined {
  const values = metadata.get(key);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new NotAuthenticatedError(`more than one ${key} header`);
  const v = values[0];
  if (typeof v !== "string") throw new NotAuthenticatedError(`${key} must be text`);
  return v;
}

export async function authenticate(
  deps: InterceptorDeps,
  metadata: Metadata,
  call: Pick<ServerInterceptingCallInterface, "getAuthContext">,
): Promise<Caller> {
  const authorization = single(metadata, "authorization");
  const agentHeader = single(metadata, "x-agent-id");
  // An x-agent-id is checked whenever it is present, even next to a bearer token: a forged one
  // is refused, never ignored.
  let peer: PeerIdentity | undefined;
  if (agentHeader !== undefined) {
    // grpc-js only reports a peer certificate when the TLS layer verified it (socket.authorized).
    const cert = call.getAuthContext().sslPeerCertificate;
    peer = cert ? deps.peerIdentity(cert) : undefined;
    if (!peer || peer.id !== agentHeader) {
      throw new NotAuthenticatedError("x-agent-id does not match the client certificate");
    }
  }
  if (authorization !== undefined) {
    const m = /^Bearer ([^\s]+)$/.exec(authorization);
    if (!m?.[1]) throw new NotAuthenticatedError("authorization must be 'Bearer <session_id>'");
    const s = await deps.sessions.validate(m[1]);
    // A local user's check needs no I/O and answers a boolean: no extra await per call then.
    const active = deps.userActive(s.username, s);
    if (!(typeof active === "boolean" ? active : await active))
      throw new NotAuthenticatedError("invalid or expired session");
    const mfaMissing = deps.requireMfa?.(s.username) === true && !s.mfa;
    return {
      kind: "user",
      username: s.username,
      sessionHash: s.hash,
      sessionExpires: s.expires,
      sessionCreated: s.created,
      sessionMfa: s.mfa,
      sessionScope: s.scope === "mfa_enrollment" || mfaMissing ? "mfa_enrollment" : "full",
    };
  }
  if (peer) {
    if (peer.kind === "operator")
      return { kind: "operator", operatorName: peer.id.slice("operator:".length) };
    if (peer.kind === "agent") {
      const caller: Caller = { kind: "agent", agentId: peer.id };
      if (deps.agentActive && !(await deps.agentActive(peer.id, caller)))
        throw new NotAuthenticatedError("this node has been removed");
      return caller;
    }
    return { kind: "bot", botName: peer.id };
  }
  return { kind: "anonymous" };
}

/** Throws when the table does not admit this caller for this RPC. */
export function authorize(deps: Pick<InterceptorDeps, "can">, rpc: string, caller: Caller): void {
  const access = AUTHZ_TABLE[rpc];
  // An RPC missing from the table is closed: a new RPC must be placed in it deliberately.
  if (!access) throw new AccessDeniedError("no access rule for this call");
  if (access.callers.includes(caller.kind)) {
    if (
      caller.kind === "user" &&
      caller.sessionScope === "mfa_enrollment" &&
      !access.callers.includes("anonymous") &&
      !MFA_ENROLLMENT_RPCS.has(rpc)
    ) {
      throw new AccessDeniedError(
        "your roles require multi-factor authentication: enrol a WebAuthn device with this session, then log in again with it",
      );
    }
    if (access.admin && caller.kind === "user") {
      if (!deps.can(caller.username, access.admin.resource, access.admin.verb)) {
        throw new AccessDeniedError(`not allowed to ${access.admin.verb} ${access.admin.resource}`);
      }
    }
    return;
  }
  if (caller.kind === "anonymous") throw new NotAuthenticatedError("this call needs a credential");
  throw new AccessDeniedError("this call is not open to this kind of caller");
}

export function authInterceptor(deps: InterceptorDeps): ServerInterceptor {
  return (methodDescriptor, call) => {
    const rpc = rpcNameOf(methodDescriptor.path);
    // Health and reflection are not ours to gate: pass them through untouched.
    if (rpc === undefined) return new ServerInterceptingCall(call);
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        authenticate(deps, metadata, call)
          .then((caller) => {
            authorize(deps, rpc, caller);
            const locked = deps.lockedOut?.(rpc, caller);
            if (locked !== undefined) throw new AccessDeniedError(locked);
            attachCaller(metadata, caller);
            next(metadata);
          })
          .catch((err: unknown) => call.sendStatus(toGrpcError(err)));
      })
      .build();
    return new ServerInterceptingCall(call, { start: (next) => next(listener) });
  };
}
