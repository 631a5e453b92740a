// A web session's terminal certificate reused per node (server/proxy/terminal-certs.ts), through
// the real HTTPS proxy to the real OpenSSH sshd and node agent, with the proxy's session cache
// following auth's real WatchSessions stream: the second open of a session reuses the key and
// certificate (no IssueUserCerts), another session never does, a logout drops the session's
// certificates at once and its next open is refused, while the other session keeps working. A
// plain sshd audits nothing itself, so every open to it still gets its own certificate (auth's
// cert.create is its audit trail).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionCache, sessionHash } from "../server/proxy/session-cache.ts";
import { proxyAuthConnection } from "../server/proxy/tunnel/registration.ts";
import { silent } from "./agent-fixture.ts";
import { mustOpen, openTerminal, type TerminalConnection } from "./terminal-client.ts";
import { NODES, PUBLIC_HOST, startTerminalFixture, type TerminalFixture } from "./terminal-fixture.ts";

let fx: TerminalFixture;
let sessions: SessionCache | undefined;
let closeConnection = (): void => {};
/** whether each opened terminal reused its session's certificate, in order */
const reused: boolean[] = [];
const open: TerminalConnection[] = [];

beforeAll(async () => {
  // The terminal route subscribes when the proxy starts; the cache is made from the fixture's
  // proxy identity (its routes hook) just before that.
  const relay = {
    onChange: (fn: Parameters<SessionCache["onChange"]>[0]) => {
      if (!sessions) throw new Error("session cache not started");
      return sessions.onChange(fn);
    },
    get live(): boolean {
      return sessions?.live ?? false;
    },
  };
  fx = await startTerminalFixture({
    terminal: {
      sessions: relay,
      onOpened: (t, o) => {
        fx.opens.push(t);
        reused.push(o.certReused);
      },
    },
    routes: (grpc) => {
      const connection = proxyAuthConnection(grpc);
      closeConnection = () => connection.close();
      sessions = new SessionCache({
        connection: () => connection,
        clock: { now: () => new Date() },
        logger: silent,
      });
      sessions.start();
      return [];
    },
  });
  for (let i = 0; i < 100 && !sessions?.live; i++) await new Promise((r) => setTimeout(r, 100));
  expect(sessions?.live).toBe(true);
}, 180_000);

afterAll(async () => {
  for (const c of open) c.ws.terminate();
  await sessions?.close();
  closeConnection();
  await fx?.close();
}, 60_000);

async function hello(sessionId: string, node: string): Promise<void> {
  const c = await mustOpen({
    baseUrl: fx.proxy.url,
    caPem: fx.hostCaPem,
    servername: PUBLIC_HOST,
    query: { node, login: "root" },
    headers: { authorization: `Bearer ${sessionId}` },
  });
  open.push(c);
  await c.waitControl("ready");
  c.type("echo hel''lo\r");
  await c.waitFor(/\rhello\r\n/);
  c.ws.terminate();
}

describe("terminal certificate reuse", () => {
  it("reuses per session and node, never across sessions, and drops it at logout", async () => {
    const one = await fx.login("dave");
    const two = await fx.login("dave");
    const from = reused.length;
    await hello(one.sessionId, NODES.agent);
    await hello(one.sessionId, NODES.agent);
    await hello(one.sessionId, NODES.sshd);
    await hello(one.sessionId, NODES.sshd);
    await hello(two.sessionId, NODES.agent);
    await hello(two.sessionId, NODES.agent);
    expect(reused.slice(from)).toEqual([false, true, false, false, false, true]);
    // The reused open made no key and asked auth nothing: both stages are next to nothing.
    const second = fx.opens[from + 1];
    expect(second?.keyMs).toBeLessThan(1);
    expect(second?.certMs).toBeLessThan(5);

    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/logout",
      headers: { authorization: `Bearer ${one.sessionId}` },
    });
    expect(res.status).toBe(200);
    // Auth's revocation reaches the proxy's session stream.
    const hash = sessionHash(one.sessionId);
    for (let i = 0; i < 100 && !sessions?.revoked(hash); i++) await new Promise((r) => setTimeout(r, 50));
    expect(sessions?.revoked(hash)).toBe(true);
    const refused = await openTerminal({
      baseUrl: fx.proxy.url,
      caPem: fx.hostCaPem,
      servername: PUBLIC_HOST,
      query: { node: NODES.agent, login: "root" },
      headers: { authorization: `Bearer ${one.sessionId}` },
    });
    expect(refused.kind).toBe("refused");
    if (refused.kind === "refused") expect(refused.status).toBe(401);
    // The other session of the same user still has its own.
    const before = reused.length;
    await hello(two.sessionId, NODES.agent);
    expect(reused.slice(before)).toEqual([true]);
    // A new login gets a new certificate.
    const three = await fx.login("dave");
    await hello(three.sessionId, NODES.agent);
    expect(reused.at(-1)).toBe(false);
  }, 120_000);
});
