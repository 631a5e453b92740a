// Certificate login with ssh2 (patched, see docs/ssh2-patch.md): the one way our proxy and CLI
// open SSH connections to nodes. Errors come back typed; nothing secret is put in a message.
import type { KeyObject } from "node:crypto";
import type { Duplex } from "node:stream";
import ssh2, { type PublicKeyAuthMethod, type ServerHostKeyAlgorithm } from "ssh2";
import { parseSshCertificate } from "../certs/ssh-cert.ts";
import { sshPublicKeyBlob } from "../certs/ssh-keys.ts";
import { BadParameterError, NotAuthenticatedError, UnavailableError } from "../errors.ts";
import { ssh2PrivateKey } from "./ssh2-key.ts";
import { HOST_CERT_ALGORITHMS } from "./ssh2-patch-types.ts";

export interface CertificateLoginOptions {
  /** where to dial; ignored with `sock` (then only a label in errors) */
  host: string;
  port: number;
  /**
   * A byte stream already open to the SSH server (a reverse tunnel, a WebSocket relay): used
   * instead of dialing host:port. Ended with the connection.
   */
  sock?: Duplex;
  username: string;
  /** the key the certificate certifies: a KeyObject or a PEM (OpenSSH, PKCS#8, PKCS#1, SEC1) */
  privateKey: KeyObject | string;
  /** OpenSSH user certificate line ("<type>-cert-v01@openssh.com <base64> [comment]") */
  certificate: string;
  /**
   * Called with the server's host key blob (with requireHostCertificate: the host certificate
   * blob). Return false to abort. Without it every host key is accepted: only for tests.
   */
  hostVerifier?: (hostKeyBlob: Buffer) => boolean;
  /** offer only host-certificate algorithms, so a server without a host certificate is refused */
  requireHostCertificate?: boolean;
  /** handshake + authentication budget; default 20 s */
  timeoutMs?: number;
  /** keepalive interval; default 15 s, 0 disables */
  keepaliveIntervalMs?: number;
}

// @types/ssh2 closes the algorithm names to the unpatched list; the patch supports these at runtime.
const hostCertAlgorithms = [...HOST_CERT_ALGORITHMS] as string[] as ServerHostKeyAlgorithm[];

export type SshClient = InstanceType<typeof ssh2.Client>;

// Pairs already found to match (certificate line -> key PEM). The proxy reuses a web session's key
// and certificate for many opens, and parsing both costs ~1 ms of CPU each time; the check is a
// pure function of the two strings, so a hit needs no parse. Bounded; oldest dropped first.
const MATCHED_MAX = 1024;
const matched = new Map<string, string>();

function checkCertificateMatchesKey(certificate: string, privateKeyPem: string): void {
  if (matched.get(certificate) === privateKeyPem) return;
  const cert = parseSshCertificate(certificate);
  if (cert.type !== "user") throw new BadParameterError("certificate is not a user certificate");
  const parsed = ssh2.utils.parseKey(privateKeyPem);
  if (parsed instanceof Error || Array.isArray(parsed))
    throw new BadParameterError("privateKey is not usable for SSH");
  if (!sshPublicKeyBlob(cert.publicKey).equals(parsed.getPublicSSH())) {
    throw new BadParameterError("certificate does not certify privateKey");
  }
  matched.set(certificate, privateKeyPem);
  if (matched.size > MATCHED_MAX) {
    const oldest = matched.keys().next().value;
    if (oldest !== undefined) matched.delete(oldest);
  }
}

/** Connects and authenticates with an OpenSSH user certificate; resolves once the session is ready. */
export async function connectWithCertificate(opts: CertificateLoginOptions): Promise<SshClient> {
  if (!opts.username) throw new BadParameterError("username is required");
  const key = ssh2PrivateKey(opts.privateKey);
  checkCertificateMatchesKey(opts.certificate, key);
  const verifier = opts.hostVerifier;
  const method: PublicKeyAuthMethod = {
    type: "publickey",
    username: opts.username,
    key,
    cert: opts.certificate,
    // No "would you accept this key?" round trip: the certificate is ours and meant for this
    // server, so asking first only delays the login (sshd and our agent take a signed request).
    signAtOnce: true,
  };
  const client = new ssh2.Client();
  return new Promise<SshClient>((resolve, reject) => {
    let settled = false;
    let hostRefused = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      client.end();
      reject(err);
    };
    client.once("ready", () => {
      if (settled) return;
      settled = true;
      client.removeListener("error", onError);
      // Later errors (connection reset) must not crash the process: callers watch "close".
      client.on("error", () => {});
      resolve(client);
    });
    const onError = (err: Error & { level?: string }): void => {
      if (hostRefused) fail(new NotAuthenticatedError("host key or host certificate is not trusted"));
      else if (err.level === "client-authentication")
        fail(new NotAuthenticatedError("the server refused the certificate"));
      else if (err.level === "client-timeout") fail(new UnavailableError("SSH handshake timed out"));
      else fail(new UnavailableError(`SSH connection failed: ${err.message}`, { cause: err }));
    };
    client.on("error", onError);
    client.once("close", () => fail(new UnavailableError("SSH connection closed before it was ready")));
    client.connect({
      ...(opts.sock ? { sock: opts.sock } : { host: opts.host, port: opts.port }),
      username: opts.username,
      readyTimeout: opts.timeoutMs ?? 20_000,
      keepaliveInterval: opts.keepaliveIntervalMs ?? 15_000,
      ...(opts.requireHostCertificate ? { algorithms: { serverHostKey: hostCertAlgorithms } } : {}),
      ...(verifier
        ? {
            hostVerifier: (blob: Buffer): boolean => {
              let ok = false;
              try {
                ok = verifier(blob);
              } catch {
                ok = false;
              }
              if (!ok) hostRefused = true;
              return ok;
            },
          }
        : {}),
      authHandler: [method],
    });
    // Nagle off (ssh2 leaves it on): a login writes small packets back to back, and with Nagle
    // the second can wait for the peer's delayed ACK (~40 ms on Linux). No-op on a `sock` stream
    // that is not a TCP socket.
    client.setNoDelay(true);
  });
}
