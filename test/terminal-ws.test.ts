// WebSocket /v1/webapi/ssh/connect through the real HTTPS proxy to a real node agent and to a real
// OpenSSH sshd registered as an agentless node: shell I/O, resize, binary bytes, back-pressure,
// every refusal before SSH starts, and the recording listed and played back afterwards.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../core/resources/index.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { mustOpen, type OpenOptions, openTerminal, type TerminalConnection } from "./terminal-client.ts";
import {
  NODES,
  PASSWORD,
  PUBLIC_HOST,
  startTerminalFixture,
  type TerminalFixture,
} from "./terminal-fixture.ts";

let fx: TerminalFixture;
let alice = { sessionId: "", cookie: "" };
let bob = { sessionId: "", cookie: "" };
let dave = { sessionId: "", cookie: "" };
let erin = { sessionId: "", cookie: "" };
const open: TerminalConnection[] = [];

beforeAll(async () => {
  fx = await startTerminalFixture();
  alice = await fx.login("alice");
  bob = await fx.login("bob");
  dave = await fx.login("dave");
  erin = await fx.login("erin");
}, 180_000);

afterAll(async () => {
  for (const c of open) c.ws.terminate();
  await fx?.close();
}, 60_000);

function opts(query: Record<string, string>, headers: Record<string, string>): OpenOptions {
  return { baseUrl: fx.proxy.url, caPem: fx.hostCaPem, servername: PUBLIC_HOST, query, headers };
}
const bearer = (s: { sessionId: string }) => ({ authorization: `Bearer ${s.sessionId}` });

async function connect(
  query: Record<string, string>,
  headers: Record<string, string>,
): Promise<TerminalConnection> {
  const c = await mustOpen(opts(query, headers));
  open.push(c);
  return c;
}

/** Runs the shell round trip every node must pass. */
async function helloAndResize(node: string): Promise<TerminalConnection> {
  const c = await connect({ node, login: "root", cols: "80", rows: "24" }, bearer(alice));
  const ready = await c.waitControl("ready");
  expect(ready).toEqual({ type: "ready", node, login: "root" });
  // The quotes keep the typed command line from containing the word we wait for.
  c.type("echo hel''lo\r");
  await c.waitFor(/\rhello\r\n/);
  const mark = c.output().length;
  c.resize(132, 41);
  c.type("stty size\r");
  await c.waitFor("41 132", 30_000, mark);
  return c;
}

describe("terminal WebSocket", () => {
  it("bridges a shell on an agent node: echo, resize, exit", async () => {
    const proxyBefore = fx.opens.length;
    const agentBefore = fx.agentOpens.length;
    const c = await helloAndResize(NODES.agent);
    c.type("exit 3\r");
    const exit = await c.waitControl("exit");
    expect(exit).toEqual({ type: "exit", code: 3 });
    expect((await c.closed).code).toBe(1000);
    // Where the open's time went, as the terminal benchmark reads it: one record on each side,
    // stages that add up to the total.
    const stagesAddUp = (t: object): void => {
      const { totalMs, ...stages } = t as Record<string, number>;
      const parts = Object.values(stages);
      for (const v of parts) expect(v).toBeGreaterThanOrEqual(0);
      expect(parts.reduce((a, b) => a + b, 0)).toBeCloseTo(totalMs ?? Number.NaN, 3);
    };
    expect(fx.opens).toHaveLength(proxyBefore + 1);
    expect(fx.agentOpens).toHaveLength(agentBefore + 1);
    stagesAddUp(fx.opens[proxyBefore] as object);
    stagesAddUp(fx.agentOpens[agentBefore] as object);
    // The proxy's handshake stage holds the agent's login (its AuthorizeSshLogin included).
    expect(fx.opens[proxyBefore]?.handshakeMs).toBeGreaterThan(fx.agentOpens[agentBefore]?.authorizeMs ?? 0);
  }, 90_000);

  it("bridges a shell on an agentless OpenSSH sshd node", async () => {
    const c = await helloAndResize(NODES.sshd);
    c.ws.send(JSON.stringify({ type: "close" }));
    expect((await c.closed).code).toBe(1000);
  }, 90_000);

  it("is binary-safe in both directions", async () => {
    const c = await connect({ node: NODES.agent }, bearer(alice));
    await c.waitControl("ready");
    // Raw mode: no echo, no CR/LF translation; od shows exactly the bytes the shell received.
    c.type("stty raw -echo; printf 'RA''W'; head -c 4 | od -An -tx1; printf '\\377\\376\\001X'\r");
    await c.waitFor("RAW");
    c.type(Buffer.from([0xff, 0x00, 0x80, 0x7f]));
    await c.waitFor(/ff 00 80 7f/);
    // Output is collected as latin1: one char per byte, so this is the raw byte sequence.
    await c.waitFor("\xff\xfe\x01X");
    expect(c.output().includes(Buffer.from([0xff, 0xfe, 0x01, 0x58]))).toBe(true);
    c.ws.close();
  }, 90_000);

  it("pauses the node when the browser does not read (bounded buffering)", async () => {
    const before = fx.bridges.length;
    const c = await connect({ node: NODES.agent }, bearer(alice));
    await c.waitControl("ready");
    await new Promise<void>((resolve) => {
      const wait = (): void => {
        if (fx.bridges.length > before) resolve();
        else setTimeout(wait, 20);
      };
      wait();
    });
    const stats = fx.bridges[before];
    if (!stats) throw new Error("no bridge stats");
    c.type("stty -echo; head -c 30000000 /dev/zero | tr '\\0' a; echo; echo DONE-$((40+2))\r");
    // Stop reading: the proxy's socket buffer fills, and it must pause the SSH channel.
    await c.waitFor("aaaa");
    c.ws.pause();
    for (let i = 0; i < 150 && stats.outputPauses === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1000));
    const receivedWhilePaused = stats.bytesToBrowser;
    await new Promise((r) => setTimeout(r, 1000));
    expect(stats.outputPauses).toBeGreaterThan(0);
    // While paused, the proxy forwarded (almost) nothing more: the node was held back.
    expect(stats.bytesToBrowser - receivedWhilePaused).toBeLessThan(1024 * 1024);
    expect(stats.maxBufferedBytes).toBeLessThan(4 * 1024 * 1024);
    c.ws.resume();
    await c.waitFor("DONE-42", 120_000, Math.max(0, c.received() - 10));
    expect(stats.bytesToBrowser).toBeGreaterThan(30_000_000);
    c.ws.close();
  }, 180_000);

  it("accepts the cookie from our own Origin", async () => {
    const c = await connect({ node: NODES.agent }, { cookie: alice.cookie, origin: fx.publicOrigin });
    await c.waitControl("ready");
    c.ws.close();
  }, 60_000);
});

describe("terminal WebSocket refusals", () => {
  it("refuses an upgrade without a credential (401, no socket)", async () => {
    const r = await openTerminal(opts({ node: NODES.agent }, {}));
    expect(r.kind).toBe("refused");
    if (r.kind === "refused") {
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body)).toMatchObject({ error: { code: "not_authenticated" } });
    }
  });

  it("refuses a cookie from a foreign Origin or without Origin (403)", async () => {
    for (const origin of ["https://evil.example", `https://${PUBLIC_HOST}.evil.example`, undefined]) {
      const headers: Record<string, string> = { cookie: alice.cookie };
      if (origin) headers["origin"] = origin;
      const r = await openTerminal(opts({ node: NODES.agent }, headers));
      expect(r.kind).toBe("refused");
      if (r.kind === "refused") {
        expect(r.status).toBe(403);
        expect(r.body).toContain("cross-origin WebSocket refused");
      }
    }
  });

  it("refuses a revoked session", async () => {
    const gone = await fx.login("alice");
    await fx.client.send({ method: "POST", path: "/v1/webapi/logout", headers: bearer(gone) });
    const r = await openTerminal(opts({ node: NODES.agent }, bearer(gone)));
    expect(r).toMatchObject({ kind: "refused", status: 401 });
  });

  it("refuses a missing or malformed node parameter (400)", async () => {
    expect(await openTerminal(opts({}, bearer(alice)))).toMatchObject({ kind: "refused", status: 400 });
    const r = await openTerminal(opts({ node: NODES.agent, login: "root;rm" }, bearer(alice)));
    expect(r).toMatchObject({ kind: "refused", status: 400 });
  });

  const refusals: Array<
    [string, () => { sessionId: string }, Record<string, string>, string, number, RegExp]
  > = [
    [
      "an unknown node",
      () => alice,
      { node: "no-such-node" },
      "not_found",
      4404,
      /unknown node "no-such-node"/,
    ],
    [
      "a login the roles do not grant",
      () => bob,
      { node: NODES.agent, login: "root" },
      "access_denied",
      4403,
      /login "root" is not allowed/,
    ],
    [
      "a login the roles do not grant (default root)",
      () => bob,
      { node: NODES.sshd },
      "access_denied",
      4403,
      /not allowed/,
    ],
    [
      "a login granted only on other nodes (role node_labels)",
      () => erin,
      { node: NODES.agent, login: "root" },
      "access_denied",
      4403,
      /login "root" is not allowed on this node/,
    ],
    [
      "an offline node",
      () => alice,
      { node: NODES.offline },
      "unavailable",
      4503,
      /node "node-offline" is offline/,
    ],
  ];
  for (const [what, who, query, code, closeCode, message] of refusals) {
    it(`refuses ${what} with an error frame before any SSH`, async () => {
      const before = fx.bridges.length;
      const c = await connect(query, bearer(who()));
      const err = await c.waitControl("error");
      expect(err).toMatchObject({ type: "error", code });
      expect(err.type === "error" ? err.message : "").toMatch(message);
      expect((await c.closed).code).toBe(closeCode);
      expect(c.received()).toBe(0);
      expect(fx.bridges.length).toBe(before);
    }, 60_000);
  }

  it("refuses a password-only session of a user whose roles require MFA, before any SSH", async () => {
    await fx.env.source.apply({
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "mfa-required" },
      spec: {
        allow: { logins: ["{{internal.logins}}"], node_labels: { "*": "*" } },
        options: { require_mfa: true },
      },
    } as never);
    await fx.env.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "mona" },
      spec: { roles: ["access", "mfa-required"], traits: { logins: ["root"] } },
    } as never);
    await setPassword(fx.env.backend, "mona", PASSWORD);
    // No device yet: the password gives an enrolment-only session, which opens no terminal.
    const mona = await fx.login("mona");
    const before = fx.bridges.length;
    const c = await connect({ node: NODES.agent, login: "root" }, bearer(mona));
    const err = await c.waitControl("error");
    expect(err).toMatchObject({ type: "error", code: "access_denied" });
    expect(err.type === "error" ? err.message : "").toMatch(/require multi-factor authentication/);
    expect((await c.closed).code).toBe(4403);
    expect(c.received()).toBe(0);
    expect(fx.bridges.length).toBe(before);
  }, 60_000);

  it("refuses a malformed control message and ends the session", async () => {
    const c = await connect({ node: NODES.agent }, bearer(alice));
    await c.waitControl("ready");
    c.ws.send(JSON.stringify({ type: "resize", cols: 0, rows: 10 }));
    expect(await c.waitControl("error")).toMatchObject({ code: "bad_parameter" });
    expect((await c.closed).code).toBe(4400);
  }, 60_000);
});

describe("recordings", () => {
  interface Rec {
    id: string;
    user: string;
    node: string;
    login: string;
    format: string;
  }
  it("lists the session and plays it back; other users do not see it", async () => {
    const c = await connect({ node: NODES.agent, login: "root" }, bearer(dave));
    await c.waitControl("ready");
    c.type("echo recorded-$((6*7))\r");
    await c.waitFor("recorded-42");
    c.type("exit\r");
    await c.closed;

    let rec: Rec | undefined;
    for (let i = 0; i < 300 && !rec; i++) {
      const res = await fx.client.send({ path: "/v1/webapi/sessions?limit=50", headers: bearer(dave) });
      expect(res.status).toBe(200);
      rec = (res.json as { items: Rec[] }).items.find((r) => r.user === "dave" && r.node === NODES.agent);
      if (!rec) await new Promise((r) => setTimeout(r, 200));
    }
    if (!rec) throw new Error("recording never listed");
    expect(rec).toMatchObject({ login: "root", format: "asciicast-v2" });

    const res = await fx.client.send({
      path: `/v1/webapi/sessions/${rec.id}/recording`,
      headers: bearer(dave),
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-asciicast");
    const lines = res.text.trim().split("\n");
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ version: 2 });
    const output = lines
      .slice(1)
      .map((l) => JSON.parse(l) as [number, string, string])
      .filter((e) => e[1] === "o")
      .map((e) => e[2])
      .join("");
    expect(output).toContain("recorded-42");

    // bob (not admin) neither lists nor reads dave's recording; alice (admin) reads it.
    const bobList = await fx.client.send({ path: "/v1/webapi/sessions?limit=500", headers: bearer(bob) });
    expect((bobList.json as { items: Rec[] }).items.some((r) => r.id === rec?.id)).toBe(false);
    const bobRead = await fx.client.send({
      path: `/v1/webapi/sessions/${rec.id}/recording`,
      headers: bearer(bob),
    });
    expect(bobRead.status).toBe(404);
    const adminRead = await fx.client.send({
      path: `/v1/webapi/sessions/${rec.id}/recording`,
      headers: bearer(alice),
    });
    expect(adminRead.status).toBe(200);
    expect(adminRead.text).toBe(res.text);
    const none = await fx.client.send({
      path: `/v1/webapi/sessions/${randomUUID()}/recording`,
      headers: bearer(alice),
    });
    expect(none.status).toBe(404);
    const anon = await fx.client.send({ path: `/v1/webapi/sessions/${rec.id}/recording` });
    expect(anon.status).toBe(401);
  }, 120_000);
});
