// The agent's one-time join: fresh host and TLS keys (they never leave the node), RegisterAgent
// with the token, and the answer stored as the agent's identity (identity.ts).
import { readFile } from "node:fs/promises";
import { generateSshKeyPair } from "../../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../../core/certs/x509.ts";
import { BadParameterError } from "../../core/errors.ts";
import { callUnary, createAuthClient } from "../auth/client.ts";
import { fetchPinnedHostCa } from "./ca-pin.ts";
import type { AgentIdentity } from "./identity.ts";

export interface JoinOptions {
  authAddress: string;
  authServerName?: string;
  /** "sha256:<hex>" of the host CA public key (see ca-pin.ts) */
  caPin?: string;
  /** PEM file with the host CA certificate(s) */
  caFile?: string;
  token: string;
  hostname: string;
  addresses: string[];
  labels: Record<string, string>;
}

/** The host CA PEMs to verify auth with on the first contact (pin or file; one is required). */
export async function firstContactCa(
  o: Pick<JoinOptions, "authAddress" | "authServerName" | "caPin" | "caFile">,
): Promise<string[]> {
  if (o.caFile) {
    const pem = await readFile(o.caFile, "utf8");
    if (!pem.includes("-----BEGIN CERTIFICATE-----"))
      throw new BadParameterError("CA file holds no PEM certificate");
    return [pem];
  }
  if (o.caPin) {
    return fetchPinnedHostCa(
      o.authAddress,
      o.caPin,
      o.authServerName ? { serverName: o.authServerName } : {},
    );
  }
  throw new BadParameterError("the first join needs --ca-pin or --ca-file to trust auth");
}

export async function joinCluster(o: JoinOptions): Promise<AgentIdentity> {
  const caPems = await firstContactCa(o);
  const host = generateSshKeyPair("ed25519", { comment: o.hostname });
  const tls = generateEcdsaP256();
  const client = createAuthClient({
    address: o.authAddress,
    caPems,
    ...(o.authServerName ? { serverName: o.authServerName } : {}),
  });
  try {
    const res = await callUnary(client, "RegisterAgent", {
      token: o.token,
      hostname: o.hostname,
      host_ssh_public_key: host.publicLine,
      tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
      labels: o.labels,
      addresses: o.addresses,
      agentless: false,
    });
    if (!res.agent_id || !res.host_ssh_certificate || !res.tls_certificate_pem)
      throw new BadParameterError("auth's join answer is incomplete");
    return {
      version: 1,
      agentId: res.agent_id,
      hostname: o.hostname,
      hostKeyOpenSsh: host.privateOpenSsh,
      hostCertificate: res.host_ssh_certificate,
      tlsKeyPem: privateKeyToPem(tls.privateKey),
      tlsCertificatePem: res.tls_certificate_pem,
      // Keep trusting what we verified auth with, plus what auth says it uses now.
      hostCaPems: [...new Set([...caPems, ...(res.host_ca_pems ?? [])])],
      userCaSshPublicKeys: res.user_ca_ssh_public_keys ?? [],
      labels: o.labels,
    };
  } finally {
    client.close();
  }
}
