// go-httpbin (pinned in scripts/tools/versions.env) as the internal web app behind the proxy:
// it echoes headers (/headers), sets cookies (/cookies/set), redirects (/redirect-to), streams
// (/drip, /stream/N) and echoes WebSocket messages (/websocket/echo).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createRootCa,
  generateEcdsaP256,
  issueTlsServerCert,
  privateKeyToPem,
} from "../../core/certs/x509.ts";
import { systemClock } from "../../core/clock.ts";
import { freePort } from "./ports.ts";
import { until } from "./svcd.ts";
import { toolPath } from "./tools.ts";

export interface Httpbin {
  /** http://127.0.0.1:<port>, or https:// with `tls` */
  url: string;
  /** With `tls`: the CA that issued its certificate (nobody trusts it unless told). */
  caPem?: string;
  port: number;
  /** Kills it and waits for the exit (a stopped upstream for "upstream down" cases). */
  stop(): Promise<void>;
}

/** A private CA and a certificate from it for 127.0.0.1, written to a fresh folder. */
async function selfIssued(): Promise<{ dir: string; caPem: string; cert: string; key: string }> {
  const dir = await mkdtemp(join(tmpdir(), "svc-httpbin-"));
  const caKey = generateEcdsaP256();
  const caPem = await createRootCa({
    privateKey: caKey.privateKey,
    commonName: "httpbin test CA",
    clock: systemClock,
  });
  const key = generateEcdsaP256();
  const certPem = await issueTlsServerCert(
    { certPem: caPem, privateKey: caKey.privateKey },
    { publicKey: key.publicKey, commonName: "127.0.0.1", ips: ["127.0.0.1"], clock: systemClock },
  );
  await writeFile(join(dir, "tls.crt"), certPem);
  await writeFile(join(dir, "tls.key"), privateKeyToPem(key.privateKey), { mode: 0o600 });
  return { dir, caPem, cert: join(dir, "tls.crt"), key: join(dir, "tls.key") };
}

/** go-httpbin on a free loopback port; `tls`: HTTPS with a certificate from a private CA. */
export async function startHttpbin(o: { tls?: boolean } = {}): Promise<Httpbin> {
  const port = await freePort();
  const tls = o.tls ? await selfIssued() : undefined;
  const child: ChildProcess = spawn(
    toolPath("go-httpbin"),
    [
      "-host",
      "127.0.0.1",
      "-port",
      String(port),
      "-log-level",
      "OFF",
      // Its default (10 s) would end slow responses and WebSockets on its own.
      "-max-duration",
      "10m",
      ...(tls ? ["-https-cert-file", tls.cert, "-https-key-file", tls.key] : []),
    ],
    { stdio: "ignore" },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `${tls ? "https" : "http"}://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    if (tls) await rm(tls.dir, { recursive: true, force: true });
  };
  try {
    // Ready once it accepts connections (a TLS one is not verified here: only its port is probed).
    await until("go-httpbin", () => child.exitCode === null && accepts(port), 30_000, 100);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, port, ...(tls ? { caPem: tls.caPem } : {}), stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port }, () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}
