// `svcd start` renews the proxy's own certificates live (server/embedded/proxy-renewal.ts): after
// a renewal a new TLS connection to the public port gets the new server certificate while a
// connection opened before keeps working, and the proxy's calls to auth (login, admin API) go on
// with the rebuilt clients and the new client certificate. No restart.
import { X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningPlatform, startEmbedded } from "../server/embedded/start.ts";
import { HttpsClient } from "./proxy-https-client.ts";

const ADMIN_PASSWORD = "admin-renewal-password-1";
let dir = "";
let platform: RunningPlatform;
let publicHost = "";
const sockets: TLSSocket[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-embedded-renewal-"));
  const passwordFile = join(dir, "admin-password");
  await writeFile(passwordFile, ADMIN_PASSWORD);
  platform = await startEmbedded(
    { dataDir: join(dir, "data"), authListen: "127.0.0.1:0", proxyListen: "127.0.0.1:0" },
    { env: { SVC_ADMIN_PASSWORD_FILE: passwordFile }, logger: pino({ level: "silent" }) },
  );
  const publicAddr = platform.data.config.proxy.public_addr;
  publicHost = publicAddr.slice(0, publicAddr.lastIndexOf(":"));
}, 60_000);

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await platform?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A TLS connection to the public port (HTTP/1.1), kept open; resolves once the handshake is done. */
function open(): Promise<TLSSocket> {
  const url = new URL(platform.proxyUrl);
  return new Promise((resolve, reject) => {
    const s = tlsConnect({
      host: url.hostname,
      port: Number(url.port),
      servername: publicHost,
      ca: platform.hostCaPem,
      ALPNProtocols: ["http/1.1"],
    });
    sockets.push(s);
    s.once("secureConnect", () => resolve(s));
    s.once("error", reject);
  });
}

const serialOf = (s: TLSSocket): string => s.getPeerX509Certificate()?.serialNumber ?? "";

/** One HTTP/1.1 request on an open connection; resolves with the status line. */
function ping(s: TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = "";
    const onData = (d: Buffer) => {
      got += d.toString("latin1");
      const end = got.indexOf("\r\n");
      if (end >= 0) {
        s.off("data", onData);
        resolve(got.slice(0, end));
      }
    };
    s.on("data", onData);
    s.once("error", reject);
    s.write(`GET /v1/webapi/ping HTTP/1.1\r\nHost: ${publicHost}\r\nConnection: keep-alive\r\n\r\n`);
  });
}

async function loginWorks(): Promise<void> {
  const client = new HttpsClient(platform.proxyUrl, platform.hostCaPem, publicHost);
  const res = await client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username: "admin", password: ADMIN_PASSWORD },
  });
  expect(res.status, res.text).toBe(200);
  const session = (res.json as { session_id: string }).session_id;
  const users = await client.send({
    method: "GET",
    path: "/v1/webapi/admin/users",
    headers: { authorization: `Bearer ${session}` },
  });
  expect(users.status, users.text).toBe(200);
}

describe("svcd start: the proxy's certificates renew live", () => {
  it("serves new connections the new server certificate, keeps old ones, and calls auth with the new client certificate", async () => {
    const before = await open();
    const beforeSerial = serialOf(before);
    const oldServer = platform.proxyIdentity.serverTls().certPem;
    const oldClient = platform.proxyIdentity.clientTls().certPem;
    expect(beforeSerial).toBe(new X509Certificate(oldServer).serialNumber);
    expect(await ping(before)).toMatch(/^HTTP\/1\.1 200/);
    await loginWorks();

    await platform.proxyIdentity.renewNow();

    const newServer = platform.proxyIdentity.serverTls().certPem;
    const newClient = new X509Certificate(platform.proxyIdentity.clientTls().certPem);
    expect(newServer).not.toBe(oldServer);
    expect(newClient.serialNumber).not.toBe(new X509Certificate(oldClient).serialNumber);
    // The client certificate still names the proxy and is fresh (24 h from now).
    expect(newClient.subjectAltName).toContain("URI:svc://proxy/");
    expect(newClient.validToDate.getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);

    const after = await open();
    expect(serialOf(after)).toBe(new X509Certificate(newServer).serialNumber);
    expect(serialOf(after)).not.toBe(beforeSerial);
    // The connection opened before the renewal is still served.
    expect(await ping(before)).toMatch(/^HTTP\/1\.1 200/);
    expect(await ping(after)).toMatch(/^HTTP\/1\.1 200/);
    // Logins and admin calls go through the rebuilt gRPC clients.
    await loginWorks();
    // And again: each renewal rebuilds from the certificate in force.
    await platform.proxyIdentity.renewNow();
    await loginWorks();
  }, 60_000);
});
