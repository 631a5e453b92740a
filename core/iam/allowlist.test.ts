import { describe, expect, it } from "vitest";
import { BadParameterError } from "../errors.ts";
import { defaultStsEndpoints, normalizeHostPort, StsEndpointAllowlist, splitHostPort } from "./allowlist.ts";
import { stsEndpointForRegion } from "./sts-request.ts";

describe("STS endpoint allowlist", () => {
  const defaults = StsEndpointAllowlist.defaults();

  it("lists the global, regional, FIPS and China endpoints by default", () => {
    for (const host of [
      "sts.amazonaws.com",
      "sts.us-east-1.amazonaws.com",
      "sts-fips.us-west-2.amazonaws.com",
      "sts.eu-central-1.amazonaws.com",
      "sts.cn-north-1.amazonaws.com.cn",
      "sts.us-gov-west-1.amazonaws.com",
      "STS.US-EAST-1.AMAZONAWS.COM",
      "sts.us-east-1.amazonaws.com:443",
    ])
      expect(defaults.match(host), host).toBeDefined();
    expect(defaults.match("sts.us-east-1.amazonaws.com:443")).toBe("sts.us-east-1.amazonaws.com");
    expect(new Set(defaultStsEndpoints()).size).toBe(defaultStsEndpoints().length);
  });

  it("agrees with the endpoint the node picks for a region", () => {
    for (const region of ["us-east-1", "ap-southeast-2", "cn-northwest-1", "us-gov-east-1"])
      expect(defaults.match(stsEndpointForRegion(region))).toBeDefined();
  });

  it.each([
    "127.0.0.1",
    "169.254.169.254",
    "[fd00:ec2::254]",
    "localhost",
    "sts.amazonaws.com:8443",
    "sts.amazonaws.com.",
    "sts.amazonaws.com.evil.example",
    "evil.example/sts.amazonaws.com",
    "sts.amazonaws.com@127.0.0.1",
    "sts.amazonaws.com\t",
    "sts.amazonaws.com:0443",
    "sts.us-east-1.amazonaws.com.cn",
    "",
  ])("refuses %j", (host) => {
    expect(defaults.match(host)).toBeUndefined();
  });

  it("takes explicit host:port entries, such as a local STS", () => {
    const list = new StsEndpointAllowlist(["127.0.0.1:8443", "[::1]:9443", "Sts.Example.Test"]);
    expect(list.match("127.0.0.1:8443")).toBe("127.0.0.1:8443");
    expect(list.match("127.0.0.1")).toBeUndefined();
    expect(list.match("[::1]:9443")).toBe("[::1]:9443");
    expect(list.match("sts.example.test:443")).toBe("sts.example.test");
    expect(splitHostPort("[::1]:9443")).toEqual({ hostname: "::1", port: 9443 });
    expect(splitHostPort("sts.example.test")).toEqual({ hostname: "sts.example.test", port: 443 });
  });

  it("refuses configuration that is not host[:port]", () => {
    for (const bad of [["https://sts.amazonaws.com"], ["sts.amazonaws.com/"], ["a:70000"], ["a b"], []])
      expect(() => new StsEndpointAllowlist(bad)).toThrow(BadParameterError);
    expect(normalizeHostPort("x".repeat(300))).toBeUndefined();
  });
});
