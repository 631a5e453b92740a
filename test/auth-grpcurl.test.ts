// grpcurl (a real, independent gRPC client, built at a pinned version by scripts/tools) sees the
// service through server reflection and gets an answer from the standard health service.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthTestEnv, startAuthEnv } from "./auth-fixture.ts";
import { toolPath } from "./harness/tools.ts";

const run = promisify(execFile);
let env: AuthTestEnv;
let dir: string;
let caFile: string;

beforeAll(async () => {
  env = await startAuthEnv();
  dir = await mkdtemp(join(tmpdir(), "svc-grpcurl-"));
  caFile = join(dir, "host-ca.pem");
  await writeFile(caFile, env.pki.hostCa.certPem);
});
afterAll(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function grpcurl(...args: string[]): Promise<string> {
  const r = await run(
    toolPath("grpcurl"),
    ["-cacert", caFile, "-authority", "localhost", "-max-time", "20", ...args],
    { timeout: 30_000 },
  );
  return r.stdout;
}

describe("grpcurl", () => {
  it("lists svc.v1.AuthService through reflection and describes its RPCs", async () => {
    const services = await grpcurl(env.auth.address, "list");
    expect(services.split("\n")).toContain("svc.v1.AuthService");
    expect(services).toContain("grpc.health.v1.Health");
    const methods = await grpcurl(env.auth.address, "list", "svc.v1.AuthService");
    expect(methods).toContain("svc.v1.AuthService.IssueUserCerts");
    expect(methods).toContain("svc.v1.AuthService.AuthenticateLocal");
  });

  it("calls health and a public RPC", async () => {
    const health = await grpcurl(
      "-d",
      '{"service":"svc.v1.AuthService"}',
      env.auth.address,
      "grpc.health.v1.Health/Check",
    );
    expect(JSON.parse(health)).toEqual({ status: "SERVING" });
    const info = await grpcurl(env.auth.address, "svc.v1.AuthService/GetClusterInfo");
    expect(JSON.parse(info)).toMatchObject({ cluster_name: "test", server_version: "0.1.0" });
  });
});
