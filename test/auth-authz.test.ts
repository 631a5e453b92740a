// Walks the authorization table: every RPC of svc.v1.AuthService, called over TLS 1.3 by an
// anonymous client, a user, an admin (by RBAC rules, not by role name), an agent, a bot and the
// operator's service identity.
// The expected access is written out here, compared with the code's table and docs/grpc.md, and
// then checked against what the running server actually does.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Client, Metadata, type MethodDefinition, type ServiceError, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateJwtKey } from "../core/ca/jwt.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { AUTHZ_TABLE, describeAccess } from "../server/auth/authz.ts";
import { agentMetadata, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { AUTH_RPC_NAMES, authServiceDefinition } from "../server/auth/proto.ts";
import { type AuthTestEnv, clientCert, startAuthEnv } from "./auth-fixture.ts";

const EXPECTED: Record<string, string> = {
  AuthenticateLocal: "unauthenticated",
  IssueUserCerts: "user",
  RegisterAgent: "unauthenticated",
  RegisterUsingIAMMethod: "unauthenticated",
  BootstrapAgentIdentity: "unauthenticated",
  RenewAgentIdentity: "unauthenticated",
  AuthenticateSPIFFE: "unauthenticated",
  GetSession: "user",
  DeleteSession: "user",
  ListNodes: "user",
  ListUsers: "admin (users/list)",
  ListRoles: "admin (roles/list)",
  ListRecordings: "user",
  SearchAuditEvents: "admin (audit/list)",
  EmitAuditEvent: "agent or user",
  Heartbeat: "agent",
  UploadRecording: "agent",
  GetRecording: "user",
  BeginWebAuthnLogin: "unauthenticated",
  FinishWebAuthnLogin: "unauthenticated",
  BeginWebAuthnRegistration: "user",
  FinishWebAuthnRegistration: "user",
  ListWebAuthnDevices: "user",
  DeleteWebAuthnDevice: "user",
  RenameWebAuthnDevice: "user",
  GetPublicKeys: "unauthenticated",
  GetClusterInfo: "unauthenticated",
  CreateAgentIdentity: "admin (agent_identities/create)",
  ListAgentIdentities: "admin (agent_identities/list)",
  DeleteAgentIdentity: "admin (agent_identities/delete)",
  IssueWorkloadSVID: "bot",
  CreateUser: "admin (users/create)",
  DeleteUser: "admin (users/delete)",
  CreatePasswordReset: "admin (users/update)",
  ResetPassword: "unauthenticated",
  CreateJoinToken: "admin (tokens/create)",
  ListJoinTokens: "admin (tokens/list)",
  DeleteJoinToken: "admin (tokens/delete)",
  AuthorizeNodeLogin: "user",
  AuthorizeSshLogin: "agent",
  DeleteNode: "admin (nodes/delete)",
  RevokeUserSessions: "admin (users/delete) or operator",
  GetJoinTokenUsage: "admin (tokens/list) or operator",
  CheckNodeRegistered: "agent",
  CreateLock: "admin (locks/create)",
  ListLocks: "admin (locks/list)",
  DeleteLock: "admin (locks/delete)",
  WatchTrust: "admin (locks/list) or agent",
  ExportKrl: "admin (locks/list) or agent",
  RenewNodeCredentials: "agent",
  RotateCertAuthority: "admin (cert_authorities/update)",
  ListCertAuthorities: "admin (cert_authorities/list)",
  WatchSessions: "agent",
  WatchInventory: "agent",
  CreateSSOAuthRequest: "unauthenticated",
  BindSSOAuthRequest: "unauthenticated",
  ValidateSSOResponse: "unauthenticated",
  ExchangeSSOCode: "unauthenticated",
  ListApps: "user",
  CreateAppSession: "user",
  ExchangeAppSession: "agent",
  GetAppSession: "agent",
  DeleteAppSession: "agent",
  LogoutApps: "user",
};

type CallerName = "anonymous" | "user" | "admin" | "agent" | "bot" | "operator";
const CALLERS: CallerName[] = ["anonymous", "user", "admin", "agent", "bot", "operator"];

function admitted(access: string, caller: CallerName): boolean {
  if (access === "unauthenticated") return true;
  const kinds = access.split(" or ");
  if (caller === "admin") return kinds.some((k) => k === "user" || k.startsWith("admin"));
  return kinds.includes(caller);
}

let env: AuthTestEnv;
let agent: AuthServiceClient;
let bot: AuthServiceClient;
let operator: AuthServiceClient;
let proxy: AuthServiceClient;
/**
 * RPCs whose handler admits, of the agent kind, only registered nodes and proxies: the walker has a
 * node certificate but no registration, so the proxy identity speaks for the agent kind there
 * (test/krl.test.ts covers the unknown node).
 */
const AGENT_AS_PROXY = new Set([
  "ExportKrl",
  "WatchSessions",
  "WatchInventory",
  // Proxy identities only (test/auth-apps.test.ts refuses a node there).
  "ExchangeAppSession",
  "GetAppSession",
  "DeleteAppSession",
]);

beforeAll(async () => {
  const appKey = await generateJwtKey();
  env = await startAuthEnv({ apps: { publicUrl: "https://proxy.test", signingKey: () => appKey } });
  agent = await env.agentClient("walker");
  bot = await env.botClient("ci-bot");
  // The operator's service identity: a host-CA certificate for svc://operator/<name>.
  const cert = await clientCert(env.pki.hostCa, { service: "operator", name: "op-0" });
  operator = createAuthClient({
    address: env.auth.address,
    caPems: [env.pki.hostCa.certPem],
    serverName: "localhost",
    ...cert,
  });
  proxy = createAuthClient({
    address: env.auth.address,
    caPems: [env.pki.hostCa.certPem],
    serverName: "localhost",
    ...(await clientCert(env.pki.hostCa, { service: "proxy", name: "p0" })),
  });
  env.clients.push(operator, proxy);
});
afterAll(async () => {
  await env?.close();
});

/** Calls any RPC (any streaming shape) with an empty request; resolves with the final status. */
function callAny(client: Client, rpc: string, md: Metadata): Promise<{ code: number; details: string }> {
  const def = (authServiceDefinition as unknown as Record<string, MethodDefinition<unknown, unknown>>)[rpc];
  if (!def) throw new Error(`no method ${rpc}`);
  const ser = def.requestSerialize as (v: unknown) => Buffer;
  const de = def.responseDeserialize as (b: Buffer) => unknown;
  const deadline = { deadline: Date.now() + 20_000 };
  return new Promise((resolve) => {
    const done = (err: ServiceError | null) =>
      resolve(err ? { code: err.code, details: err.details } : { code: status.OK, details: "" });
    if (!def.requestStream && !def.responseStream) {
      client.makeUnaryRequest(def.path, ser, de, {}, md, deadline, (err) => done(err));
    } else if (def.requestStream && !def.responseStream) {
      const call = client.makeClientStreamRequest(def.path, ser, de, md, deadline, (err) => done(err));
      call.end();
    } else {
      const call = def.requestStream
        ? client.makeBidiStreamRequest(def.path, ser, de, md, deadline)
        : client.makeServerStreamRequest(def.path, ser, de, {}, md, deadline);
      if ("end" in call && typeof call.end === "function") call.end();
      // A watch stream (WatchTrust, WatchInventory...) stays open once admitted: its first
      // message is the admission, so the walker cancels there instead of waiting for the deadline.
      call.on("data", () => {
        if (!def.requestStream) {
          done(null);
          call.cancel();
        }
      });
      call.on("error", (err: ServiceError) => done(err));
      call.on("status", (s: { code: number }) => {
        if (s.code === status.OK) done(null);
      });
    }
  });
}

describe("authorization table", () => {
  it("the code, docs/grpc.md and this test agree on every RPC", () => {
    expect([...AUTH_RPC_NAMES].sort()).toEqual(Object.keys(EXPECTED).sort());
    const fromCode = Object.fromEntries(Object.entries(AUTHZ_TABLE).map(([k, v]) => [k, describeAccess(v)]));
    expect(fromCode).toEqual(EXPECTED);
    const whole = readFileSync(join(import.meta.dirname, "..", "docs", "grpc.md"), "utf8");
    const doc = whole.split("## Authorization table")[1]?.split("\n## ")[0] ?? "";
    const fromDoc: Record<string, string> = {};
    for (const m of doc.matchAll(/^\|\s*([A-Z][A-Za-z]+)\s*\|\s*([^|\n]+?)\s*\|$/gm)) {
      if (m[1] && m[2] && m[1] !== "RPC") fromDoc[m[1]] = m[2].trim();
    }
    expect(fromDoc).toEqual(EXPECTED);
  });

  for (const rpc of Object.keys(EXPECTED)) {
    it(`${rpc}: ${EXPECTED[rpc]}`, async () => {
      const access = EXPECTED[rpc] as string;
      for (const caller of CALLERS) {
        let client: Client = env.client as unknown as Client;
        let md = new Metadata();
        if (caller === "user" || caller === "admin") {
          // A fresh session per call: DeleteSession would otherwise end the next calls' session.
          const { id } = await env.auth.service.sessions.create(caller === "admin" ? "alice" : "bob");
          md = userMetadata(id);
        } else if (caller === "agent" && AGENT_AS_PROXY.has(rpc)) {
          client = proxy as unknown as Client;
          md = agentMetadata("proxy:p0");
        } else if (caller === "agent") {
          client = agent as unknown as Client;
          md = agentMetadata("walker");
        } else if (caller === "bot") {
          client = bot as unknown as Client;
          md = agentMetadata("ci-bot");
        } else if (caller === "operator") {
          client = operator as unknown as Client;
          md = agentMetadata("operator:op-0");
        }
        const got = await callAny(client, rpc, md);
        const denied = got.code === status.UNAUTHENTICATED || got.code === status.PERMISSION_DENIED;
        if (admitted(access, caller)) {
          expect(denied, `${rpc} as ${caller}: ${got.code} ${got.details}`).toBe(false);
        } else {
          const want = caller === "anonymous" ? status.UNAUTHENTICATED : status.PERMISSION_DENIED;
          expect(got.code, `${rpc} as ${caller}: ${got.details}`).toBe(want);
        }
      }
    });
  }
});
