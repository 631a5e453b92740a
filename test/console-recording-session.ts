// A real recorded SSH session for the console's recordings and audit tests: a user opens the
// terminal WebSocket to the fixture's node agent, runs a command that prints over a few seconds
// (so there is something to seek through), exits, and the agent uploads the recording.
import type { ConsolePlatform } from "./console-kit.ts";
import { mustOpen } from "./terminal-client.ts";
import { NODES, PUBLIC_HOST } from "./terminal-fixture.ts";

export interface RecordedSession {
  id: string;
  user: string;
  node: string;
}

/** Runs `script` as `user` (login root) on the agent's node and waits until its recording is listed. */
export async function recordSession(
  platform: ConsolePlatform,
  user: string,
  script: string,
  expect: string,
): Promise<RecordedSession> {
  const { fx } = platform;
  const { sessionId } = await fx.login(user);
  const headers = { authorization: `Bearer ${sessionId}` };
  const before = new Set((await listOwn(platform, headers)).map((r) => r.id));
  const c = await mustOpen({
    baseUrl: fx.proxy.url,
    caPem: fx.hostCaPem,
    servername: PUBLIC_HOST,
    query: { node: NODES.agent, login: "root", cols: "80", rows: "24" },
    headers,
  });
  await c.waitControl("ready");
  c.type(`${script}; exit\r`);
  await c.waitFor(expect, 30_000);
  await c.closed;
  for (let i = 0; i < 300; i++) {
    const fresh = (await listOwn(platform, headers)).find(
      (r) => !before.has(r.id) && r.user === user && r.node === NODES.agent,
    );
    if (fresh) return fresh;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the recording of ${user}'s session was never listed`);
}

async function listOwn(
  platform: ConsolePlatform,
  headers: Record<string, string>,
): Promise<RecordedSession[]> {
  const res = await platform.fx.client.send({ path: "/v1/webapi/sessions?limit=500", headers });
  if (res.status !== 200) throw new Error(`GET /v1/webapi/sessions: ${res.status} ${res.text}`);
  return (res.json as { items: RecordedSession[] }).items;
}
