// How an agent trusts auth on its first contact, before it holds any credential: a pin of the
// host CA (like kubeadm's discovery hash). The pin is "sha256:<hex>" of the CA certificate's
// SubjectPublicKeyInfo (DER), printed next to a join token. The agent fetches the CA PEMs over an
// unverified TLS connection (GetPublicKeys is public), keeps only a CA whose pin matches, and
// from then on verifies auth's server certificate against that CA: a man in the middle can serve
// any PEMs, but none that match the pin, and cannot present a server certificate from the real CA.
import { createHash, X509Certificate } from "node:crypto";
import { ChannelCredentials } from "@grpc/grpc-js";
import { BadParameterError, NotAuthenticatedError } from "../../core/errors.ts";
import { callUnary } from "../auth/client.ts";
import { AuthServiceClientConstructor, CLIENT_MESSAGE_LIMITS } from "../auth/proto.ts";
import { withoutIpServerName } from "../auth/tls.ts";

const PIN = /^sha256:[0-9a-f]{64}$/;

/** "sha256:<hex>" of the certificate's public key (SPKI DER). */
export function caPin(caCertPem: string): string {
  const spki = new X509Certificate(caCertPem).publicKey.export({ type: "spki", format: "der" });
  return `sha256:${createHash("sha256").update(spki).digest("hex")}`;
}

export function checkCaPin(pin: string): string {
  const p = pin.trim().toLowerCase();
  if (!PIN.test(p)) throw new BadParameterError("CA pin must look like sha256:<64 hex digits>");
  return p;
}

/** The host CA PEM(s) auth publishes whose pin is `pin`; throws when none matches. */
export async function fetchPinnedHostCa(
  address: string,
  pin: string,
  opts: { serverName?: string; timeoutMs?: number } = {},
): Promise<string[]> {
  const want = checkCaPin(pin);
  // Unverified on purpose: the pin, not this connection, is what is trusted.
  const creds = withoutIpServerName(
    ChannelCredentials.createSsl(null, null, null, { rejectUnauthorized: false }),
  );
  const options: Record<string, string | number> = { ...CLIENT_MESSAGE_LIMITS };
  if (opts.serverName) options["grpc.ssl_target_name_override"] = opts.serverName;
  const client = new AuthServiceClientConstructor(address, creds, options);
  try {
    const pub = await callUnary(client, "GetPublicKeys", {}, undefined, {
      deadline: Date.now() + (opts.timeoutMs ?? 30_000),
    });
    const matching = (pub.host_ca_pems ?? []).filter((pem) => {
      try {
        return caPin(pem) === want;
      } catch {
        return false;
      }
    });
    if (matching.length === 0)
      throw new NotAuthenticatedError("auth's host CA does not match the CA pin: refusing to join");
    return matching;
  } finally {
    client.close();
  }
}
