import { describe, expect, it } from "vitest";
import { defaultConfig } from "../config.ts";
import { proxyConfigFrom, relyingParty } from "./config.ts";

describe("proxyConfigFrom", () => {
  it("maps the daemon config to the proxy's settings", () => {
    const file = defaultConfig({ clusterName: "demo", publicHost: "svc.example.com" });
    const c = proxyConfigFrom(file, "1.2.3");
    expect(c).toMatchObject({
      listenHost: "0.0.0.0",
      listenPort: 3080,
      publicUrl: "https://svc.example.com:3080",
      clusterName: "demo",
      serverVersion: "1.2.3",
      clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
      oidcIssuerUrl: "https://svc.example.com:3080",
      bodyLimit: 65536,
    });
    expect(relyingParty(c)).toEqual({
      rpId: "svc.example.com",
      rpName: "demo",
      origin: "https://svc.example.com:3080",
    });
  });

  it("drops :443 from the public origin, as browsers send it", () => {
    const file = defaultConfig({ clusterName: "demo", publicHost: "svc.example.com" });
    const c = proxyConfigFrom(
      { ...file, proxy: { ...file.proxy, public_addr: "svc.example.com:443" } },
      "1.0.0",
    );
    expect(c.publicUrl).toBe("https://svc.example.com");
  });
});
