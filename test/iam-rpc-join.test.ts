// RegisterUsingIAMMethod over the real auth server (TLS 1.3, a real gRPC bidi stream): the node
// gets a challenge, signs sts:GetCallerIdentity with it (AWS's SigV4), auth checks and forwards
// to the local STS stand-in (HTTPS, verifies SigV4 like STS) named by the allowlist, then issues
// the same node credentials as RegisterAgent. Refused: an unlisted STS host (never dialled), a
// replayed proof, an ARN the token does not allow, a bot token. Every outcome is audited.
import { type AddressInfo, createServer, type Server } from "node:net";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, verifyX509Leaf } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { type AwsCredentials, buildSignedStsRequest, httpsStsTransport } from "../core/iam/index.ts";
import { API_VERSION } from "../core/resources/index.ts";
import type { RegisterAgentResponse__Output } from "../proto/generated/svc/v1/RegisterAgentResponse.ts";
import type { RegisterUsingIAMMethodResponse__Output } from "../proto/generated/svc/v1/RegisterUsingIAMMethodResponse.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { type MachineEnv, startMachineEnv } from "./bot-fixture.ts";
import { type StsTestPrincipal, type StsTestServer, startStsServer } from "./harness/sts.ts";

const ACCOUNT = "123456789012";
const NODE: StsTestPrincipal = {
  accessKeyId: "ASIATESTRPCNODE00001",
  secretAccessKey: "rpc-node-secret-key-for-tests-only-000000",
  sessionToken: "rpc-node-session-token-for-tests-only",
  account: ACCOUNT,
  arn: `arn:aws:sts::${ACCOUNT}:assumed-role/node-role/i-0aaaabbbbccccdddd`,
  userId: "AROATESTNODEROLE0002:i-0aaaabbbbccccdddd",
};
const OTHER: StsTestPrincipal = {
  accessKeyId: "AKIATESTRPCOTHER0002",
  secretAccessKey: "rpc-other-secret-key-for-tests-only-00000",
  account: ACCOUNT,
  arn: `arn:aws:iam::${ACCOUNT}:user/mallory`,
  userId: "AIDATESTRPCOTHER0002",
};
const creds = (p: StsTestPrincipal): AwsCredentials => ({
  accessKeyId: p.accessKeyId,
  secretAccessKey: p.secretAccessKey,
  ...(p.sessionToken ? { sessionToken: p.sessionToken } : {}),
});

let sts: StsTestServer;
let env: MachineEnv;
let counter: Server;
let counterPort = 0;
let counterConnections = 0;

beforeAll(async () => {
  sts = await startStsServer({ principals: [NODE, OTHER] });
  counter = createServer((s) => {
    counterConnections++;
    s.destroy();
  });
  await new Promise<void>((r) => counter.listen(0, "127.0.0.1", r));
  counterPort = (counter.address() as AddressInfo).port;
  env = await startMachineEnv({
    stsEndpoints: [sts.hostPort],
    stsTransport: httpsStsTransport({ ca: sts.caPem, timeoutMs: 20_000 }),
  });
  const expires = new Date(Date.now() + 3600_000).toISOString();
  await env.source.apply({
    apiVersion: API_VERSION,
    kind: "JoinToken",
    metadata: { name: "aws-nodes" },
    spec: {
      roles: ["node"],
      join_method: "iam",
      allow: [{ aws_account: ACCOUNT, aws_arn: `arn:aws:sts::${ACCOUNT}:assumed-role/node-role/*` }],
      expires,
      node_labels: { cloud: "aws" },
    },
  });
});

afterAll(async () => {
  await env?.close();
  await sts?.close();
  await new Promise<void>((r) => (counter ? counter.close(() => r()) : r()));
});

interface JoinOutcome {
  credentials?: RegisterAgentResponse__Output;
  challenge?: string;
  proof?: Buffer;
  code: number;
  details: string;
}

/** One RegisterUsingIAMMethod stream: init, then the proof `prove` builds from the challenge. */
function iamJoin(
  hostname: string,
  prove: (challenge: string) => Promise<Buffer>,
  token = "aws-nodes",
): Promise<JoinOutcome> {
  const call = env.client.RegisterUsingIAMMethod({ deadline: Date.now() + 60_000 });
  const out: JoinOutcome = { code: status.OK, details: "" };
  return new Promise((resolve) => {
    call.on("data", (m: RegisterUsingIAMMethodResponse__Output) => {
      if (m.step === "challenge" && m.challenge) {
        out.challenge = m.challenge;
        prove(m.challenge).then(
          (proof) => {
            out.proof = proof;
            call.write({ proof: { http_request: proof } });
          },
          (err: unknown) => {
            out.details = String(err);
            call.cancel();
          },
        );
      } else if (m.step === "credentials" && m.credentials) {
        out.credentials = m.credentials;
        call.end();
      }
    });
    call.on("error", (e: { code: number; details: string }) => {
      out.code = e.code;
      out.details = e.details;
      resolve(out);
    });
    call.on("status", (s: { code: number }) => {
      if (s.code === status.OK) resolve(out);
    });
    call.write({
      init: {
        token,
        hostname,
        host_ssh_public_key: generateSshKeyPair("ed25519").publicLine,
        tls_public_key_pem: generateEcdsaP256().publicKey.export({ format: "pem", type: "spki" }).toString(),
        labels: { team: "infra" },
        addresses: ["127.0.0.1:3022"],
        agentless: false,
      },
    });
  });
}

const signAs =
  (p: StsTestPrincipal, endpoint?: string) =>
  (challenge: string): Promise<Buffer> =>
    buildSignedStsRequest({
      challenge,
      credentials: creds(p),
      region: "us-east-1",
      clock: systemClock,
      endpoint: endpoint ?? sts.hostPort,
    });

async function joinEvents() {
  const admin = userMetadata(await env.adminSession());
  return (
    await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "node.join", user: "", limit: 100, offset: 0 },
      admin,
    )
  ).items;
}

describe("RegisterUsingIAMMethod", () => {
  let firstProof: Buffer | undefined;

  it("joins a node whose AWS identity the token allows, with the same credentials as a token join", async () => {
    const r = await iamJoin("iam-node-1", signAs(NODE));
    expect(r.details).toBe("");
    const c = r.credentials;
    expect(c?.agent_id).toMatch(/^[0-9a-f-]{36}$/);
    const host = parseSshCertificate(c?.host_ssh_certificate ?? "");
    expect(host.type).toBe("host");
    // The node ID and its (unique) hostname; never the addresses the node claims for itself.
    expect(host.principals).toEqual([c?.agent_id, "iam-node-1"]);
    const v = await verifyX509Leaf(c?.tls_certificate_pem ?? "", [env.cas.hostCa.certPem], {
      clock: systemClock,
      usage: "client",
    });
    expect(v.uris).toEqual([`svc://agent/${c?.agent_id}`]);
    expect(c?.user_ca_ssh_public_keys).toEqual([env.cas.sshUserCaPublicKey]);
    const reg = await env.backend.get(`agents/${encodeURIComponent(c?.agent_id ?? "")}`);
    expect(reg.value).toMatchObject({
      hostname: "iam-node-1",
      token: "aws-nodes",
      labels: { cloud: "aws", team: "infra" },
    });
    const ok = (await joinEvents()).find((e) => e.success === true && e.fields_json.includes("iam-node-1"));
    expect(JSON.parse(ok?.fields_json ?? "{}")).toMatchObject({
      method: "iam",
      aws_account: ACCOUNT,
      aws_arn: NODE.arn,
      agent_id: c?.agent_id,
    });
    firstProof = r.proof;
    // An IAM token is not one-time: each proof is bound to its own challenge.
    const second = await iamJoin("iam-node-2", signAs(NODE));
    expect(second.credentials?.agent_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("refuses a proven node under a hostname another node holds (any case), and audits it", async () => {
    for (const hostname of ["iam-node-1", "IAM-NODE-1"]) {
      const r = await iamJoin(hostname, signAs(NODE));
      expect(r.credentials).toBeUndefined();
      expect(r.code).toBe(status.ALREADY_EXISTS);
      expect(r.details).toContain(`hostname "${hostname}" is already registered to another node`);
    }
    const fail = (await joinEvents()).find(
      (e) => e.success === false && e.fields_json.includes("IAM-NODE-1"),
    );
    expect(JSON.parse(fail?.fields_json ?? "{}")).toMatchObject({
      method: "iam",
      aws_arn: NODE.arn,
      reason: expect.stringContaining("already registered"),
    });
  });

  it("refuses an STS host that is not on the allowlist without ever connecting to it", async () => {
    const before = sts.requests();
    const r = await iamJoin("ssrf-node", signAs(NODE, `127.0.0.1:${counterPort}`));
    expect(r).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("not on the allowlist"),
    });
    expect(counterConnections).toBe(0);
    expect(sts.requests()).toBe(before);
    const fail = (await joinEvents()).find((e) => e.success === false && e.fields_json.includes("ssrf-node"));
    expect(fail?.fields_json).toContain("not on the allowlist");
  });

  it("refuses a replayed proof (it carries an earlier challenge)", async () => {
    expect(firstProof).toBeDefined();
    const before = sts.requests();
    const r = await iamJoin("replay-node", async () => firstProof as Buffer);
    expect(r).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("another challenge"),
    });
    expect(sts.requests()).toBe(before);
  });

  it("refuses an identity whose ARN the token does not allow, and audits who it was", async () => {
    const r = await iamJoin("mallory-node", signAs(OTHER));
    expect(r).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: "the AWS identity is not allowed by the join token's rules",
    });
    const fail = (await joinEvents()).find(
      (e) => e.success === false && e.fields_json.includes("mallory-node"),
    );
    expect(JSON.parse(fail?.fields_json ?? "{}")).toMatchObject({ aws_arn: OTHER.arn, aws_account: ACCOUNT });
  });

  it("refuses a request without the challenge header and an unknown token before any challenge", async () => {
    const unsigned = await iamJoin("nochallenge-node", async (challenge) => {
      const raw = (await signAs(NODE)(challenge)).toString("latin1");
      return Buffer.from(raw.replace(/\r\nx-svc-challenge: [^\r]*/i, ""), "latin1");
    });
    expect(unsigned.code).toBe(status.INVALID_ARGUMENT);
    const unknown = await iamJoin("ghost-node", signAs(NODE), "no-such-token");
    expect(unknown).toMatchObject({ code: status.PERMISSION_DENIED, details: "join token is not valid" });
    expect(unknown.challenge).toBeUndefined();
  });
});
