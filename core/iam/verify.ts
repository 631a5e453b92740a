// Auth side of the IAM join. Everything about the node's signed request is checked before a
// single byte leaves auth: method, path, exact body, the challenge header (present, equal to the
// one issued, covered by the signature) and the Host against the STS allowlist. Only then is the
// request forwarded, STS's answer read, and the identity matched against the JoinToken's rules.
import { createHash, timingSafeEqual } from "node:crypto";
import { AccessDeniedError, BadParameterError, isSvcError, UnavailableError } from "../errors.ts";
import { globMatch } from "../rbac/match.ts";
import type { IamAllowRule } from "../resources/join-token.ts";
import type { StsEndpointAllowlist } from "./allowlist.ts";
import type { IamChallenges } from "./challenges.ts";
import { parseAmzDate, parseSigV4Authorization, type SigV4Authorization } from "./sigv4.ts";
import {
  IAM_CHALLENGE_HEADER,
  STS_CONTENT_TYPE,
  STS_GET_CALLER_IDENTITY_BODY,
  STS_SERVICE,
} from "./sts-request.ts";
import type { StsTransport } from "./sts-transport.ts";
import {
  type CallerIdentity,
  parseGetCallerIdentityResponse,
  parseStsErrorCode,
  stsRejected,
} from "./sts-xml.ts";
import { headerValue, parseHttpRequest } from "./wire.ts";

/** A proof that passed every local check and may be forwarded as is. */
export interface CheckedStsRequest {
  /** the allowlist entry the Host header matched: where the request goes */
  hostPort: string;
  headers: ReadonlyArray<readonly [string, string]>;
  body: Buffer;
  authorization: SigV4Authorization;
}

const CONTENT_TYPES = new Set([STS_CONTENT_TYPE, "application/x-www-form-urlencoded"]);
const REQUIRED_SIGNED = ["host", "x-amz-date", IAM_CHALLENGE_HEADER];

const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

/** Constant-time string equality (hashes first, so lengths leak nothing either). */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * The local checks, no I/O. BadParameterError when the proof is malformed, AccessDeniedError when
 * it is well formed but not acceptable (unlisted STS host, another challenge).
 */
export function checkSignedStsRequest(
  raw: Uint8Array,
  opts: { expectedChallenge: string; allowlist: StsEndpointAllowlist },
): CheckedStsRequest {
  const req = parseHttpRequest(raw);
  if (req.method !== "POST") throw new BadParameterError("the signed STS request must be a POST");
  if (req.target !== "/") throw new BadParameterError("the signed STS request must go to path /");
  if (req.body.toString("latin1") !== STS_GET_CALLER_IDENTITY_BODY)
    throw new BadParameterError(
      `the signed STS request body must be exactly ${STS_GET_CALLER_IDENTITY_BODY}`,
    );
  const contentType = headerValue(req.headers, "content-type")?.toLowerCase();
  if (contentType === undefined || !CONTENT_TYPES.has(contentType))
    throw new BadParameterError(
      "the signed STS request must have content-type application/x-www-form-urlencoded",
    );

  const host = headerValue(req.headers, "host");
  if (host === undefined) throw new BadParameterError("the signed STS request has no host header");
  const hostPort = opts.allowlist.match(host);
  // The host passed normalizeHostPort's charset when it is printable here; otherwise say nothing of it.
  if (hostPort === undefined)
    throw new AccessDeniedError(
      /^[A-Za-z0-9.:[\]-]{1,260}$/.test(host)
        ? `STS endpoint ${host.toLowerCase()} is not on the allowlist`
        : "STS endpoint is not on the allowlist",
    );

  const authorizationHeader = headerValue(req.headers, "authorization");
  if (authorizationHeader === undefined) throw new BadParameterError("the signed STS request is not signed");
  const authorization = parseSigV4Authorization(authorizationHeader);
  if (authorization.service !== STS_SERVICE) throw new BadParameterError("the request is not signed for STS");
  for (const name of REQUIRED_SIGNED) {
    if (!authorization.signedHeaders.includes(name))
      throw new BadParameterError(`header ${name} must be covered by the signature`);
  }
  const amzDate = headerValue(req.headers, "x-amz-date");
  if (amzDate === undefined) throw new BadParameterError("the signed STS request has no x-amz-date header");
  parseAmzDate(amzDate);
  if (!amzDate.startsWith(authorization.date))
    throw new BadParameterError("x-amz-date and the credential scope name different days");

  const challenge = headerValue(req.headers, IAM_CHALLENGE_HEADER);
  if (challenge === undefined)
    throw new BadParameterError(`the signed STS request has no ${IAM_CHALLENGE_HEADER} header`);
  if (!sameSecret(challenge, opts.expectedChallenge))
    throw new AccessDeniedError("the signed STS request carries another challenge than the one issued");

  return { hostPort, headers: req.headers, body: req.body, authorization };
}

/** The first rule that admits `identity`: account equal, and the ARN glob (when given) matching. */
export function matchIamAllowRules(
  identity: CallerIdentity,
  rules: readonly IamAllowRule[],
): IamAllowRule | undefined {
  return rules.find(
    (r) =>
      r.aws_account === identity.account && (r.aws_arn === undefined || globMatch(r.aws_arn, identity.arn)),
  );
}

/** STS vouched for the identity, but the JoinToken does not admit it; `identity` is there for the audit log. */
export class IamJoinDeniedError extends AccessDeniedError {
  readonly identity: CallerIdentity;
  constructor(identity: CallerIdentity) {
    super("the AWS identity is not allowed by the join token's rules");
    this.identity = identity;
  }
}

export interface IamJoinVerifierDeps {
  challenges: IamChallenges;
  allowlist: StsEndpointAllowlist;
  transport: StsTransport;
}

export interface IamJoinInput {
  /** SignedStsRequest.http_request as received */
  httpRequest: Uint8Array;
  /** the challenge auth issued on this stream */
  challenge: string;
  /** the JoinToken's spec.allow */
  allow: readonly IamAllowRule[];
}

export interface IamJoinResult {
  identity: CallerIdentity;
  /** the allow rule that admitted it */
  rule: IamAllowRule;
  /** the STS endpoint that answered */
  stsHost: string;
}

export class IamJoinVerifier {
  readonly #deps: IamJoinVerifierDeps;

  constructor(deps: IamJoinVerifierDeps) {
    this.#deps = deps;
  }

  /**
   * Consumes the challenge (one attempt per challenge, whatever the outcome), checks the proof,
   * forwards it, and matches the identity. Throws BadParameterError, AccessDeniedError
   * (IamJoinDeniedError when only the rules refuse) or UnavailableError (STS unreachable).
   */
  async verify(input: IamJoinInput): Promise<IamJoinResult> {
    if (input.allow.length === 0) throw new AccessDeniedError("the join token has no IAM allow rules");
    await this.#deps.challenges.consume(input.challenge);
    const checked = checkSignedStsRequest(input.httpRequest, {
      expectedChallenge: input.challenge,
      allowlist: this.#deps.allowlist,
    });
    const identity = await this.#ask(checked);
    const rule = matchIamAllowRules(identity, input.allow);
    if (rule === undefined) throw new IamJoinDeniedError(identity);
    return { identity, rule, stsHost: checked.hostPort };
  }

  async #ask(checked: CheckedStsRequest): Promise<CallerIdentity> {
    let res: Awaited<ReturnType<StsTransport>>;
    try {
      res = await this.#deps.transport({
        hostPort: checked.hostPort,
        headers: checked.headers,
        body: checked.body,
      });
    } catch (err) {
      if (isSvcError(err)) throw err;
      throw new UnavailableError(`STS endpoint ${checked.hostPort} could not be reached`, { cause: err });
    }
    const text = res.body.toString("utf8");
    if (res.status === 200) return parseGetCallerIdentityResponse(text);
    if (res.status >= 300 && res.status < 400)
      throw new AccessDeniedError(
        `STS answered with a redirect (HTTP ${res.status}); redirects are not followed`,
      );
    if (res.status >= 400 && res.status < 500) throw stsRejected(res.status, parseStsErrorCode(text));
    throw new UnavailableError(`STS endpoint ${checked.hostPort} answered HTTP ${res.status}`);
  }
}
