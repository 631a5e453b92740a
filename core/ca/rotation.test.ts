import { describe, expect, it } from "vitest";
import { hasCode } from "../errors.ts";
import {
  autoDueAt,
  autoTarget,
  type CaRotationState,
  initialState,
  keyRoles,
  parseDocument,
  signingEntry,
  transition,
  trustedEntries,
} from "./rotation.ts";

const T0 = new Date("2026-03-01T00:00:00Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const HOUR = 3600_000;
const LIFE = 12 * 3600; // seconds

function refused(fn: () => unknown, text: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(hasCode(err, "precondition_failed")).toBe(true);
    expect((err as Error).message).toMatch(text);
    return;
  }
  throw new Error("expected a refusal");
}

const start = (): CaRotationState => initialState("ssh-user-ca");
const init = (s = start(), now = T0) =>
  transition(s, { to: "init", now, lifetimeSeconds: LIFE, nextEntry: "ssh-user-ca-g2" });

describe("CA rotation phase machine", () => {
  it("standby: one key, it signs", () => {
    const s = start();
    expect(signingEntry(s)).toBe("ssh-user-ca");
    expect(trustedEntries(s)).toEqual(["ssh-user-ca"]);
    expect(keyRoles(s)).toEqual([{ entry: "ssh-user-ca", role: "active" }]);
  });

  it("walks init -> update_clients -> update_servers -> standby: trust both, then sign new, then drop old", () => {
    const s1 = init();
    expect(s1).toMatchObject({ phase: "init", next: "ssh-user-ca-g2", generation: 2, sequence: 2 });
    expect(signingEntry(s1)).toBe("ssh-user-ca");
    expect(trustedEntries(s1)).toEqual(["ssh-user-ca", "ssh-user-ca-g2"]);
    expect(keyRoles(s1).map((k) => k.role)).toEqual(["active", "next"]);

    const s2 = transition(s1, { to: "update_clients", now: at(HOUR), lifetimeSeconds: LIFE });
    expect(signingEntry(s2)).toBe("ssh-user-ca-g2");
    expect(trustedEntries(s2)).toEqual(["ssh-user-ca-g2", "ssh-user-ca"]);
    expect(keyRoles(s2).map((k) => k.role)).toEqual(["active", "previous"]);
    // The switch starts the clock on the old key's last certificate.
    expect(s2.oldKeyExpiresAt).toBe(at(HOUR + LIFE * 1000).toISOString());

    const s3 = transition(s2, { to: "update_servers", now: at(2 * HOUR), lifetimeSeconds: LIFE });
    expect(signingEntry(s3)).toBe("ssh-user-ca-g2");

    refused(
      () => transition(s3, { to: "standby", now: at(3 * HOUR), lifetimeSeconds: LIFE }),
      new RegExp(`valid until ${at(HOUR + LIFE * 1000).toISOString()}`),
    );
    const forced = transition(s3, { to: "standby", now: at(3 * HOUR), lifetimeSeconds: LIFE, force: true });
    expect(forced).toMatchObject({ phase: "standby", current: "ssh-user-ca-g2" });
    expect(forced.next).toBeUndefined();

    const s4 = transition(s3, { to: "standby", now: at(HOUR + LIFE * 1000), lifetimeSeconds: LIFE });
    expect(trustedEntries(s4)).toEqual(["ssh-user-ca-g2"]);
    expect(s4.oldKeyExpiresAt).toBeUndefined();
    expect(s4.sequence).toBe(5);
    // The next rotation makes generation 3, never reusing a name.
    expect(
      transition(s4, { to: "init", now: at(20 * HOUR), lifetimeSeconds: LIFE, nextEntry: "x-g3" }).generation,
    ).toBe(3);
  });

  it("refuses skipping a phase, repeating one, and rollback without a rotation", () => {
    refused(
      () => transition(start(), { to: "update_clients", now: T0, lifetimeSeconds: LIFE }),
      /next phase is init/,
    );
    refused(
      () => transition(init(), { to: "init", now: T0, lifetimeSeconds: LIFE }),
      /already in phase init/,
    );
    refused(
      () => transition(init(), { to: "update_servers", now: T0, lifetimeSeconds: LIFE }),
      /update_clients/,
    );
    refused(() => transition(start(), { to: "rollback", now: T0, lifetimeSeconds: LIFE }), /no rotation/);
  });

  it("rollback signs with the old key, keeps both trusted, and standby then drops the new key", () => {
    const fromInit = transition(init(), { to: "rollback", now: at(HOUR), lifetimeSeconds: LIFE });
    expect(signingEntry(fromInit)).toBe("ssh-user-ca");
    expect(trustedEntries(fromInit)).toEqual(["ssh-user-ca", "ssh-user-ca-g2"]);
    // The new key never signed: nothing to wait for.
    const done = transition(fromInit, { to: "standby", now: at(HOUR), lifetimeSeconds: LIFE });
    expect(done).toMatchObject({ phase: "standby", current: "ssh-user-ca" });
    expect(done.next).toBeUndefined();

    const s2 = transition(init(), { to: "update_clients", now: at(HOUR), lifetimeSeconds: LIFE });
    const back = transition(s2, { to: "rollback", now: at(2 * HOUR), lifetimeSeconds: LIFE });
    expect(signingEntry(back)).toBe("ssh-user-ca");
    // The new key signed during update_clients: its certificates must expire before it goes.
    refused(
      () => transition(back, { to: "standby", now: at(3 * HOUR), lifetimeSeconds: LIFE }),
      /valid until/,
    );
    expect(
      transition(back, { to: "standby", now: at(2 * HOUR + LIFE * 1000), lifetimeSeconds: LIFE }).current,
    ).toBe("ssh-user-ca");
    refused(
      () => transition(back, { to: "rollback", now: at(3 * HOUR), lifetimeSeconds: LIFE }),
      /already in phase rollback/,
    );
  });

  it("automatic mode: due after each grace period, the last step not before the old key's certificates expire", () => {
    const grace = 600;
    const s1 = transition(start(), {
      to: "init",
      now: T0,
      lifetimeSeconds: LIFE,
      nextEntry: "ssh-user-ca-g2",
      mode: "auto",
      graceSeconds: grace,
    });
    expect(s1.mode).toBe("auto");
    expect(autoTarget(s1)).toBe("update_clients");
    expect(autoDueAt(s1)?.toISOString()).toBe(at(grace * 1000).toISOString());
    expect(s1.nextPhaseAt).toBe(at(grace * 1000).toISOString());
    const s2 = transition(s1, { to: "update_clients", now: at(grace * 1000), lifetimeSeconds: LIFE });
    expect(s2.mode).toBe("auto");
    const s3 = transition(s2, { to: "update_servers", now: at(2 * grace * 1000), lifetimeSeconds: LIFE });
    expect(autoTarget(s3)).toBe("standby");
    expect(autoDueAt(s3)?.toISOString()).toBe(at(grace * 1000 + LIFE * 1000).toISOString());
    // A manual command takes over.
    const manual = transition(s2, {
      to: "update_servers",
      now: at(2 * grace * 1000),
      lifetimeSeconds: LIFE,
      mode: "manual",
    });
    expect(autoTarget(manual)).toBeUndefined();
    expect(autoDueAt(manual)).toBeUndefined();
    const end = transition(s3, { to: "standby", now: at(grace * 1000 + LIFE * 1000), lifetimeSeconds: LIFE });
    expect(end.mode).toBe("manual");
    expect(autoTarget(end)).toBeUndefined();
  });

  it("parses what it stores and refuses a damaged document", () => {
    const doc = { version: 1, authorities: { user_ssh: init(), future_ca: { anything: true } } };
    const back = parseDocument(JSON.parse(JSON.stringify(doc)));
    expect(back.authorities.user_ssh).toEqual(init());
    expect(() => parseDocument({ version: 2, authorities: {} })).toThrow(/unknown format/);
    expect(() =>
      parseDocument({ version: 1, authorities: { user_ssh: { ...init(), current: "../x" } } }),
    ).toThrow(/damaged/);
    const { next: _n, ...noNext } = init();
    expect(() => parseDocument({ version: 1, authorities: { user_ssh: noNext } })).toThrow(
      /lacks its new key/,
    );
  });
});
