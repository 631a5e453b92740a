// The pure rules of single sign-on: claims_to_roles (exact values and "*" globs), claim values as
// strings, bounds, user names, the redirect rules (no open redirect), connector checks.
import { describe, expect, it } from "vitest";
import { API_VERSION, parseResource } from "../core/resources/index.ts";
import { semanticProblems } from "../core/resources/semantic.ts";
import {
  boundClaims,
  claimStrings,
  claimValueMatches,
  MAX_CLAIMS,
  mapClaimsToRoles,
  ssoUserName,
} from "../server/auth/sso/mapping.ts";
import { checkBrowserRedirect, checkCliRedirect, withCode } from "../server/auth/sso/redirect.ts";

describe("claims_to_roles", () => {
  it("matches exactly, or as a glob where * is any run of characters", () => {
    expect(claimValueMatches("dev", "dev")).toBe(true);
    expect(claimValueMatches("dev", "devs")).toBe(false);
    expect(claimValueMatches("dev*", "developers")).toBe(true);
    expect(claimValueMatches("*@example.com", "a@example.com")).toBe(true);
    expect(claimValueMatches("*@example.com", "a@example.com.evil")).toBe(false);
    expect(claimValueMatches("acme/*-admins", "acme/sre-admins")).toBe(true);
    expect(claimValueMatches("acme/*-admins", "acme/sre-admins/x")).toBe(false);
    expect(claimValueMatches("a*b*c", "abc")).toBe(true);
    expect(claimValueMatches("a*b*c", "acb")).toBe(false);
    expect(claimValueMatches("ab*ab", "ab")).toBe(false);
    expect(claimValueMatches("*", "")).toBe(true);
    // Only "*" is special: "?", "." and regular-expression syntax are literal.
    expect(claimValueMatches("a?c", "abc")).toBe(false);
    expect(claimValueMatches("a.c", "abc")).toBe(false);
    expect(claimValueMatches("^a.*$", "abc")).toBe(false);
    // Linear: a pathological pattern on a long value answers at once.
    const t = Date.now();
    expect(claimValueMatches(`${"*a".repeat(50)}b`, "a".repeat(100_000))).toBe(false);
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it("gives the roles of every matching rule once, in rule order; unknown claims match nothing", () => {
    const rules = [
      { claim: "groups", value: "dev*", roles: ["access"] },
      { claim: "teams", value: "acme/admins", roles: ["admin", "access"] },
      { claim: "missing", value: "*", roles: ["never"] },
      { claim: "__proto__", value: "*", roles: ["never"] },
    ];
    expect(mapClaimsToRoles(rules, { groups: ["ops", "developers"], teams: ["acme/admins"] })).toEqual([
      "access",
      "admin",
    ]);
    expect(mapClaimsToRoles(rules, { groups: ["sales"] })).toEqual([]);
    expect(mapClaimsToRoles(undefined, { groups: ["dev"] })).toEqual([]);
  });

  it("reads claim values as strings and bounds what an identity brings", () => {
    expect(claimStrings("a")).toEqual(["a"]);
    expect(claimStrings(true)).toEqual(["true"]);
    expect(claimStrings(["a", 1, { x: 1 }, null])).toEqual(["a", "1"]);
    expect(claimStrings({ a: 1 })).toEqual([]);
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`c${i}`, ["v"]]));
    expect(Object.keys(boundClaims(many))).toHaveLength(MAX_CLAIMS);
    expect(boundClaims({ big: ["x".repeat(2000), "ok"], empty: [] })).toEqual({ big: ["ok"] });
  });

  it("names users by the provider's value, lower-cased, or refuses it", () => {
    expect(ssoUserName("Alice@Example.COM")).toBe("alice@example.com");
    expect(ssoUserName("octo-cat")).toBe("octo-cat");
    for (const bad of ["", "a/b", "a b", "../x", "-x", "a\nb", "x".repeat(200), "ä@example.com"])
      expect(ssoUserName(bad), bad).toBeUndefined();
  });
});

describe("redirects after login", () => {
  it("sends a browser to a path on the proxy only", () => {
    expect(checkBrowserRedirect("")).toBe("/web/");
    expect(checkBrowserRedirect("/web/nodes?x=1#f")).toBe("/web/nodes?x=1#f");
    for (const bad of [
      "//evil.example",
      "/\\evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      "web/",
      "/%2Fevil.example",
      "/%5cevil.example",
      "/a\tb",
      `/${"a".repeat(2048)}`,
    ])
      expect(() => checkBrowserRedirect(bad), bad).toThrow(/path on this proxy/);
  });

  it("sends a CLI to its loopback listener only", () => {
    for (const ok of ["http://127.0.0.1:8000/callback", "http://[::1]:1/", "http://localhost:65535/cb?x=1"])
      expect(checkCliRedirect(ok)).toBe(ok);
    for (const bad of [
      "http://127.0.0.1/cb",
      "https://127.0.0.1:8000/cb",
      "http://127.0.0.2:8000/cb",
      "http://localhost.evil.example:8000/",
      "http://user@127.0.0.1:8000/",
      "http://127.0.0.1:8000@evil.example/",
      "http://127.0.0.1:0/",
      "http://127.0.0.1:70000/",
      "http://127.0.0.1:8000/#frag",
      "http://0x7f.0.0.1:8000/",
    ])
      expect(() => checkCliRedirect(bad), bad).toThrow(/loopback/);
    expect(withCode("http://127.0.0.1:8000/cb?x=1", "abc")).toBe("http://127.0.0.1:8000/cb?x=1&code=abc");
  });
});

describe("connector settings the schema cannot check", () => {
  const connector = (settings: Record<string, unknown>) =>
    parseResource({
      apiVersion: API_VERSION,
      kind: "Connector",
      metadata: { name: "c" },
      spec: {
        type: "oidc",
        display_name: "C",
        settings: { client_id: "x", redirect_url: "https://p/cb", issuer_url: "https://idp", ...settings },
        client_secret_ref: { file: "s" },
      },
    });
  it("requires https provider URLs and a session cap from 5m to 30d", () => {
    expect(semanticProblems(connector({}))).toEqual([]);
    expect(semanticProblems(connector({ issuer_url: "http://idp" }))).toEqual([
      "spec.settings.issuer_url: must be an https:// URL",
    ]);
    expect(semanticProblems(connector({ api_endpoint_url: "ftp://x" }))).toEqual([
      "spec.settings.api_endpoint_url: must be an https:// URL",
    ]);
    expect(semanticProblems(connector({ max_session_ttl: "4m" }))).toEqual([
      "spec.settings.max_session_ttl: must be between 5m and 30d",
    ]);
    expect(semanticProblems(connector({ max_session_ttl: "31d" }))).toHaveLength(1);
    expect(semanticProblems(connector({ max_session_ttl: "8h" }))).toEqual([]);
  });
});
