import { describe, expect, it } from "vitest";
import { checkConfig, defaultConfig, splitHostPort } from "./config.ts";

describe("config", () => {
  const good = defaultConfig({ clusterName: "prod-1", publicHost: "svc.example.com" });

  it("fills defaults and round-trips the default config", () => {
    expect(good.auth.session_ttl).toBe("12h");
    expect(good.auth.node_cert_ttl).toBe("24h");
    expect(good.auth.lockout).toEqual({ max_failures: 5, duration: "15m" });
    expect(good.proxy.oidc_issuer_url).toBe("https://svc.example.com:3080");
    expect(checkConfig(structuredClone(good))).toEqual(good);
  });

  it.each([
    [{ cluster_name: "Bad Name" }, /cluster_name/],
    [{ auth: { ...good.auth, listen_addr: "no-port" } }, /auth\.listen_addr/],
    [{ proxy: { ...good.proxy, oidc_issuer_url: "http://plain" } }, /proxy\.oidc_issuer_url/],
    [{ backend: { type: "mysql", path: "x" } }, /backend/],
    [{ extra: true }, /extra|additional/i],
    [{ auth: { ...good.auth, lockout: { max_failures: 0, duration: "1m" } } }, /auth\.lockout\.max_failures/],
    [{ auth: { ...good.auth, session_ttl: "2m" } }, /auth\.session_ttl: must be between 5m and 30d/],
    [{ auth: { ...good.auth, session_ttl: "forever" } }, /auth\.session_ttl/],
    [{ auth: { ...good.auth, node_cert_ttl: "4m" } }, /auth\.node_cert_ttl: must be between 5m and 90d/],
    [{ auth: { ...good.auth, node_cert_ttl: "91d" } }, /auth\.node_cert_ttl: must be between 5m and 90d/],
    [{ auth: { ...good.auth, node_cert_ttl: "a day" } }, /auth\.node_cert_ttl/],
    [{ proxy: { ...good.proxy, trusted_proxies: ["10.0.0.0/33"] } }, /proxy\.trusted_proxies/],
    [{ proxy: { ...good.proxy, trusted_proxies: ["lb.example.com"] } }, /proxy\.trusted_proxies/],
    [{ proxy: { ...good.proxy, public_tls: { cert_file: "tls.crt" } } }, /proxy\.public_tls/],
    [
      { proxy: { ...good.proxy, public_tls: { cert_file: "a", key_file: "b", ca: "c" } } },
      /proxy\.public_tls/,
    ],
  ])("names the failing field (%#)", (patch, message) => {
    expect(() => checkConfig({ ...structuredClone(good), ...patch })).toThrow(message);
  });

  it("takes trusted proxies as addresses and CIDRs", () => {
    const c = checkConfig({
      ...structuredClone(good),
      proxy: { ...good.proxy, trusted_proxies: ["10.0.0.0/8", "192.0.2.1", "fd00::/8"] },
    });
    expect(c.proxy.trusted_proxies).toEqual(["10.0.0.0/8", "192.0.2.1", "fd00::/8"]);
  });

  it("takes proxy.public_tls as a certificate file and a key file", () => {
    const c = checkConfig({
      ...structuredClone(good),
      proxy: { ...good.proxy, public_tls: { cert_file: "/tls/tls.crt", key_file: "/tls/tls.key" } },
    });
    expect(c.proxy.public_tls).toEqual({ cert_file: "/tls/tls.crt", key_file: "/tls/tls.key" });
  });

  it("splits host:port including bracketed IPv6", () => {
    expect(splitHostPort("127.0.0.1:3025")).toEqual({ host: "127.0.0.1", port: 3025 });
    expect(splitHostPort("[::1]:3080")).toEqual({ host: "::1", port: 3080 });
  });
});
