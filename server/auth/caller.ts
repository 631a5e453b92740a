// Who is calling: decided once per call by the interceptor (interceptor.ts) and read by handlers.
// The decision travels in a WeakMap keyed by the call's Metadata object, so nothing a client sends
// (no header) can pose as an already-decided identity.
import type { Metadata } from "@grpc/grpc-js";

export type CallerKind = "anonymous" | "user" | "agent" | "bot" | "operator";

export type Caller =
  | { kind: "anonymous" }
  | {
      kind: "user";
      username: string;
      /** SHA-256 (hex) of the session ID: the backend key, never the secret itself. */
      sessionHash: string;
      sessionExpires: Date;
      sessionCreated: Date;
      /** the session's login passed a second factor */
      sessionMfa: boolean;
      /**
       * What the session may do now: "mfa_enrollment" when it was issued for enrolment, or when
       * the user's roles require MFA and the session did not pass it (a role changed since).
       */
      sessionScope: "full" | "mfa_enrollment";
    }
  | { kind: "agent"; agentId: string }
  | { kind: "bot"; botName: string }
  /** The operator (client certificate svc://operator/<name>): only its hooks (authz.ts). */
  | { kind: "operator"; operatorName: string };

const callers = new WeakMap<Metadata, Caller>();

export function attachCaller(metadata: Metadata, caller: Caller): void {
  callers.set(metadata, caller);
}

/** The caller the interceptor decided on; anonymous when none (e.g. a server without it). */
export function callerOf(metadata: Metadata): Caller {
  return callers.get(metadata) ?? { kind: "anonymous" };
}

/** Name recorded in audit events as the emitter. */
export function callerLabel(caller: Caller): string {
  switch (caller.kind) {
    case "user":
      return `user:${caller.username}`;
    case "agent":
      return `agent:${caller.agentId}`;
    case "bot":
      return `bot:${caller.botName}`;
    case "operator":
      return `operator:${caller.operatorName}`;
    default:
      return "anonymous";
  }
}
