// Public surface of core/iam: the IAM join (node: signed sts:GetCallerIdentity with auth's
// challenge; auth: local checks, forwarding to an allowlisted STS endpoint, allow-rule matching).
export {
  CHINA_AWS_REGIONS,
  defaultStsEndpoints,
  GOVCLOUD_AWS_REGIONS,
  normalizeHostPort,
  STANDARD_AWS_REGIONS,
  StsEndpointAllowlist,
} from "./allowlist.ts";
export {
  IAM_CHALLENGE_TTL_MS,
  IamChallenges,
  type IamChallengesDeps,
  type IssuedChallenge,
} from "./challenges.ts";
export { iamAllowRulesOf } from "./join-token-rules.ts";
export {
  type AwsCredentials,
  parseAmzDate,
  parseSigV4Authorization,
  type SigV4Authorization,
  type SigV4ReceivedRequest,
  signSigV4,
  sigV4Signature,
  sigV4SignatureMatches,
} from "./sigv4.ts";
export {
  awsCredentialsFromEnv,
  buildSignedStsRequest,
  IAM_CHALLENGE_HEADER,
  type SignedStsRequestOptions,
  STS_CONTENT_TYPE,
  STS_GET_CALLER_IDENTITY_BODY,
  stsEndpointForRegion,
} from "./sts-request.ts";
export {
  DEFAULT_STS_MAX_RESPONSE_BYTES,
  DEFAULT_STS_TIMEOUT_MS,
  type HttpsStsTransportOptions,
  httpsStsTransport,
  type StsForwardRequest,
  type StsHttpResponse,
  type StsTransport,
} from "./sts-transport.ts";
export { type CallerIdentity, parseGetCallerIdentityResponse, parseStsErrorCode } from "./sts-xml.ts";
export {
  type CheckedStsRequest,
  checkSignedStsRequest,
  IamJoinDeniedError,
  type IamJoinInput,
  type IamJoinResult,
  IamJoinVerifier,
  type IamJoinVerifierDeps,
  matchIamAllowRules,
} from "./verify.ts";
export {
  type HttpRequestParts,
  MAX_HTTP_REQUEST_BYTES,
  parseHttpRequest,
  serializeHttpRequest,
} from "./wire.ts";
