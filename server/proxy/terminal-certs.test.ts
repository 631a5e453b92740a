// The terminal's held certificates (terminal-certs.ts) driven by a real SessionCache whose
// WatchSessions call is a stand-in emitting the events auth sends: reuse per session and node,
// never across sessions, a new certificate once the held one nears its end, the size bound, and
// every session event that may end a session or change its logins dropping what is held.
import { EventEmitter } from "node:events";
import type { ClientReadableStream } from "@grpc/grpc-js";
import { Metadata } from "@grpc/grpc-js";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { generateSshKeyPair } from "../../core/certs/ssh-keys.ts";
import { ManualClock } from "../../core/clock.ts";
import type { AuthServiceClient } from "../../proto/generated/svc/v1/AuthService.ts";
import type { SessionEvent__Output } from "../../proto/generated/svc/v1/SessionEvent.ts";
import { SessionCache, sessionHash } from "./session-cache.ts";
import { TerminalCerts, type TerminalCredential } from "./terminal-certs.ts";

class FakeCall extends EventEmitter {
  cancel(): void {}
}

const ALICE = { sessionId: "a".repeat(43), info: { username: "alice", roles: ["admin"] } };
const ALICE2 = { sessionId: "b".repeat(43), info: { username: "alice", roles: ["admin"] } };
const BOB = { sessionId: "c".repeat(43), info: { username: "bob", roles: ["access"] } };

describe("TerminalCerts", () => {
  let clock: ManualClock;
  let sessions: SessionCache;
  let call: FakeCall;
  let certs: TerminalCerts;
  let issued: number;

  const emit = (e: Partial<SessionEvent__Output>): void => {
    call.emit("data", { position: "e:1", keepalive_seconds: 5, ...e });
  };
  /** A fresh key and a certificate valid for `ttlMs` from now, counted. */
  const issue =
    (ttlMs = 120_000) =>
    async (): Promise<TerminalCredential> => {
      issued++;
      const key = generateSshKeyPair("ed25519");
      return {
        privateKey: key.privateOpenSsh,
        cert: {
          certificate: `cert-${issued}`,
          principals: ["root"],
          hostCaKeys: ["host-ca"],
          validBefore: new Date(clock.now().getTime() + ttlMs),
        },
      };
    };

  beforeEach(() => {
    clock = new ManualClock();
    issued = 0;
    const client = {
      WatchSessions: () => {
        call = new FakeCall();
        return call as unknown as ClientReadableStream<SessionEvent__Output>;
      },
    } as unknown as AuthServiceClient;
    sessions = new SessionCache({
      connection: () => ({ client, metadata: () => new Metadata() }),
      clock,
      logger: pino({ level: "silent" }),
    });
    sessions.start();
    emit({ kind: "reset" });
    expect(sessions.live).toBe(true);
    certs = new TerminalCerts({ clock, sessions, maxEntries: 3 });
  });
  afterEach(async () => {
    certs.close();
    await sessions.close();
  });

  it("reuses a session's key and certificate for the same node, not for another node", async () => {
    const first = await certs.obtain(ALICE, "node-1", issue());
    const second = await certs.obtain(ALICE, "node-1", issue());
    expect(first.reused).toBe(false);
    expect(second.reused).toBe(true);
    expect(second.credential.cert.certificate).toBe(first.credential.cert.certificate);
    expect(second.credential.privateKey).toBe(first.credential.privateKey);
    const other = await certs.obtain(ALICE, "node-2", issue());
    expect(other.reused).toBe(false);
    expect(issued).toBe(2);
  });

  it("never shares a certificate across sessions, even of the same user", async () => {
    await certs.obtain(ALICE, "node-1", issue());
    const a2 = await certs.obtain(ALICE2, "node-1", issue());
    const b = await certs.obtain(BOB, "node-1", issue());
    expect(a2.reused).toBe(false);
    expect(b.reused).toBe(false);
    expect(new Set([a2.credential.cert.certificate, b.credential.cert.certificate]).size).toBe(2);
    expect(issued).toBe(3);
  });

  it("asks for a new certificate once the held one has less than 60 s (or a quarter of its life) left", async () => {
    await certs.obtain(ALICE, "node-1", issue(120_000));
    clock.advance(59_000); // 61 s left
    expect((await certs.obtain(ALICE, "node-1", issue(120_000))).reused).toBe(true);
    clock.advance(2_000); // 59 s left
    const renewed = await certs.obtain(ALICE, "node-1", issue(120_000));
    expect(renewed.reused).toBe(false);
    expect(renewed.credential.cert.certificate).toBe("cert-2");
    // A long certificate: a quarter of its life (10 min of 40) is the larger margin.
    await certs.obtain(BOB, "node-1", issue(40 * 60_000));
    clock.advance(29 * 60_000);
    expect((await certs.obtain(BOB, "node-1", issue())).reused).toBe(true);
    clock.advance(2 * 60_000);
    expect((await certs.obtain(BOB, "node-1", issue())).reused).toBe(false);
  });

  it("holds at most maxEntries, dropping the least recently used", async () => {
    for (const node of ["n1", "n2", "n3"]) await certs.obtain(ALICE, node, issue());
    await certs.obtain(ALICE, "n1", issue()); // n1 is now the most recent
    await certs.obtain(ALICE, "n4", issue()); // drops n2
    expect(certs.size).toBe(3);
    expect(issued).toBe(4);
    expect((await certs.obtain(ALICE, "n1", issue())).reused).toBe(true);
    expect((await certs.obtain(ALICE, "n2", issue())).reused).toBe(false);
    expect(certs.size).toBe(3);
  });

  it("drops a session's certificates at once when it is revoked (logout), and only its own", async () => {
    await certs.obtain(ALICE, "node-1", issue());
    await certs.obtain(ALICE2, "node-1", issue());
    sessions.forget(sessionHash(ALICE.sessionId));
    expect(certs.size).toBe(1);
    expect((await certs.obtain(ALICE2, "node-1", issue())).reused).toBe(true);
    emit({ kind: "revoked", session_hash: sessionHash(ALICE2.sessionId) });
    expect(certs.size).toBe(0);
  });

  it("drops on the user's and the role's events and on a reset", async () => {
    await certs.obtain(ALICE, "node-1", issue());
    await certs.obtain(BOB, "node-1", issue());
    emit({ kind: "user", username: "bob" });
    expect((await certs.obtain(BOB, "node-1", issue())).reused).toBe(false);
    expect((await certs.obtain(ALICE, "node-1", issue())).reused).toBe(true);
    emit({ kind: "role", role: "admin" });
    expect((await certs.obtain(ALICE, "node-1", issue())).reused).toBe(false);
    emit({ kind: "reset" });
    expect(certs.size).toBe(0);
  });

  it("does not reuse while the session stream is not live", async () => {
    await certs.obtain(ALICE, "node-1", issue());
    call.emit("error", Object.assign(new Error("gone"), { code: 14, details: "gone" }));
    expect(sessions.live).toBe(false);
    expect((await certs.obtain(ALICE, "node-1", issue())).reused).toBe(false);
    expect(issued).toBe(2);
  });

  it("shares one issue among concurrent opens, but not one an event overtook", async () => {
    const [a, b] = await Promise.all([
      certs.obtain(ALICE, "node-1", issue()),
      certs.obtain(ALICE, "node-1", issue()),
    ]);
    expect(issued).toBe(1);
    expect(b.credential).toBe(a.credential);
    certs.drop(ALICE.sessionId, "node-1");
    let release = (): void => {};
    const slow = certs.obtain(ALICE, "node-1", async () => {
      await new Promise<void>((r) => {
        release = r;
      });
      return issue()();
    });
    await Promise.resolve();
    emit({ kind: "user", username: "alice" });
    release();
    expect((await slow).reused).toBe(false);
    expect(certs.size).toBe(0);
  });
});
