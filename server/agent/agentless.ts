// Agentless mode: a plain OpenSSH sshd joins as a node. This registers the sshd's existing host
// key with a node join token (RegisterAgent with agentless=true; no X.509 identity, since the
// node never calls auth) and writes the files sshd needs beside it:
//   HostCertificate   <out>/ssh_host_cert.pub  (host certificate from the host CA)
//   TrustedUserCAKeys <out>/user_ca.pub        (the user CA keys)
//   <out>/sshd_config.svc                      (those two, plus the principals rule below)
// Plain sshd cannot ask auth about roles and node labels, so the node accepts a login only for a
// certificate that names "<login>@<node id>" (AuthorizedPrincipalsCommand prints exactly that):
// auth puts such principals only into certificates of identities whose roles allow that login on
// this node's labels (server/auth/user-cert-content.ts).
// Auth then checks the node's reachability itself (server/auth/agent-probe.ts). See docs/agent.md.
// Run again for the same sshd (same hostname and host key, a new token), it keeps the node ID and
// rewrites both files: the host certificate from the host CA's signing key of the day and every
// user CA key auth trusts now. That is how an agentless node follows a CA rotation
// (docs/ca-rotation.md, "Clients and nodes"): sshd reads TrustedUserCAKeys at each login, and
// reloads HostCertificate on SIGHUP.
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../core/atomic-file.ts";
import { parseSshPublicKey } from "../../core/certs/ssh-keys.ts";
import { BadParameterError } from "../../core/errors.ts";
import { callUnary, createAuthClient } from "../auth/client.ts";
import { authRouteOf } from "./auth-target.ts";
import { firstContactCa } from "./join.ts";

export interface AgentlessRegistrationOptions {
  /** auth's gRPC "host:port", or proxyAddress (auth-target.ts) */
  authAddress?: string;
  authServerName?: string;
  /** the proxy's public "host:port": auth is reached through it */
  proxyAddress?: string;
  caPin?: string;
  caFile?: string;
  token: string;
  hostname: string;
  /** where the proxy dials the sshd, "host:port" */
  address: string;
  labels?: Record<string, string>;
  /** the sshd host public key file (e.g. /etc/ssh/ssh_host_ed25519_key.pub) */
  hostPublicKeyFile: string;
  /** folder for ssh_host_cert.pub and user_ca.pub */
  outDir: string;
}

export interface AgentlessRegistration {
  nodeId: string;
  hostCertificatePath: string;
  trustedUserCaKeysPath: string;
  /** sshd_config lines that make sshd enforce this platform's rules (also written to sshdConfigPath) */
  sshdConfig: string[];
  sshdConfigPath: string;
  /** PEM host CA certificates (what auth was verified with) */
  hostCaPems: string[];
}

export async function registerAgentlessNode(o: AgentlessRegistrationOptions): Promise<AgentlessRegistration> {
  const hostKey = (await readFile(o.hostPublicKeyFile, "utf8")).trim();
  parseSshPublicKey(hostKey);
  const route = await authRouteOf(o);
  const via = {
    authAddress: route.address,
    ...(route.serverName ? { authServerName: route.serverName } : {}),
  };
  const caPems = await firstContactCa({
    ...via,
    ...(o.caPin ? { caPin: o.caPin } : {}),
    ...(o.caFile ? { caFile: o.caFile } : {}),
  });
  const client = createAuthClient({
    address: route.address,
    caPems,
    ...(route.serverName ? { serverName: route.serverName } : {}),
  });
  try {
    const res = await callUnary(client, "RegisterAgent", {
      token: o.token,
      hostname: o.hostname,
      host_ssh_public_key: hostKey,
      tls_public_key_pem: "",
      labels: o.labels ?? {},
      addresses: [o.address],
      agentless: true,
    });
    if (!res.agent_id || !res.host_ssh_certificate)
      throw new BadParameterError("auth's join answer is incomplete");
    await mkdir(o.outDir, { recursive: true, mode: 0o755 });
    const hostCertificatePath = join(o.outDir, "ssh_host_cert.pub");
    const trustedUserCaKeysPath = join(o.outDir, "user_ca.pub");
    const userCaKeys = [...new Set((res.user_ca_ssh_public_keys ?? []).map((k) => k.trim()).filter(Boolean))];
    if (userCaKeys.length === 0) throw new BadParameterError("auth's join answer names no user CA key");
    // Public material only: readable is fine (sshd reads them as root anyway). Atomic, since a
    // running sshd may read them at any moment (a re-run rewrites them under it).
    await writeFileAtomic(hostCertificatePath, `${res.host_ssh_certificate.trim()}\n`, 0o644);
    await writeFileAtomic(trustedUserCaKeysPath, `${userCaKeys.join("\n")}\n`, 0o644);
    const sshdConfig = agentlessSshdConfig(res.agent_id, hostCertificatePath, trustedUserCaKeysPath);
    const sshdConfigPath = join(o.outDir, "sshd_config.svc");
    await writeFileAtomic(sshdConfigPath, `${sshdConfig.join("\n")}\n`, 0o644);
    return {
      nodeId: res.agent_id,
      hostCertificatePath,
      trustedUserCaKeysPath,
      sshdConfig,
      sshdConfigPath,
      hostCaPems: [...new Set([...caPems, ...(res.host_ca_pems ?? [])])],
    };
  } finally {
    client.close();
  }
}

/**
 * The sshd_config lines of an agentless node. AuthorizedPrincipalsCommand replaces the default
 * "principal == login" rule: sshd runs it (no shell; %u is the login asked for) and accepts only a
 * certificate principal equal to a line it prints. /bin/echo is root-owned on every system, which
 * sshd requires of the command; "nobody" runs it.
 */
export function agentlessSshdConfig(
  nodeId: string,
  hostCertificatePath: string,
  userCaPath: string,
): string[] {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(nodeId)) throw new BadParameterError("auth answered a malformed node id");
  return [
    `HostCertificate ${hostCertificatePath}`,
    `TrustedUserCAKeys ${userCaPath}`,
    `AuthorizedPrincipalsCommand /bin/echo %u@${nodeId}`,
    "AuthorizedPrincipalsCommandUser nobody",
  ];
}
