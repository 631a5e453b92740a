// RegisterUsingIAMMethod, the auth side of a node join by AWS identity (docs/iam-join.md):
// init (a RegisterAgentRequest naming a JoinToken with join_method iam) -> a fresh challenge ->
// the node's signed sts:GetCallerIdentity carrying it -> IamJoinVerifier (local checks, STS
// allowlist, forwarding, allow rules) -> the same node credentials RegisterAgent issues
// (AgentJoin.issueAdmitted). Tokens naming the bot role are refused before any challenge: the
// spec keeps bots out of the IAM join. Every outcome is audited as node.join, with the AWS
// identity whenever STS vouched for one.
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError, BadParameterError } from "../../core/errors.ts";
import {
  defaultStsEndpoints,
  httpsStsTransport,
  IamChallenges,
  IamJoinDeniedError,
  IamJoinVerifier,
  iamAllowRulesOf,
  StsEndpointAllowlist,
  type StsTransport,
} from "../../core/iam/index.ts";
import type { JsonObject } from "../../core/json.ts";
import type { JoinToken } from "../../core/resources/index.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import type { RegisterAgentRequest__Output } from "../../proto/generated/svc/v1/RegisterAgentRequest.ts";
import type { RegisterAgentResponse } from "../../proto/generated/svc/v1/RegisterAgentResponse.ts";
import type { RegisterUsingIAMMethodRequest__Output } from "../../proto/generated/svc/v1/RegisterUsingIAMMethodRequest.ts";
import { toGrpcError } from "./errors.ts";
import type { AdmittedJoinRequest } from "./join-agent.ts";
import type { IamJoinHandler, IamJoinStream } from "./machine-identity.ts";

/** The credential issuer of the node join (AgentJoin implements it). */
export interface AdmittedNodeIssuer {
  checkAdmittedRequest(req: RegisterAgentRequest__Output, ctx: { peer: string }): AdmittedJoinRequest;
  issueAdmitted(token: JoinToken, req: AdmittedJoinRequest): Promise<RegisterAgentResponse>;
}

export interface IamJoinDeps {
  backend: Backend;
  source: ResourceSource;
  clock: Clock;
  logger: Logger;
  nodes: AdmittedNodeIssuer;
  /** STS endpoints auth may forward to (host or host:port); default: every AWS STS endpoint. */
  stsEndpoints?: readonly string[];
  /** How proofs reach STS; default HTTPS with Node's public roots. */
  stsTransport?: StsTransport;
  /** How long the node has to send its proof; default the challenge TTL (2 min). */
  proofTimeoutMs?: number;
}

const TOKEN_NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;
const DEFAULT_PROOF_TIMEOUT_MS = 2 * 60_000;

/** Reads the next message of the stream, or fails after `ms` / when the client ends first. */
function nextMessage(
  call: IamJoinStream,
  ms: number,
  what: string,
): Promise<RegisterUsingIAMMethodRequest__Output> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      call.off("data", onData);
      call.off("end", onEnd);
      call.off("error", onError);
      call.off("cancelled", onEnd);
    };
    const onData = (m: RegisterUsingIAMMethodRequest__Output) => {
      cleanup();
      call.pause();
      resolve(m);
    };
    const onEnd = () => {
      cleanup();
      reject(new BadParameterError(`the stream ended before the ${what}`));
    };
    const onError = (err: unknown) => {
      cleanup();
      reject(err);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new BadParameterError(`no ${what} within ${Math.round(ms / 1000)} s`));
    }, ms);
    call.on("data", onData);
    call.on("end", onEnd);
    call.on("error", onError);
    call.on("cancelled", onEnd);
    call.resume();
  });
}

export class IamJoin implements IamJoinHandler {
  readonly #d: IamJoinDeps;
  readonly #challenges: IamChallenges;
  readonly #verifier: IamJoinVerifier;

  constructor(deps: IamJoinDeps) {
    this.#d = deps;
    this.#challenges = new IamChallenges({ backend: deps.backend, clock: deps.clock });
    this.#verifier = new IamJoinVerifier({
      challenges: this.#challenges,
      allowlist: new StsEndpointAllowlist(deps.stsEndpoints ?? defaultStsEndpoints()),
      transport: deps.stsTransport ?? httpsStsTransport(),
    });
  }

  serve(call: IamJoinStream): void {
    call.pause();
    this.#run(call).then(
      () => call.end(),
      (err: unknown) => call.emit("error", toGrpcError(err)),
    );
  }

  async #run(call: IamJoinStream): Promise<void> {
    const timeout = this.#d.proofTimeoutMs ?? DEFAULT_PROOF_TIMEOUT_MS;
    const first = await nextMessage(call, timeout, "init message");
    const init = first.init;
    if (first.step !== "init" || !init) throw new BadParameterError("the first message must be init");
    const peer = call.getPeer();
    const audit: JsonObject = { method: "iam", hostname: String(init.hostname ?? "").slice(0, 253) };
    try {
      const token = this.#token(init.token);
      audit["token"] = token.metadata.name;
      const allow = iamAllowRulesOf(token.spec);
      if (init.agentless)
        throw new BadParameterError("an IAM join is for agents; agentless nodes use a token");
      const admitted = this.#d.nodes.checkAdmittedRequest(init, { peer });
      const { challenge } = await this.#challenges.issue();
      call.write({ challenge });
      const second = await nextMessage(call, timeout, "signed STS proof");
      const proof = second.proof;
      if (second.step !== "proof" || !proof?.http_request)
        throw new BadParameterError("the second message must be the signed STS proof");
      const result = await this.#verifier.verify({ httpRequest: proof.http_request, challenge, allow });
      audit["aws_account"] = result.identity.account;
      audit["aws_arn"] = result.identity.arn;
      audit["sts_host"] = result.stsHost;
      if (this.#d.source.get("JoinToken", token.metadata.name) === undefined)
        throw new AccessDeniedError("join token is not valid");
      const credentials = await this.#d.nodes.issueAdmitted(token, admitted);
      audit["agent_id"] = credentials.agent_id ?? "";
      await this.#audit(true, audit);
      call.write({ credentials });
    } catch (err) {
      if (err instanceof IamJoinDeniedError) {
        audit["aws_account"] = err.identity.account;
        audit["aws_arn"] = err.identity.arn;
      }
      audit["reason"] = err instanceof Error ? err.message : "join failed";
      await this.#audit(false, audit);
      throw err;
    }
  }

  #token(name: unknown): JoinToken {
    if (typeof name !== "string" || !TOKEN_NAME.test(name))
      throw new BadParameterError("token must name an IAM JoinToken");
    const token = this.#d.source.get("JoinToken", name);
    // Token names are not secret for IAM tokens, yet say nothing more than RegisterAgent does.
    if (!token) throw new AccessDeniedError("join token is not valid");
    if (!(Date.parse(token.spec.expires) > this.#d.clock.now().getTime()))
      throw new AccessDeniedError("join token has expired");
    return token;
  }

  async #audit(success: boolean, fields: JsonObject): Promise<void> {
    try {
      await this.#d.backend.appendAudit({
        event_type: "node.join",
        user_name: "",
        success,
        fields: { emitted_by: "auth", ...fields },
      });
    } catch (err) {
      // Neither the answer nor the original refusal may be lost to an audit hiccup.
      this.#d.logger.error({ err }, "node.join audit failed");
    }
  }
}
