// What AuthService needs from the three machine-identity flows (spec 4.5), kept apart on purpose:
// node join by cloud identity (join-iam.ts), bots (bot-identity.ts) and workloads (spiffe.ts).
// AuthService only delegates to these; each flow decides and audits on its own.
import type { PeerCertificate } from "node:tls";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import type { LockRecord, LockSubject, LockTarget } from "../../core/locks/lock.ts";
import type { AgentIdentityCredentials } from "../../proto/generated/svc/v1/AgentIdentityCredentials.ts";
import type { AuthenticateSPIFFERequest__Output } from "../../proto/generated/svc/v1/AuthenticateSPIFFERequest.ts";
import type { AuthenticateSPIFFEResponse } from "../../proto/generated/svc/v1/AuthenticateSPIFFEResponse.ts";
import type { BootstrapAgentIdentityRequest__Output } from "../../proto/generated/svc/v1/BootstrapAgentIdentityRequest.ts";
import type { CreateAgentIdentityRequest__Output } from "../../proto/generated/svc/v1/CreateAgentIdentityRequest.ts";
import type { CreateAgentIdentityResponse } from "../../proto/generated/svc/v1/CreateAgentIdentityResponse.ts";
import type { DeleteAgentIdentityRequest__Output } from "../../proto/generated/svc/v1/DeleteAgentIdentityRequest.ts";
import type { IssueWorkloadSVIDRequest__Output } from "../../proto/generated/svc/v1/IssueWorkloadSVIDRequest.ts";
import type { IssueWorkloadSVIDResponse } from "../../proto/generated/svc/v1/IssueWorkloadSVIDResponse.ts";
import type { ListAgentIdentitiesResponse } from "../../proto/generated/svc/v1/ListAgentIdentitiesResponse.ts";
import type { RegisterUsingIAMMethodRequest__Output } from "../../proto/generated/svc/v1/RegisterUsingIAMMethodRequest.ts";
import type { RegisterUsingIAMMethodResponse } from "../../proto/generated/svc/v1/RegisterUsingIAMMethodResponse.ts";
import type { RenewAgentIdentityRequest__Output } from "../../proto/generated/svc/v1/RenewAgentIdentityRequest.ts";
import type { Caller } from "./caller.ts";

export type IamJoinStream = ServerDuplexStream<
  RegisterUsingIAMMethodRequest__Output,
  RegisterUsingIAMMethodResponse
>;

/** RegisterUsingIAMMethod: init -> challenge -> proof -> node credentials. */
export interface IamJoinHandler {
  serve(call: IamJoinStream): void;
}

/** Bots: admin management plus the bot's own bootstrap and renewal. */
export interface AgentIdentityHandler {
  create(req: CreateAgentIdentityRequest__Output, caller: Caller): Promise<CreateAgentIdentityResponse>;
  list(): Promise<ListAgentIdentitiesResponse>;
  remove(req: DeleteAgentIdentityRequest__Output, caller: Caller): Promise<Record<string, never>>;
  bootstrap(
    req: BootstrapAgentIdentityRequest__Output,
    ctx: { peer: string },
  ): Promise<AgentIdentityCredentials>;
  /** `peerCertificate`: the verified TLS client certificate of the call, when there is one. */
  renew(
    req: RenewAgentIdentityRequest__Output,
    ctx: { caller: Caller; peerCertificate: PeerCertificate | undefined },
  ): Promise<AgentIdentityCredentials>;
  /** The roles a bot holds now; undefined when it may not act (unknown, not bootstrapped, locked). */
  activeRoles(name: string): Promise<{ roles: readonly string[] } | undefined>;
  /** Auth hands its lock service over (docs/locks.md): locked bots are refused, theft locks. */
  useLocks?(locks: BotLocks): void;
}

/** What bots need of the lock service. */
export interface BotLocks {
  covering(subject: LockSubject): LockRecord | undefined;
  lockByAuth(target: LockTarget, message: string): Promise<unknown>;
}

/** Workloads: SVIDs for bots that serve them, and SVID -> SSH certificate. */
export interface SpiffeHandler {
  issueWorkloadSvid(
    req: IssueWorkloadSVIDRequest__Output,
    caller: Caller,
  ): Promise<IssueWorkloadSVIDResponse>;
  authenticate(
    req: AuthenticateSPIFFERequest__Output,
    ctx: { peer: string },
  ): Promise<AuthenticateSPIFFEResponse>;
}
