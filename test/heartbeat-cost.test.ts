// What one Heartbeat costs auth in backend work, through the real auth server over gRPC/TLS with
// a joined agent: the node's registration is read once by the interceptor and handed to the
// handler (never a second read in the same call), and a removed node is refused on its next call.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../core/backend/backend.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { type AgentAuthEnv, startAgentAuthEnv } from "./agent-fixture.ts";
import { statusOf } from "./auth-fixture.ts";

let env: AgentAuthEnv;
/** backend reads and writes by key, since the last reset */
const gets: string[] = [];
const puts: string[] = [];

function counting(backend: Backend): Backend {
  return new Proxy(backend, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "get" && typeof value === "function")
        return (key: string, ...rest: unknown[]) => {
          gets.push(key);
          return value.call(target, key, ...rest);
        };
      if (prop === "put" && typeof value === "function")
        return (key: string, ...rest: unknown[]) => {
          puts.push(key);
          return value.call(target, key, ...rest);
        };
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

beforeAll(async () => {
  env = await startAgentAuthEnv({ wrapBackend: counting });
});

afterAll(async () => {
  await env?.close();
});

async function joinAgent(hostname: string) {
  const tls = generateEcdsaP256();
  const res = await callUnary(env.client, "RegisterAgent", {
    token: await env.addToken(`cost-${hostname}`),
    hostname,
    host_ssh_public_key: generateSshKeyPair("ed25519").publicLine,
    tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
    labels: {},
    addresses: ["127.0.0.1:3022"],
  });
  const id = res.agent_id ?? "";
  const client = createAuthClient({
    address: env.address,
    caPems: res.host_ca_pems ?? [],
    serverName: env.serverName,
    certPem: res.tls_certificate_pem ?? "",
    keyPem: privateKeyToPem(tls.privateKey),
  });
  const beat = () =>
    callUnary(
      client,
      "Heartbeat",
      { hostname, addresses: ["127.0.0.1:3022"], labels: {}, version: "t" },
      agentMetadata(id),
    );
  return { id, client, beat };
}

describe("Heartbeat backend cost", () => {
  it("reads the registration once for the checks (the interceptor's read is handed on)", async () => {
    const agent = await joinAgent("cost-1");
    try {
      gets.length = 0;
      puts.length = 0;
      await agent.beat();
      const regKey = `agents/${encodeURIComponent(agent.id)}`;
      const regReads = gets.filter((k) => k === regKey).length;
      // The interceptor's read serves checkHeartbeat too; a record write is followed by one more
      // read (a DeleteNode that ran meanwhile takes the record back out).
      const wrote = puts.includes(`nodes/${encodeURIComponent(agent.id)}`);
      expect(regReads).toBe(wrote ? 2 : 1);
    } finally {
      agent.client.close();
    }
  });

  it("a removed node is refused on its next call (nothing is kept across calls)", async () => {
    const agent = await joinAgent("cost-2");
    try {
      await agent.beat();
      const admin = userMetadata(await env.login("alice"));
      await callUnary(env.client, "DeleteNode", { node: agent.id }, admin);
      expect(await statusOf(agent.beat())).toEqual({
        code: status.UNAUTHENTICATED,
        details: "this node has been removed",
      });
    } finally {
      agent.client.close();
    }
  });
});
