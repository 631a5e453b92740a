// The pure parts of the node join: token syntax, peer addresses, advertised address resolution.
import { describe, expect, it } from "vitest";
import { BadParameterError } from "../../core/errors.ts";
import { joinSecretHash, parseJoinToken, peerIp, resolveAddresses } from "./join-agent.ts";

describe("parseJoinToken", () => {
  it("splits at the last dot (names may hold dots)", () => {
    expect(parseJoinToken("node-1.abc_DEF-9")).toEqual({ name: "node-1", secret: "abc_DEF-9" });
    expect(parseJoinToken("team.a.s3cr3t")).toEqual({ name: "team.a", secret: "s3cr3t" });
  });
  it("refuses what is not <name>.<secret>", () => {
    for (const t of ["", "nodot", ".secret", "name.", "Upper.x", "name.sec ret", `a.${"x".repeat(2000)}`]) {
      expect(() => parseJoinToken(t), t).toThrow(BadParameterError);
    }
  });
  it("hashes secrets as sha256 hex", () => {
    expect(joinSecretHash("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("addresses", () => {
  it("reads gRPC peer strings", () => {
    expect(peerIp("ipv4:10.0.0.5:41234")).toBe("10.0.0.5");
    expect(peerIp("127.0.0.1:5")).toBe("127.0.0.1");
    expect(peerIp("[::1]:5")).toBe("::1");
    expect(peerIp("[::ffff:10.1.2.3]:5")).toBe("10.1.2.3");
    expect(peerIp("unix:/tmp/x")).toBeUndefined();
  });
  it("keeps explicit hosts, fills unspecified ones from the peer, refuses bad ports", () => {
    expect(resolveAddresses(["node.example:3022", "0.0.0.0:3022"], "ipv4:10.0.0.5:1")).toEqual([
      "node.example:3022",
      "10.0.0.5:3022",
    ]);
    expect(resolveAddresses(["[::]:22"], "[fd00::7]:9")).toEqual(["[fd00::7]:22"]);
    expect(() => resolveAddresses([], "1.2.3.4:5")).toThrow(BadParameterError);
    expect(() => resolveAddresses(["host:0"], "1.2.3.4:5")).toThrow(BadParameterError);
    expect(() => resolveAddresses(["host"], "1.2.3.4:5")).toThrow(BadParameterError);
  });
});
