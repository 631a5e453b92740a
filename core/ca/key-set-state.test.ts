// The CA key sets over real stores: two "replicas" sharing one data folder, compare-and-swap,
// restart, signers following the phase, automatic mode on a manual clock.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySshCertificate } from "../certs/ssh-cert.ts";
import { generateSshKeyPair } from "../certs/ssh-keys.ts";
import { ManualClock } from "../clock.ts";
import { hasCode } from "../errors.ts";
import { CertificateAuthorities } from "./authorities.ts";
import { FileCaKeyStore } from "./key-store.ts";
import { emptyDocument, initialState } from "./rotation.ts";
import { FileRotationStateStore } from "./rotation-store.ts";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "svc-ca-keyset-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const open = (dir: string, clock: ManualClock) =>
  CertificateAuthorities.loadOrCreate(new FileCaKeyStore(dir), {
    clusterName: "test.example",
    trustDomain: "test.example",
    clock,
    rotationStore: new FileRotationStateStore(dir),
    lifetimes: { user_ssh: 3600 },
  });

function userCert(cas: CertificateAuthorities, clock: ManualClock): string {
  return cas.sshUserSigner.sign({
    type: "user",
    publicKey: generateSshKeyPair("ed25519").publicLine,
    keyId: "user:alice",
    principals: ["root"],
    validAfter: new Date(clock.now().getTime() - 60_000),
    validBefore: new Date(clock.now().getTime() + 3600_000),
  }).line;
}

const verifies = (line: string, keys: string[], clock: ManualClock) => {
  try {
    verifySshCertificate(line, { trustedCaKeys: keys, type: "user", clock });
    return true;
  } catch {
    return false;
  }
};

describe("FileRotationStateStore", () => {
  it("swaps only from the revision it was given", async () => {
    const store = new FileRotationStateStore(join(root, "cas"));
    expect(await store.read()).toBeUndefined();
    const doc = emptyDocument();
    expect(await store.compareAndSwap(undefined, doc)).toBe("swapped");
    expect(await store.compareAndSwap(undefined, doc)).toBe("conflict");
    const r1 = await store.read();
    doc.authorities.app = initialState("app-ca");
    expect(await store.compareAndSwap(r1?.revision, doc)).toBe("swapped");
    expect(await store.compareAndSwap(r1?.revision, doc)).toBe("conflict");
    expect((await store.read())?.doc.authorities.app?.current).toBe("app-ca");
  });
});

describe("CertificateAuthorities rotation", () => {
  it("two replicas on one folder: one wins a race, the other reloads and signs with the same key; a restart keeps it", async () => {
    const dir = join(root, "replicas");
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const a = await open(dir, clock);
    const b = await open(dir, clock);
    const before = userCert(a, clock);
    const oldKey = a.sshUserCaPublicKey;

    let bChanges = 0;
    b.onChange(() => {
      bChanges++;
    });
    const results = await Promise.allSettled([
      a.rotate({ type: "user_ssh", phase: "init", who: "a" }),
      b.rotate({ type: "user_ssh", phase: "init", who: "b" }),
    ]);
    const ok = results.filter((r) => r.status === "fulfilled");
    expect(ok).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(hasCode(lost.reason, "precondition_failed")).toBe(true);
    // Exactly one new key entry was made (create-once names it by generation).
    expect((await readdir(dir)).filter((f) => f.startsWith("ssh-user-ca")).sort()).toEqual([
      "ssh-user-ca-g2.json",
      "ssh-user-ca.json",
    ]);

    await a.reload();
    await b.reload();
    expect(bChanges).toBeGreaterThan(0);
    expect(a.trustedUserCaKeys()).toEqual(b.trustedUserCaKeys());
    expect(a.trustedUserCaKeys()).toHaveLength(2);
    expect(a.sshUserCaPublicKey).toBe(oldKey); // init: the old key still signs

    await a.rotate({ type: "user_ssh", phase: "update_clients" });
    expect(await b.reload()).toBe(true);
    const after = userCert(b, clock);
    const newKey = b.sshUserCaPublicKey;
    expect(newKey).not.toBe(oldKey);
    expect(verifies(after, [newKey], clock)).toBe(true);
    expect(verifies(after, [oldKey], clock)).toBe(false);
    expect(verifies(before, b.trustedUserCaKeys(), clock)).toBe(true);

    const restarted = await open(dir, clock);
    expect(restarted.phase("user_ssh")).toBe("update_clients");
    expect(restarted.sshUserCaPublicKey).toBe(newKey);
    expect(restarted.trustedUserCaKeys()).toEqual(b.trustedUserCaKeys());

    await restarted.rotate({ type: "user_ssh", phase: "update_servers" });
    await expect(restarted.rotate({ type: "user_ssh", phase: "standby" })).rejects.toThrow(/valid until/);
    clock.advance(3600_000);
    const end = await restarted.rotate({ type: "user_ssh", phase: "standby" });
    expect(end).toMatchObject({ from: "update_servers", to: "standby" });
    expect(restarted.trustedUserCaKeys()).toEqual([newKey]);
    expect(verifies(before, restarted.trustedUserCaKeys(), clock)).toBe(false);
    expect(end.status.keys.map((k) => k.role)).toEqual(["active"]);
  });

  it("every type rotates: publishing lists both keys during the rotation, status names their roles", async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const cas = await open(join(root, "all"), clock);
    const seq = cas.spiffeBundle().spiffe_sequence as number;
    for (const type of ["user_ssh", "host_ssh", "host_x509", "spiffe", "jwt", "app"] as const)
      await cas.rotate({ type, phase: "init" });
    const m = cas.publicMaterial();
    expect(m.sshUserCas).toHaveLength(2);
    expect(m.sshHostCas).toHaveLength(2);
    expect(m.hostCaPems).toHaveLength(2);
    expect(m.spiffeCaPems).toHaveLength(2);
    expect(m.spiffeJwks.keys).toHaveLength(2);
    expect(m.appJwks.keys).toHaveLength(2);
    const bundle = cas.spiffeBundle();
    expect((bundle.keys as unknown[]).length).toBe(4);
    expect(bundle.spiffe_sequence as number).toBeGreaterThan(seq);
    for (const s of cas.status()) {
      expect(s.phase).toBe("init");
      expect(s.keys.map((k) => k.role)).toEqual(["active", "next"]);
      expect(new Set(s.keys.map((k) => k.fingerprint)).size).toBe(2);
    }
  });

  it("automatic mode moves on after each grace period and ends after the old key's certificates expired", async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const cas = await open(join(root, "auto"), clock);
    await cas.rotate({ type: "user_ssh", auto: true, graceSeconds: 60 });
    expect(await cas.advanceDue()).toEqual([]);
    clock.advance(60_000);
    expect((await cas.advanceDue()).map((c) => c.to)).toEqual(["update_clients"]);
    clock.advance(60_000);
    expect((await cas.advanceDue()).map((c) => c.to)).toEqual(["update_servers"]);
    clock.advance(60_000);
    // user_ssh certificates live an hour here: not yet.
    expect(await cas.advanceDue()).toEqual([]);
    expect(cas.status().find((s) => s.type === "user_ssh")?.next_phase_at).toBe(
      new Date(Date.UTC(2026, 5, 1) + 60_000 + 3600_000).toISOString(),
    );
    clock.advance(3600_000);
    expect((await cas.advanceDue()).map((c) => c.to)).toEqual(["standby"]);
    expect(cas.status().find((s) => s.type === "user_ssh")).toMatchObject({
      phase: "standby",
      mode: "manual",
    });
    await expect(cas.rotate({ type: "user_ssh", phase: "rollback" })).rejects.toThrow(/no rotation/);
  });
});
