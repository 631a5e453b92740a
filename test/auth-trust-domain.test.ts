// `trust_domain` reaches `svcd auth`: the SPIFFE authority auth runs with is the configured trust
// domain (the operator's --trust-domain, which created the SPIFFE CA; the chart's `trustDomain`
// sets both), not the cluster name; without the key it stays the cluster name.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkConfig } from "../server/config.ts";
import { startAuth } from "../server/roles/auth.ts";
import { freePort } from "./harness/ports.ts";

describe("svcd auth and trust_domain", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-trust-domain-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const rawConfig = async (sub: string, trustDomain?: string) => ({
    cluster_name: "prod",
    ...(trustDomain ? { trust_domain: trustDomain } : {}),
    data_dir: join(dir, sub),
    log_level: "warn",
    auth: { listen_addr: `127.0.0.1:${await freePort()}` },
    proxy: {
      listen_addr: "127.0.0.1:1",
      public_addr: "localhost:1",
      oidc_issuer_url: "https://localhost:1",
    },
    client_tools: { min_version: "0.1.0", recommended_version: "0.1.0" },
    backend: { type: "sqlite", path: "state.db" },
    source: { type: "folder", path: "manifests" },
    ca_store: { type: "files", path: "ca" },
  });
  const configFor = async (sub: string, trustDomain?: string) =>
    checkConfig(await rawConfig(sub, trustDomain));

  it("uses the configured trust domain, else the cluster name", async () => {
    for (const sub of ["a", "b"]) await mkdir(join(dir, sub, "manifests"), { recursive: true });
    const withKey = await startAuth(await configFor("a", "corp.example"));
    try {
      expect(withKey.cas.trustDomain).toBe("corp.example");
      expect(withKey.cas.clusterName).toBe("prod");
    } finally {
      await withKey.close();
    }
    const without = await startAuth(await configFor("b"));
    try {
      expect(without.cas.trustDomain).toBe("prod");
    } finally {
      await without.close();
    }
    const bad = await rawConfig("c", "Not A Domain");
    expect(() => checkConfig(bad)).toThrow(/field trust_domain/);
  });
});
