// The gRPC target and service config of every auth client (server/auth/client.ts): one address
// as is, several IP literals as a static list, names refused in a list; every retried method is
// a real RPC of the service.
import { describe, expect, it } from "vitest";
import { AUTH_SERVICE_CONFIG, authTarget, firstAuthAddress, RETRIED_ONCE, RETRIED_READS } from "./client.ts";
import { authPackageDefinition } from "./proto.ts";

describe("authTarget", () => {
  it("keeps one address (DNS name or IP) as it is", () => {
    expect(authTarget("auth.example.com:3025")).toBe("auth.example.com:3025");
    expect(authTarget("10.0.0.5:3025")).toBe("10.0.0.5:3025");
  });

  it("turns a list of IPv4 or IPv6 literals into grpc-js's static target", () => {
    expect(authTarget("10.0.0.5:3025, 10.0.0.6:3026")).toBe("ipv4:10.0.0.5:3025,10.0.0.6:3026");
    expect(authTarget("[::1]:3025,[fd00::2]:3025")).toBe("ipv6:[::1]:3025,[fd00::2]:3025");
  });

  it("refuses a list of names, or of mixed families, saying what to do instead", () => {
    expect(() => authTarget("a.example:3025,b.example:3025")).toThrow(/one DNS name/);
    expect(() => authTarget("10.0.0.5:3025,[::1]:3025")).toThrow(/all be IPv4 or all IPv6/);
    expect(() => authTarget(" , ")).toThrow(/no auth address/);
  });

  it("firstAuthAddress is the first entry (what a raw TCP passthrough dials)", () => {
    expect(firstAuthAddress("10.0.0.5:3025,10.0.0.6:3025")).toBe("10.0.0.5:3025");
    expect(firstAuthAddress("auth:3025")).toBe("auth:3025");
  });
});

describe("AUTH_SERVICE_CONFIG", () => {
  const config = JSON.parse(AUTH_SERVICE_CONFIG) as {
    loadBalancingConfig: Array<Record<string, unknown>>;
    methodConfig: Array<{
      name: Array<{ service: string; method: string }>;
      retryPolicy: { maxAttempts: number; retryableStatusCodes: string[] };
    }>;
  };
  const service = authPackageDefinition["svc.v1.AuthService"] as Record<string, unknown>;

  it("balances round-robin over every address", () => {
    expect(config.loadBalancingConfig).toEqual([{ round_robin: {} }]);
  });

  it("retries only UNAVAILABLE, and only methods the service has", () => {
    for (const m of config.methodConfig) {
      expect(m.retryPolicy.retryableStatusCodes).toEqual(["UNAVAILABLE"]);
      for (const n of m.name) {
        if (n.service === "grpc.health.v1.Health") continue;
        expect(Object.keys(service)).toContain(n.method);
      }
    }
  });

  it("gives logins and certificates one retry, never writes or one-time steps", () => {
    const once = config.methodConfig.find((m) => m.name.some((n) => n.method === "AuthenticateLocal"));
    expect(once?.retryPolicy.maxAttempts).toBe(2);
    expect([...RETRIED_ONCE].sort()).toEqual(["AuthenticateLocal", "IssueUserCerts"]);
    const retried = new Set<string>([...RETRIED_READS, ...RETRIED_ONCE]);
    for (const never of [
      "FinishWebAuthnLogin",
      "ResetPassword",
      "RegisterAgent",
      "CreateUser",
      "DeleteSession",
      "EmitAuditEvent",
      "CreateJoinToken",
    ])
      expect(retried.has(never)).toBe(false);
  });
});
