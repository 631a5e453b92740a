// The grpc-js patch (patches/@grpc+grpc-js+*.patch): a server call's auth context is read once per
// HTTP/2 session, not decoded from the TLS socket on every call (getPeerCertificate cost ~31 µs
// per agent call). Two calls on one connection share the context; another connection with another
// client certificate gets its own, naming its own identity.
import {
  Metadata,
  makeGenericClientConstructor,
  Server,
  ServerInterceptingCall,
  type ServerInterceptor,
  type ServiceError,
} from "@grpc/grpc-js";
import { HealthImplementation, service as healthService } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authClientCredentials, authServerCredentials } from "../server/auth/tls.ts";
import { clientCert, makePki, type TestPki } from "./auth-fixture.ts";

type Check = (req: { service: string }, md: Metadata, cb: (err: ServiceError | null) => void) => void;
const HealthClient = makeGenericClientConstructor(healthService, "Health");

describe("grpc-js auth context per connection", () => {
  let pki: TestPki;
  let server: Server;
  let port = 0;
  const seen: Array<{ context: object; san: string | undefined }> = [];
  const clients: Array<{ close(): void }> = [];

  beforeAll(async () => {
    pki = await makePki();
    const record: ServerInterceptor = (_method, call) => {
      const context = call.getAuthContext();
      seen.push({ context, san: context.sslPeerCertificate?.subjectaltname });
      return new ServerInterceptingCall(call);
    };
    server = new Server({ interceptors: [record] });
    new HealthImplementation({ "": "SERVING" }).addToServer(server);
    const creds = authServerCredentials({
      certPem: pki.serverCertPem,
      keyPem: pki.serverKeyPem,
      clientCaPems: [pki.hostCa.certPem],
    });
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", creds, (err, p) => (err ? reject(err) : resolve(p))),
    );
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  });

  async function client(agent: string): Promise<Check> {
    const cert = await clientCert(pki.hostCa, { agent });
    const c = new HealthClient(
      `127.0.0.1:${port}`,
      authClientCredentials({ caPems: [pki.hostCa.certPem], ...cert }),
      { "grpc.ssl_target_name_override": "localhost" },
    ) as unknown as { Check: Check; close(): void };
    clients.push(c);
    return (req, md, cb) => c.Check(req, md, cb);
  }

  const call = (check: Check) =>
    new Promise<void>((resolve, reject) =>
      check({ service: "" }, new Metadata(), (err) => (err ? reject(err) : resolve())),
    );

  it("reuses one context for the calls of a connection, a new one for another certificate", async () => {
    const a = await client("agent-a");
    const b = await client("agent-b");
    await call(a);
    await call(a);
    await call(b);
    await call(a);
    expect(seen.map((s) => s.san)).toEqual([
      "URI:svc://agent/agent-a",
      "URI:svc://agent/agent-a",
      "URI:svc://agent/agent-b",
      "URI:svc://agent/agent-a",
    ]);
    const [a1, a2, b1, a3] = seen.map((s) => s.context);
    expect(a2).toBe(a1);
    expect(a3).toBe(a1);
    expect(b1).not.toBe(a1);
    expect(Object.isFrozen(a1)).toBe(true);
  });
});
