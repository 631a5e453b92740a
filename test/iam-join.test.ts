// IAM join end to end: the node signs with AWS's signer, auth checks and forwards over HTTPS to a
// local STS stand-in that verifies SigV4 like STS, and the identity is matched against allow rules.
// Every refusal also shows that nothing was sent where nothing may be sent.
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { ManualClock, systemClock } from "../core/clock.ts";
import { AccessDeniedError, BadParameterError, UnavailableError } from "../core/errors.ts";
import {
  type AwsCredentials,
  awsCredentialsFromEnv,
  buildSignedStsRequest,
  httpsStsTransport,
  IAM_CHALLENGE_HEADER,
  IamChallenges,
  IamJoinDeniedError,
  IamJoinVerifier,
  STS_CONTENT_TYPE,
  STS_GET_CALLER_IDENTITY_BODY,
  StsEndpointAllowlist,
  serializeHttpRequest,
  signSigV4,
} from "../core/iam/index.ts";
import type { IamAllowRule } from "../core/resources/join-token.ts";
import { loopbackTls, type StsTestPrincipal, type StsTestServer, startStsServer } from "./harness/sts.ts";

const ACCOUNT = "123456789012";
const NODE: StsTestPrincipal = {
  accessKeyId: "ASIATESTNODE00000001",
  secretAccessKey: "node-secret-key-for-tests-only-0000000000",
  sessionToken: "node-session-token-for-tests-only",
  account: ACCOUNT,
  arn: `arn:aws:sts::${ACCOUNT}:assumed-role/node-role/i-0123456789abcdef0`,
  userId: "AROATESTNODEROLE0001:i-0123456789abcdef0",
};
const OTHER: StsTestPrincipal = {
  accessKeyId: "AKIATESTOTHER0000002",
  secretAccessKey: "other-secret-key-for-tests-only-000000000",
  account: "210987654321",
  arn: "arn:aws:iam::210987654321:user/alice",
  userId: "AIDATESTOTHERUSER0002",
};
const NODE_CREDS: AwsCredentials = {
  accessKeyId: NODE.accessKeyId,
  secretAccessKey: NODE.secretAccessKey,
  sessionToken: NODE.sessionToken as string,
};
const ALLOW_NODE_ROLE: IamAllowRule[] = [
  { aws_account: ACCOUNT, aws_arn: `arn:aws:sts::${ACCOUNT}:assumed-role/node-role/*` },
];

/** A TCP listener that only counts connections: proof that nobody dialled it. */
interface Counter {
  port: number;
  connections: number;
  server: Server;
}

async function startCounter(): Promise<Counter> {
  const c: Counter = { port: 0, connections: 0, server: createTcpServer() };
  c.server.on("connection", (s: Socket) => {
    c.connections++;
    s.destroy();
  });
  await new Promise<void>((r) => c.server.listen(0, "127.0.0.1", r));
  c.port = (c.server.address() as AddressInfo).port;
  return c;
}

/** Signs a POST / with the given headers (all signed) and serialises it, for hand-made variants. */
async function signRaw(
  host: string,
  extra: Record<string, string>,
  opts: { creds?: AwsCredentials; body?: string; date?: Date } = {},
): Promise<{ headers: Record<string, string>; body: string }> {
  const body = opts.body ?? STS_GET_CALLER_IDENTITY_BODY;
  const headers = await signSigV4(
    {
      method: "POST",
      host,
      path: "/",
      headers: { host, "content-type": STS_CONTENT_TYPE, "content-length": String(body.length), ...extra },
      body,
    },
    {
      credentials: opts.creds ?? NODE_CREDS,
      region: "us-east-1",
      service: "sts",
      date: opts.date ?? new Date(),
    },
  );
  return { headers, body };
}

const toBytes = (r: { headers: Record<string, string>; body: string }): Buffer =>
  serializeHttpRequest({
    method: "POST",
    target: "/",
    headers: Object.entries(r.headers),
    body: Buffer.from(r.body),
  });

describe("IAM join", () => {
  let sts: StsTestServer;
  let counter: Counter;
  let backend: SqliteBackend;
  let challenges: IamChallenges;
  let verifier: IamJoinVerifier;
  const extraServers: HttpsServer[] = [];

  beforeAll(async () => {
    sts = await startStsServer({ principals: [NODE, OTHER] });
    counter = await startCounter();
    backend = new SqliteBackend({ path: ":memory:", clock: systemClock, sweepIntervalMs: 0 });
    challenges = new IamChallenges({ backend, clock: systemClock });
    verifier = new IamJoinVerifier({
      challenges,
      allowlist: new StsEndpointAllowlist([sts.hostPort]),
      transport: httpsStsTransport({ ca: sts.caPem, timeoutMs: 20_000 }),
    });
  });

  afterAll(async () => {
    await sts?.close();
    await new Promise<void>((r) => (counter ? counter.server.close(() => r()) : r()));
    for (const s of extraServers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
    await backend?.close();
  });

  let stsBefore = 0;
  beforeEach(() => {
    stsBefore = sts.requests();
  });

  const signFor = (challenge: string, extra: Partial<Parameters<typeof buildSignedStsRequest>[0]> = {}) =>
    buildSignedStsRequest({
      challenge,
      credentials: NODE_CREDS,
      region: "us-east-1",
      clock: systemClock,
      endpoint: sts.hostPort,
      ...extra,
    });

  it("accepts a valid signed request end to end and returns the identity and the matching rule", async () => {
    const { challenge } = await challenges.issue();
    const httpRequest = await signFor(challenge);
    const result = await verifier.verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE });
    expect(result.identity).toEqual({ account: ACCOUNT, arn: NODE.arn, userId: NODE.userId });
    expect(result.rule).toEqual(ALLOW_NODE_ROLE[0]);
    expect(result.stsHost).toBe(sts.hostPort);
    expect(sts.requests()).toBe(stsBefore + 1);
  });

  it("signs with credentials from the standard environment variables (no session token)", async () => {
    const { credentials, region } = awsCredentialsFromEnv({
      AWS_ACCESS_KEY_ID: OTHER.accessKeyId,
      AWS_SECRET_ACCESS_KEY: OTHER.secretAccessKey,
      AWS_REGION: "us-east-1",
    });
    const { challenge } = await challenges.issue();
    const httpRequest = await buildSignedStsRequest({
      challenge,
      credentials,
      region,
      clock: systemClock,
      endpoint: sts.hostPort,
    });
    expect(httpRequest.toString("latin1")).not.toMatch(/x-amz-security-token/i);
    const result = await verifier.verify({
      httpRequest,
      challenge,
      allow: [{ aws_account: "210987654321", aws_arn: "arn:aws:iam::210987654321:user/*" }],
    });
    expect(result.identity.arn).toBe(OTHER.arn);
  });

  it("refuses an STS host that is not on the allowlist and never connects to it (SSRF)", async () => {
    for (const endpoint of [`127.0.0.1:${counter.port}`, "169.254.169.254", `localhost:${counter.port}`]) {
      const { challenge } = await challenges.issue();
      const httpRequest = await signFor(challenge, { endpoint });
      const err = await verifier
        .verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AccessDeniedError);
      expect(String(err)).toMatch(/not on the allowlist/);
    }
    expect(counter.connections).toBe(0);
    expect(sts.requests()).toBe(stsBefore);
  });

  it("with the default allowlist refuses loopback and metadata addresses and look-alike names", async () => {
    const defaults = new IamJoinVerifier({
      challenges,
      allowlist: StsEndpointAllowlist.defaults(),
      transport: httpsStsTransport({ ca: sts.caPem }),
    });
    for (const endpoint of [
      `127.0.0.1:${counter.port}`,
      "169.254.169.254",
      "sts.us-east-1.amazonaws.com.attacker.example",
      `sts.amazonaws.com:${counter.port}`,
      `sts.amazonaws.com@127.0.0.1:${counter.port}`,
    ]) {
      const { challenge } = await challenges.issue();
      const httpRequest = await signFor(challenge, { endpoint });
      await expect(
        defaults.verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE }),
      ).rejects.toBeInstanceOf(AccessDeniedError);
    }
    expect(counter.connections).toBe(0);
  });

  it("refuses a request without the challenge header", async () => {
    const { challenge } = await challenges.issue();
    const httpRequest = toBytes(await signRaw(sts.hostPort, {}));
    const err = await verifier
      .verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadParameterError);
    expect(String(err)).toContain(IAM_CHALLENGE_HEADER);
    expect(sts.requests()).toBe(stsBefore);
  });

  it("refuses a challenge header that is present but not covered by the signature", async () => {
    const { challenge } = await challenges.issue();
    const signed = await signRaw(sts.hostPort, {});
    const httpRequest = toBytes({
      ...signed,
      headers: { ...signed.headers, [IAM_CHALLENGE_HEADER]: challenge },
    });
    const err = await verifier
      .verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadParameterError);
    expect(String(err)).toMatch(/covered by the signature/);
    expect(sts.requests()).toBe(stsBefore);
  });

  it("refuses another challenge than the one issued on the stream", async () => {
    const first = await challenges.issue();
    const second = await challenges.issue();
    const httpRequest = await signFor(first.challenge);
    const err = await verifier
      .verify({ httpRequest, challenge: second.challenge, allow: ALLOW_NODE_ROLE })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(String(err)).toMatch(/another challenge/);
    expect(sts.requests()).toBe(stsBefore);
  });

  it("refuses a replay: a challenge is accepted once only", async () => {
    const { challenge } = await challenges.issue();
    const httpRequest = await signFor(challenge);
    await verifier.verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE });
    const err = await verifier
      .verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(String(err)).toMatch(/unknown, expired or already used/);
    expect(sts.requests()).toBe(stsBefore + 1);
  });

  it("refuses an old signed request whose challenge header was swapped for a fresh one (STS: signature)", async () => {
    const old = await challenges.issue();
    const signed = await signRaw(sts.hostPort, { [IAM_CHALLENGE_HEADER]: old.challenge });
    const fresh = await challenges.issue();
    const httpRequest = toBytes({
      ...signed,
      headers: { ...signed.headers, [IAM_CHALLENGE_HEADER]: fresh.challenge },
    });
    const err = await verifier
      .verify({ httpRequest, challenge: fresh.challenge, allow: ALLOW_NODE_ROLE })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(String(err)).toMatch(/STS rejected.*403.*SignatureDoesNotMatch/);
    expect(sts.requests()).toBe(stsBefore + 1);
  });

  it("refuses an identity whose ARN matches no rule, and reports the identity for the audit", async () => {
    const { challenge } = await challenges.issue();
    const httpRequest = await signFor(challenge);
    const err = await verifier
      .verify({
        httpRequest,
        challenge,
        allow: [{ aws_account: ACCOUNT, aws_arn: `arn:aws:sts::${ACCOUNT}:assumed-role/other-role/*` }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IamJoinDeniedError);
    expect((err as IamJoinDeniedError).identity.arn).toBe(NODE.arn);
    expect((err as IamJoinDeniedError).code).toBe("access_denied");
  });

  it("refuses an identity from another account even when the ARN glob would match", async () => {
    const { challenge } = await challenges.issue();
    const httpRequest = await signFor(challenge);
    const err = await verifier
      .verify({ httpRequest, challenge, allow: [{ aws_account: "999999999999", aws_arn: "*" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IamJoinDeniedError);
    expect((err as IamJoinDeniedError).identity.account).toBe(ACCOUNT);
  });

  it("refuses a tampered body before sending anything", async () => {
    for (const body of [
      "Action=GetCallerIdentity&Version=2011-06-16",
      "Version=2011-06-15&Action=GetCallerIdentity",
      "Action=GetCallerIdentity&Version=2011-06-15&Action=AssumeRole",
    ]) {
      const { challenge } = await challenges.issue();
      const signed = await signRaw(sts.hostPort, { [IAM_CHALLENGE_HEADER]: challenge });
      // content-length follows the body, so only the body check itself can catch it
      const headers = { ...signed.headers, "content-length": String(body.length) };
      const httpRequest = toBytes({ headers, body });
      const err = await verifier
        .verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadParameterError);
      expect(String(err)).toMatch(/body must be exactly/);
    }
    expect(sts.requests()).toBe(stsBefore);
  });

  it("passes a request signed 20 minutes ago to STS, which refuses it as expired", async () => {
    const { challenge } = await challenges.issue();
    const httpRequest = await signFor(challenge, { clock: new ManualClock(Date.now() - 20 * 60_000) });
    const err = await verifier
      .verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(String(err)).toMatch(/STS rejected.*SignatureDoesNotMatch/);
    expect(sts.requests()).toBe(stsBefore + 1);
  });

  it("refuses a request signed with a wrong secret (STS: SignatureDoesNotMatch), never echoing it", async () => {
    const { challenge } = await challenges.issue();
    const wrong = { ...NODE_CREDS, secretAccessKey: "not-the-right-secret-key-000000000000000" };
    const httpRequest = await signFor(challenge, { credentials: wrong });
    const err = await verifier
      .verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(String(err)).toMatch(/SignatureDoesNotMatch/);
    for (const secret of [wrong.secretAccessKey, NODE.sessionToken as string, NODE.accessKeyId])
      expect(String(err)).not.toContain(secret);
  });

  it("refuses an unknown access key and a wrong session token (STS: InvalidClientTokenId)", async () => {
    for (const credentials of [
      { ...NODE_CREDS, accessKeyId: "AKIAUNKNOWNKEY000009" },
      { ...NODE_CREDS, sessionToken: "another-session-token" },
    ]) {
      const { challenge } = await challenges.issue();
      const httpRequest = await signFor(challenge, { credentials });
      await expect(verifier.verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE })).rejects.toThrow(
        /STS rejected.*InvalidClientTokenId/,
      );
    }
  });

  it("does not follow a redirect from an allowlisted endpoint", async () => {
    const tls = await loopbackTls();
    const redirector = createHttpsServer({ key: tls.key, cert: tls.cert }, (_req, res) => {
      res.writeHead(307, { location: `https://127.0.0.1:${counter.port}/` });
      res.end();
    });
    extraServers.push(redirector);
    await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
    const hostPort = `127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    const v = new IamJoinVerifier({
      challenges,
      allowlist: new StsEndpointAllowlist([hostPort]),
      transport: httpsStsTransport({ ca: tls.caPem }),
    });
    const { challenge } = await challenges.issue();
    const httpRequest = await signFor(challenge, { endpoint: hostPort });
    const err = await v.verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(String(err)).toMatch(/redirect/);
    expect(counter.connections).toBe(0);
  });

  it("gives up on an answer that is too large or too slow, and on an untrusted certificate", async () => {
    const tls = await loopbackTls();
    const big = createHttpsServer({ key: tls.key, cert: tls.cert }, (_req, res) => {
      res.writeHead(200, { "content-type": "text/xml" });
      res.end(`<GetCallerIdentityResponse>${"x".repeat(200_000)}</GetCallerIdentityResponse>`);
    });
    const silent = createHttpsServer({ key: tls.key, cert: tls.cert }, () => {
      // never answers: the transport's deadline must end the wait
    });
    for (const s of [big, silent]) {
      extraServers.push(s);
      await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    }
    const cases = [
      { server: big, transport: httpsStsTransport({ ca: tls.caPem }), expected: /larger than/ },
      {
        server: silent,
        transport: httpsStsTransport({ ca: tls.caPem, timeoutMs: 1500 }),
        expected: /no answer within/,
      },
      // the STS stand-in's certificate is not signed by this CA
      { server: undefined, transport: httpsStsTransport({ ca: tls.caPem }), expected: /request failed/ },
    ];
    for (const c of cases) {
      const hostPort = c.server ? `127.0.0.1:${(c.server.address() as AddressInfo).port}` : sts.hostPort;
      const v = new IamJoinVerifier({
        challenges,
        allowlist: new StsEndpointAllowlist([hostPort]),
        transport: c.transport,
      });
      const { challenge } = await challenges.issue();
      const httpRequest = await signFor(challenge, { endpoint: hostPort });
      const err = await v.verify({ httpRequest, challenge, allow: ALLOW_NODE_ROLE }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnavailableError);
      expect(String(err)).toMatch(c.expected);
    }
  });
});
