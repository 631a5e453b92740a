// The local STS stand-in must refuse what real STS refuses, or the IAM join tests prove nothing.
// These requests go to it directly, bypassing auth's own checks.
import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AwsCredentials,
  parseGetCallerIdentityResponse,
  parseStsErrorCode,
  signSigV4,
} from "../core/iam/index.ts";
import { type StsTestPrincipal, type StsTestServer, startStsServer } from "./harness/sts.ts";

const P: StsTestPrincipal = {
  accessKeyId: "ASIAHARNESSTEST00001",
  secretAccessKey: "harness-secret-000000000000000000000000",
  sessionToken: "harness-session-token",
  account: "111122223333",
  arn: "arn:aws:sts::111122223333:assumed-role/r/s",
  userId: "AROAHARNESS:s",
};
const CREDS: AwsCredentials = {
  accessKeyId: P.accessKeyId,
  secretAccessKey: P.secretAccessKey,
  sessionToken: P.sessionToken as string,
};
const BODY = "Action=GetCallerIdentity&Version=2011-06-15";

describe("local STS stand-in", () => {
  let sts: StsTestServer;
  beforeAll(async () => {
    sts = await startStsServer({ principals: [P] });
  });
  afterAll(async () => {
    await sts?.close();
  });

  const sign = (o: { body?: string; creds?: AwsCredentials; region?: string; date?: Date } = {}) => {
    const body = o.body ?? BODY;
    return signSigV4(
      {
        method: "POST",
        host: sts.hostPort,
        path: "/",
        headers: {
          host: sts.hostPort,
          "content-type": "application/x-www-form-urlencoded; charset=utf-8",
          "content-length": String(body.length),
        },
        body,
      },
      {
        credentials: o.creds ?? CREDS,
        region: o.region ?? "us-east-1",
        service: "sts",
        date: o.date ?? new Date(),
      },
    );
  };

  const send = (headers: Record<string, string>, body: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: sts.port,
          method: "POST",
          path: "/",
          headers,
          ca: sts.caPem,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
          );
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  it("answers a correctly signed GetCallerIdentity with the principal's identity", async () => {
    const res = await send(await sign(), BODY);
    expect(res.status).toBe(200);
    expect(parseGetCallerIdentityResponse(res.text)).toEqual({
      account: P.account,
      arn: P.arn,
      userId: P.userId,
    });
  });

  it("refuses an unsigned request", async () => {
    const res = await send({ "content-type": "application/x-www-form-urlencoded" }, BODY);
    expect(res.status).toBe(403);
    expect(parseStsErrorCode(res.text)).toBe("MissingAuthenticationToken");
  });

  it("refuses a body other than the signed one", async () => {
    const headers = await sign();
    const res = await send(headers, BODY.replace("2011-06-15", "2011-06-16"));
    expect([res.status, parseStsErrorCode(res.text)]).toEqual([403, "SignatureDoesNotMatch"]);
  });

  it("refuses a signature older or newer than 15 minutes", async () => {
    for (const skew of [-16 * 60_000, 16 * 60_000]) {
      const res = await send(await sign({ date: new Date(Date.now() + skew) }), BODY);
      expect([res.status, parseStsErrorCode(res.text)]).toEqual([403, "SignatureDoesNotMatch"]);
      expect(res.text).toMatch(/Signature expired/);
    }
  });

  it("refuses a credential scoped to a region it does not serve", async () => {
    const res = await send(await sign({ region: "eu-west-1" }), BODY);
    expect([res.status, parseStsErrorCode(res.text)]).toEqual([403, "SignatureDoesNotMatch"]);
  });

  it("refuses unknown keys and missing or wrong session tokens", async () => {
    const variants: AwsCredentials[] = [
      { ...CREDS, accessKeyId: "AKIANOSUCHKEY0000001" },
      { accessKeyId: CREDS.accessKeyId, secretAccessKey: CREDS.secretAccessKey },
      { ...CREDS, sessionToken: "other" },
    ];
    for (const creds of variants) {
      const res = await send(await sign({ creds }), BODY);
      expect([res.status, parseStsErrorCode(res.text)]).toEqual([403, "InvalidClientTokenId"]);
    }
  });

  it("refuses a correctly signed request for another action", async () => {
    const body = "Action=GetSessionToken&Version=2011-06-15";
    const res = await send(await sign({ body }), body);
    expect([res.status, parseStsErrorCode(res.text)]).toEqual([400, "InvalidAction"]);
  });
});
