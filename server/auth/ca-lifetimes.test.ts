// What a rotation waits for before the old key may go, from what auth knows at run time: the
// longest role session, and the host certificates nodes hold (agentless ones for a year).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../../core/backend/sqlite.ts";
import { CertificateAuthorities } from "../../core/ca/authorities.ts";
import { FileCaKeyStore } from "../../core/ca/key-store.ts";
import { FileRotationStateStore } from "../../core/ca/rotation-store.ts";
import { ManualClock } from "../../core/clock.ts";
import { API_VERSION } from "../../core/resources/index.ts";
import { MemorySource } from "../../core/sources/memory.ts";
import {
  longestNodeCertificateSeconds,
  longestRoleSessionSeconds,
  runtimeCaLifetime,
} from "./ca-lifetimes.ts";

const HOUR = 3600;
let dir: string;
let backend: SqliteBackend;
const clock = new ManualClock(new Date("2026-11-27T00:00:00Z"));

const role = (name: string, ttl?: string) => ({
  apiVersion: API_VERSION,
  kind: "Role" as const,
  metadata: { name },
  spec: { allow: { logins: ["root"] }, ...(ttl ? { options: { max_session_ttl: ttl } } : {}) },
});
const registration = (id: string, agentless: boolean, expiresInSeconds?: number) => ({
  id,
  hostname: id,
  addresses: [],
  labels: {},
  pinned_labels: {},
  agentless,
  host_public_key: "",
  host_key_fingerprint: "",
  token: "t",
  joined_at: clock.now().toISOString(),
  ...(expiresInSeconds !== undefined
    ? { certs_expire: new Date(clock.now().getTime() + expiresInSeconds * 1000).toISOString() }
    : {}),
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-ca-lifetimes-"));
  backend = new SqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 });
});
afterAll(async () => {
  await backend?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("runtime CA lifetimes", () => {
  it("user certificates: the longest max_session_ttl any role grants (12 h at least)", () => {
    expect(longestRoleSessionSeconds(new MemorySource([role("short", "1h")]))).toBe(12 * HOUR);
    expect(longestRoleSessionSeconds(new MemorySource([role("a", "1h"), role("b", "30h"), role("c")]))).toBe(
      30 * HOUR,
    );
  });

  it("host certificates: the latest expiry among registered nodes, an agentless one lasting a year", async () => {
    expect(await longestNodeCertificateSeconds(backend, clock.now())).toBe(0);
    await backend.put("agents/node-a", registration("node-a", false, 20 * HOUR));
    expect(await longestNodeCertificateSeconds(backend, clock.now())).toBe(20 * HOUR);
    await backend.put("agents/legacy", registration("legacy", true, 365 * 24 * HOUR));
    expect(await longestNodeCertificateSeconds(backend, clock.now())).toBe(365 * 24 * HOUR);
    await backend.put("agents/old-legacy", registration("old-legacy", true));
    expect(await longestNodeCertificateSeconds(backend, clock.now())).toBe(365 * 24 * HOUR);
  });

  it("a switch waits out the longer of the static table and the runtime lifetime", async () => {
    const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
      clusterName: "test.example",
      trustDomain: "test.example",
      clock,
      rotationStore: new FileRotationStateStore(join(dir, "ca")),
    });
    const source = new MemorySource([role("long", "30h")]);
    cas.keySet.setRuntimeLifetime(runtimeCaLifetime({ source, backend, clock }));
    const expiresAfterSwitch = async (type: "user_ssh" | "host_ssh") => {
      await cas.rotate({ type, phase: "init" });
      const change = await cas.rotate({ type, phase: "update_clients" });
      return (Date.parse(change.status.old_key_expires_at) - clock.now().getTime()) / 1000;
    };
    // 30 h (the role), not the static 24 h (bots' longest certificate).
    expect(await expiresAfterSwitch("user_ssh")).toBe(30 * HOUR);
    // The agentless node's year, not the 24 h node certificates.
    expect(await expiresAfterSwitch("host_ssh")).toBe(365 * 24 * HOUR);
    // Ending the rotation before then is refused unless forced.
    await cas.rotate({ type: "host_ssh", phase: "update_servers" });
    await expect(cas.rotate({ type: "host_ssh", phase: "standby" })).rejects.toThrow(/valid until/);
  });
});
