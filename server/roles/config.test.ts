// The config additions of the standalone roles: the PostgreSQL URL from a file or env, auth's TLS
// names, the proxy's auth address and identity folder.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkConfig, defaultConfig, postgresUrl } from "../config.ts";
import { authTlsNames } from "./auth.ts";

const base = defaultConfig({ clusterName: "prod", publicHost: "svc.example.com" });
const withBackend = (backend: unknown) => ({ ...structuredClone(base), backend });

describe("postgres backend URL: url, url_file or url_env", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-roles-config-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("accepts exactly one of them", () => {
    expect(checkConfig(withBackend({ type: "postgres", url: "postgres://h/db" })).backend).toMatchObject({
      url: "postgres://h/db",
    });
    expect(() => checkConfig(withBackend({ type: "postgres" }))).toThrow(
      /exactly one of url, url_file, url_env/,
    );
    expect(() =>
      checkConfig(withBackend({ type: "postgres", url: "postgres://h/db", url_env: "PG_URL" })),
    ).toThrow(/exactly one/);
    expect(() => checkConfig(withBackend({ type: "postgres", url_env: "bad name" }))).toThrow(/backend/);
    expect(() => checkConfig(withBackend({ type: "postgres", url_file: "/x", schema: "Bad" }))).toThrow(
      /backend/,
    );
  });

  it("reads the URL from a file (trimmed) or from the environment, never echoing it in errors", async () => {
    const file = join(dir, "url");
    await writeFile(file, "postgresql://svc:s3cret@db:5432/svc\n");
    expect(await postgresUrl({ url_file: file })).toBe("postgresql://svc:s3cret@db:5432/svc");
    expect(await postgresUrl({ url_env: "PG_URL" }, { PG_URL: "postgres://a@b/c" })).toBe("postgres://a@b/c");
    await expect(postgresUrl({ url_env: "PG_URL" }, {})).rejects.toThrow(/url_env \$PG_URL: not a postgres/);
    await expect(postgresUrl({ url_file: join(dir, "missing") })).rejects.toThrow(/ENOENT/);
    await writeFile(file, "mysql://svc:s3cret@db/svc");
    const err = await postgresUrl({ url_file: file }).catch((e: unknown) => e);
    expect(String(err)).toMatch(/not a postgres/);
    expect(String(err)).not.toContain("s3cret");
  });
});

describe("role settings", () => {
  it("auth's certificate names: tls_names, advertise host, listen host (no wildcard address)", () => {
    const c = checkConfig({
      ...structuredClone(base),
      auth: {
        ...base.auth,
        listen_addr: "0.0.0.0:3025",
        advertise_addr: "svc-auth.ns.svc:3025",
        tls_names: ["svc-auth", "svc-auth.ns"],
      },
    });
    expect(authTlsNames(c)).toEqual(["svc-auth", "svc-auth.ns", "svc-auth.ns.svc"]);
  });

  it("proxy.auth_addr must be host:port; proxy_identity gets defaults", () => {
    expect(() =>
      checkConfig({ ...structuredClone(base), proxy: { ...base.proxy, auth_addr: "nope" } }),
    ).toThrow(/proxy\.auth_addr/);
    const c = checkConfig({
      ...structuredClone(base),
      auth: { ...base.auth, proxy_identity: { secret_name: "svc-proxy-identity" } },
    });
    expect(c.auth.proxy_identity).toEqual({ secret_name: "svc-proxy-identity", dns_names: [], ttl: "24h" });
  });
});
