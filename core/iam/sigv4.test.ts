import { SignatureV4 } from "@smithy/signature-v4";
import { describe, expect, it } from "vitest";
import { BadParameterError } from "../errors.ts";
import {
  NodeSha256,
  parseAmzDate,
  parseSigV4Authorization,
  type SigV4ReceivedRequest,
  signSigV4,
  sigV4Signature,
  sigV4SignatureMatches,
} from "./sigv4.ts";

const CREDS = {
  accessKeyId: "AKIAUNITTEST00000001",
  secretAccessKey: "unit-test-secret-0000000000000000000000",
};
const DATE = new Date(Date.UTC(2026, 10, 23, 1, 2, 3));

async function signed(
  extra: Record<string, string> = {},
  creds: typeof CREDS & { sessionToken?: string } = CREDS,
): Promise<SigV4ReceivedRequest & { auth: ReturnType<typeof parseSigV4Authorization>; amzDate: string }> {
  const body = "Action=GetCallerIdentity&Version=2011-06-15";
  const headers = await signSigV4(
    {
      method: "POST",
      host: "sts.us-east-1.amazonaws.com",
      path: "/",
      headers: { host: "sts.us-east-1.amazonaws.com", ...extra },
      body,
    },
    { credentials: creds, region: "us-east-1", service: "sts", date: DATE },
  );
  return {
    method: "POST",
    path: "/",
    query: "",
    headers: Object.entries(headers),
    body: Buffer.from(body),
    auth: parseSigV4Authorization(headers["authorization"] as string),
    amzDate: headers["x-amz-date"] as string,
  };
}

describe("SigV4: AWS's signer against our verifier", () => {
  it("verifies what @smithy/signature-v4 signs, with and without a session token", async () => {
    for (const creds of [CREDS, { ...CREDS, sessionToken: "session/token+with=odd chars" }]) {
      const req = await signed(
        { "x-svc-challenge": "abc", "content-type": "application/x-www-form-urlencoded" },
        creds,
      );
      expect(req.amzDate).toBe("20261123T010203Z");
      expect(req.auth).toMatchObject({
        accessKeyId: CREDS.accessKeyId,
        date: "20261123",
        region: "us-east-1",
        service: "sts",
      });
      expect(req.auth.signedHeaders).toContain("x-svc-challenge");
      if (creds !== CREDS) expect(req.auth.signedHeaders).toContain("x-amz-security-token");
      expect(sigV4SignatureMatches(req, req.auth, req.amzDate, creds.secretAccessKey)).toBe(true);
    }
  });

  it("rejects a changed body, header value, date or secret", async () => {
    const req = await signed({ "x-svc-challenge": "abc" });
    const ok = (r: SigV4ReceivedRequest, amzDate = req.amzDate, secret = CREDS.secretAccessKey) =>
      sigV4SignatureMatches(r, req.auth, amzDate, secret);
    expect(ok({ ...req, body: Buffer.from("Action=GetCallerIdentity&Version=2011-06-16") })).toBe(false);
    const swapped = req.headers.map(([n, v]) => [n, n === "x-svc-challenge" ? "abd" : v] as const);
    expect(ok({ ...req, headers: swapped })).toBe(false);
    expect(ok(req, "20261123T010204Z")).toBe(false);
    expect(ok(req, req.amzDate, `${CREDS.secretAccessKey}x`)).toBe(false);
    expect(ok(req)).toBe(true);
  });

  it("matches the signer on paths and query strings that need encoding", async () => {
    const smithy = new SignatureV4({
      service: "svc",
      region: "eu-west-1",
      credentials: CREDS,
      sha256: NodeSha256,
      applyChecksum: false,
    });
    const out = await smithy.sign(
      {
        method: "GET",
        protocol: "https:",
        hostname: "example.amazonaws.com",
        path: "/a%20b/c~d",
        query: { "z key": "v/1", a: "x*y", b: ["2", "1"] },
        headers: { host: "example.amazonaws.com", "x-multi": "  a   b  " },
      },
      { signingDate: DATE },
    );
    const auth = parseSigV4Authorization(out.headers["authorization"] as string);
    const req: SigV4ReceivedRequest = {
      method: "GET",
      path: "/a%20b/c~d",
      query: "z%20key=v%2F1&a=x%2Ay&b=2&b=1",
      headers: Object.entries(out.headers).map(([k, v]) => [k, String(v)] as const),
      body: new Uint8Array(),
    };
    expect(sigV4Signature(req, auth, out.headers["x-amz-date"] as string, CREDS.secretAccessKey)).toBe(
      auth.signature,
    );
  });
});

describe("parseSigV4Authorization", () => {
  const good =
    "AWS4-HMAC-SHA256 Credential=AKIAUNITTEST00000001/20261123/us-east-1/sts/aws4_request, SignedHeaders=host;x-amz-date;x-svc-challenge, Signature=" +
    "a".repeat(64);
  it("reads a well-formed header", () => {
    expect(parseSigV4Authorization(good)).toEqual({
      accessKeyId: "AKIAUNITTEST00000001",
      date: "20261123",
      region: "us-east-1",
      service: "sts",
      signedHeaders: ["host", "x-amz-date", "x-svc-challenge"],
      signature: "a".repeat(64),
    });
  });
  it.each([
    ["another algorithm", good.replace("AWS4-HMAC-SHA256", "AWS4-ECDSA-P256-SHA256")],
    ["missing Signature", good.replace(/, Signature=.*/, "")],
    ["a repeated component", `${good}, Signature=${"b".repeat(64)}`],
    ["unsorted SignedHeaders", good.replace("host;x-amz-date", "x-amz-date;host")],
    ["duplicate SignedHeaders", good.replace("host;x-amz-date", "host;host;x-amz-date")],
    ["short signature", good.slice(0, -1)],
    ["bad scope terminator", good.replace("aws4_request", "aws4_requests")],
    ["lower-case access key", good.replace("AKIAUNITTEST00000001", "akiaunittest00000001")],
  ])("refuses %s without echoing the header", (_why, value) => {
    let err: unknown;
    try {
      parseSigV4Authorization(value);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BadParameterError);
    expect(String(err)).not.toContain("AKIAUNITTEST");
    expect(String(err)).not.toContain("aaaaaaaa");
  });
});

describe("parseAmzDate", () => {
  it("parses the basic ISO form and refuses others", () => {
    expect(parseAmzDate("20261123T010203Z").toISOString()).toBe("2026-11-23T01:02:03.000Z");
    for (const bad of [
      "2026-11-23T01:02:03Z",
      "20261323T010203Z",
      "20260230T010203Z",
      "20261123T250203Z",
      "",
    ])
      expect(() => parseAmzDate(bad)).toThrow(BadParameterError);
  });
});
