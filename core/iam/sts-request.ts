// Node side of the IAM join: build the signed sts:GetCallerIdentity request that carries auth's
// challenge in a signed header, serialised in the wire form auth parses (wire.ts).
import type { Clock } from "../clock.ts";
import { BadParameterError } from "../errors.ts";
import { type AwsCredentials, signSigV4 } from "./sigv4.ts";
import { serializeHttpRequest } from "./wire.ts";

/** The only body auth accepts: STS's GetCallerIdentity action in the query protocol. */
export const STS_GET_CALLER_IDENTITY_BODY = "Action=GetCallerIdentity&Version=2011-06-15";
export const STS_CONTENT_TYPE = "application/x-www-form-urlencoded; charset=utf-8";
/** Carries auth's challenge; it must be among the SigV4 SignedHeaders so STS vouches for it. */
export const IAM_CHALLENGE_HEADER = "x-svc-challenge";
export const STS_SERVICE = "sts";

const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** The regional STS endpoint AWS SDKs use by default (China regions live under amazonaws.com.cn). */
export function stsEndpointForRegion(region: string): string {
  if (!REGION.test(region)) throw new BadParameterError("AWS region is not valid");
  return region.startsWith("cn-") ? `sts.${region}.amazonaws.com.cn` : `sts.${region}.amazonaws.com`;
}

/** Credentials and region from the standard AWS environment variables (the env is passed in). */
export function awsCredentialsFromEnv(env: Readonly<Record<string, string | undefined>>): {
  credentials: AwsCredentials;
  region: string;
} {
  const accessKeyId = env["AWS_ACCESS_KEY_ID"];
  const secretAccessKey = env["AWS_SECRET_ACCESS_KEY"];
  const sessionToken = env["AWS_SESSION_TOKEN"];
  const region = env["AWS_REGION"] ?? env["AWS_DEFAULT_REGION"];
  if (!accessKeyId || !secretAccessKey)
    throw new BadParameterError("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set for the IAM join");
  if (!region) throw new BadParameterError("AWS_REGION must be set for the IAM join");
  if (!REGION.test(region)) throw new BadParameterError("AWS_REGION is not a valid region name");
  return {
    credentials: sessionToken
      ? { accessKeyId, secretAccessKey, sessionToken }
      : { accessKeyId, secretAccessKey },
    region,
  };
}

export interface SignedStsRequestOptions {
  /** the challenge auth sent on the RegisterUsingIAMMethod stream */
  challenge: string;
  credentials: AwsCredentials;
  /** signing region; also picks the default endpoint */
  region: string;
  clock: Clock;
  /** host[:port] to address; default stsEndpointForRegion(region) */
  endpoint?: string;
}

/** The signed GetCallerIdentity request as HTTP/1.1 bytes (SignedStsRequest.http_request). */
export async function buildSignedStsRequest(opts: SignedStsRequestOptions): Promise<Buffer> {
  if (!/^[A-Za-z0-9_-]{16,128}$/.test(opts.challenge)) throw new BadParameterError("challenge is malformed");
  const host = opts.endpoint ?? stsEndpointForRegion(opts.region);
  const body = STS_GET_CALLER_IDENTITY_BODY;
  const headers = await signSigV4(
    {
      method: "POST",
      host,
      path: "/",
      headers: {
        host,
        "content-type": STS_CONTENT_TYPE,
        "content-length": String(Buffer.byteLength(body)),
        [IAM_CHALLENGE_HEADER]: opts.challenge,
      },
      body,
    },
    { credentials: opts.credentials, region: opts.region, service: STS_SERVICE, date: opts.clock.now() },
  );
  return serializeHttpRequest({
    method: "POST",
    target: "/",
    headers: Object.entries(headers),
    body: Buffer.from(body),
  });
}
