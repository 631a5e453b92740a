// Transport and identity of the auth listener, with real TLS clients: TLS 1.3 only, client
// certificates optional but verified, x-agent-id trusted only with the matching certificate.
import { connect, type TLSSocket } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { status } from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { type AuthTestEnv, clientCert, makePki, PASSWORD, startAuthEnv, statusOf } from "./auth-fixture.ts";

let env: AuthTestEnv;

beforeAll(async () => {
  env = await startAuthEnv();
});
afterAll(async () => {
  await env?.close();
});

function rawTls(
  maxVersion: "TLSv1.2" | "TLSv1.3",
): Promise<{ ok: boolean; protocol?: string; error?: string }> {
  return new Promise((resolve) => {
    const socket: TLSSocket = connect({
      host: "127.0.0.1",
      port: env.auth.port,
      servername: "localhost",
      ca: env.pki.hostCa.certPem,
      ALPNProtocols: ["h2"],
      minVersion: "TLSv1.2",
      maxVersion,
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ok: false, error: "timeout" });
    }, 10_000);
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      const protocol = socket.getProtocol() ?? undefined;
      socket.destroy();
      resolve({ ok: true, ...(protocol ? { protocol } : {}) });
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      resolve({ ok: false, error: err.message });
    });
  });
}

describe("auth transport", () => {
  it("speaks TLS 1.3 with a client that offers it", async () => {
    const r = await rawTls("TLSv1.3");
    expect(r).toEqual({ ok: true, protocol: "TLSv1.3" });
  });

  it("refuses a TLS 1.2 client during the handshake", async () => {
    const r = await rawTls("TLSv1.2");
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/version|protocol/i);
  });

  it("serves public RPCs to a client without a certificate", async () => {
    const info = await callUnary(env.client, "GetClusterInfo", {});
    expect(info.cluster_name).toBe("test");
  });

  it("accepts x-agent-id only with a client certificate issued to that agent", async () => {
    const agent = await env.agentClient("node-1");
    const hb = {
      hostname: "node-1",
      addresses: ["127.0.0.1:3022"],
      labels: { env: "dev" },
      version: "0.1.0",
    };
    const ok = await callUnary(agent, "Heartbeat", hb, agentMetadata("node-1"));
    expect(ok.interval_seconds).toBeGreaterThan(0);

    // Forged: no certificate at all.
    const forgedNoCert = await statusOf(callUnary(env.client, "Heartbeat", hb, agentMetadata("node-1")));
    expect(forgedNoCert.code).toBe(status.UNAUTHENTICATED);
    // Forged: a real agent certificate, someone else's id.
    const other = await statusOf(callUnary(agent, "Heartbeat", hb, agentMetadata("node-2")));
    expect(other.code).toBe(status.UNAUTHENTICATED);
    // Forged: a certificate for the same id from a CA auth does not trust.
    const foreign = await makePki();
    const foreignCert = await clientCert(foreign.hostCa, { agent: "node-1" });
    const foreignClient = createAuthClient({
      address: env.auth.address,
      caPems: [env.pki.hostCa.certPem],
      ...foreignCert,
    });
    env.clients.push(foreignClient);
    const viaForeign = await statusOf(callUnary(foreignClient, "Heartbeat", hb, agentMetadata("node-1")));
    expect(viaForeign.code).toBe(status.UNAUTHENTICATED);
  });

  it("treats a service certificate as agent <service>:<name>", async () => {
    const c = await clientCert(env.pki.hostCa, { service: "proxy", name: "p1" });
    const proxy = createAuthClient({ address: env.auth.address, caPems: [env.pki.hostCa.certPem], ...c });
    env.clients.push(proxy);
    // Admitted as an agent (the interceptor lets agents call EmitAuditEvent, not bots); the handler
    // then finds no event type on the proxy's list (server/auth/audit-emit.ts).
    const ev = await statusOf(
      callUnary(
        proxy,
        "EmitAuditEvent",
        { event_type: "session.start", user_name: "bob", fields_json: '{"k":"v"}' },
        agentMetadata("proxy:p1"),
      ),
    );
    expect(ev.code).toBe(status.PERMISSION_DENIED);
    expect(ev.details).toMatch(/event_type session.start is not one this caller emits/);
  });

  it("lets the proxy act for a user on its own connection, but not with a forged x-agent-id", async () => {
    const c = await clientCert(env.pki.hostCa, { service: "proxy", name: "p2" });
    const proxy = createAuthClient({ address: env.auth.address, caPems: [env.pki.hostCa.certPem], ...c });
    env.clients.push(proxy);
    const login = await callUnary(
      proxy,
      "AuthenticateLocal",
      { username: "bob", password: PASSWORD, client_address: "192.0.2.1" },
      agentMetadata("proxy:p2"),
    );
    const both = (agentId: string) => {
      const md = userMetadata(login.session?.session_id ?? "");
      md.set("x-agent-id", agentId);
      return md;
    };
    expect((await callUnary(proxy, "GetSession", {}, both("proxy:p2"))).username).toBe("bob");
    const forged = await statusOf(callUnary(proxy, "GetSession", {}, both("proxy:other")));
    expect(forged.code).toBe(status.UNAUTHENTICATED);
    const noCert = await statusOf(callUnary(env.client, "GetSession", {}, both("proxy:p2")));
    expect(noCert.code).toBe(status.UNAUTHENTICATED);
  });

  it("refuses a malformed or unknown bearer token instead of treating the call as anonymous", async () => {
    const bad = await statusOf(callUnary(env.client, "GetClusterInfo", {}, userMetadata("not-a-session")));
    expect(bad.code).toBe(status.UNAUTHENTICATED);
    const unknown = await statusOf(callUnary(env.client, "GetSession", {}, userMetadata("A".repeat(43))));
    expect(unknown.code).toBe(status.UNAUTHENTICATED);
  });

  it("answers the standard health check", async () => {
    const def = protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      grpc: { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => grpc.Client } } };
    };
    const creds = grpc.credentials.createSsl(Buffer.from(env.pki.hostCa.certPem));
    const hc = new pkg.grpc.health.v1.Health(env.auth.address, creds) as unknown as {
      Check(req: { service: string }, cb: (err: Error | null, res?: { status: string }) => void): void;
      close(): void;
    };
    const res = await new Promise<{ status: string } | undefined>((resolve, reject) =>
      hc.Check({ service: "svc.v1.AuthService" }, (err, r) => (err ? reject(err) : resolve(r))),
    );
    hc.close();
    expect(res?.status).toBe("SERVING");
  });
});
