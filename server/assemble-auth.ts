// Builds the auth server with every handler it serves, from the loaded CAs, state backend and
// resource source. Shared by `svcd start` (embedded) and `svcd auth` (Kubernetes), so both run
// exactly the same RPC set.
import { readFile } from "node:fs/promises";
import type { Backend } from "../core/backend/backend.ts";
import type { CertificateAuthorities } from "../core/ca/authorities.ts";
import type { Clock } from "../core/clock.ts";
import { parseDuration } from "../core/duration.ts";
import type { ResourceSource, ResourceWriter } from "../core/sources/source.ts";
import { AgentlessProbe } from "./auth/agent-probe.ts";
import { runtimeCaLifetime } from "./auth/ca-lifetimes.ts";
import { CaRotation } from "./auth/ca-rotation.ts";
import { AgentJoin } from "./auth/join-agent.ts";
import { machineIdentityHandlers } from "./auth/machine-identity-deps.ts";
import { NodeRenewal } from "./auth/node-renewal.ts";
import { type RunningAuthServer, startAuthServer } from "./auth/server.ts";
import type { SsoOptions } from "./auth/sso/flow.ts";
import { ConnectorSecretReader } from "./auth/sso/secrets.ts";
import type { Config } from "./config.ts";
import type { Logger } from "./logger.ts";
import { proxyConfigFrom, relyingParty } from "./proxy/config.ts";
import { configPath, roleKubeConfig } from "./roles/common.ts";
import { SERVER_VERSION } from "./version.ts";
import { authKeyMaterial, type TlsIdentity } from "./wiring.ts";

export interface AuthRole {
  server: RunningAuthServer;
  close(): Promise<void>;
}

/**
 * Single sign-on as the config says: connector secrets from files (relative to the data folder)
 * and, with the Kubernetes source, from Secrets in auth's namespace; auth.sso.ca_file's anchors.
 */
export async function ssoOptions(config: Config): Promise<SsoOptions> {
  const caFile = config.auth.sso?.ca_file;
  let caPem: string | undefined;
  if (caFile) {
    try {
      caPem = await readFile(configPath(config, caFile), "utf8");
    } catch (err) {
      throw new Error(
        `cannot read auth.sso.ca_file ${caFile}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
      );
    }
  }
  const source = config.source;
  const secrets = new ConnectorSecretReader({
    baseDir: configPath(config, "."),
    ...(source.type === "kubernetes"
      ? { kube: { kubeConfig: roleKubeConfig(config), namespace: source.namespace } }
      : {}),
  });
  return { secrets, ...(caPem ? { caPem } : {}) };
}

export async function startAuthRole(o: {
  config: Config;
  cas: CertificateAuthorities;
  backend: Backend;
  source: ResourceSource;
  /** Resource writes of the admin RPCs (svcctl users/tokens/agent-identities): folder or Kubernetes. */
  writer?: ResourceWriter;
  clock: Clock;
  logger: Logger;
  tls: TlsIdentity;
  listen: { host: string; port: number };
}): Promise<AuthRole> {
  const keys = authKeyMaterial(o.cas);
  const logger = o.logger.child({ component: "auth" });
  const nodeCertTtlSeconds = parseDuration(o.config.auth.node_cert_ttl) / 1000;
  const agentJoin = new AgentJoin({
    backend: o.backend,
    source: o.source,
    clock: o.clock,
    logger,
    hostSshSigner: o.cas.sshHostSigner,
    hostCa: o.cas.hostCa,
    publicKeys: keys.publicKeys,
    agentCertTtlSeconds: nodeCertTtlSeconds,
  });
  const nodeRenewal = new NodeRenewal({
    backend: o.backend,
    clock: o.clock,
    logger,
    hostSshSigner: o.cas.sshHostSigner,
    hostCa: o.cas.hostCa,
    publicKeys: keys.publicKeys,
    ttlSeconds: nodeCertTtlSeconds,
    // A switch of either host CA's signing key lets nodes renew at once (rotation-follow.ts).
    signingKeys: () => `${o.cas.hostCa.certPem}\n${o.cas.sshHostCaPublicKey}`,
  });
  // RotateCertAuthority/ListCertAuthorities, and the loop that reloads another replica's phase
  // change and moves automatic rotations (docs/ca-rotation.md).
  const caRotation = new CaRotation({
    cas: o.cas,
    backend: o.backend,
    logger,
    defaultGraceSeconds: parseDuration(o.config.auth.ca_rotation_grace) / 1000,
  });
  const writer = o.writer ? { writer: o.writer } : {};
  const server = await startAuthServer({
    // Bots and SPIFFE (Create/List/DeleteAgentIdentity, Bootstrap/Renew, AuthenticateSPIFFE).
    ...machineIdentityHandlers({
      backend: o.backend,
      source: o.source,
      ...writer,
      clock: o.clock,
      logger,
      cas: o.cas,
      agentJoin,
      jwtIssuer: o.config.proxy.oidc_issuer_url,
      ...(o.config.auth.iam?.sts_endpoints ? { stsEndpoints: o.config.auth.iam.sts_endpoints } : {}),
    }),
    ...writer,
    backend: o.backend,
    source: o.source,
    clock: o.clock,
    logger,
    keys,
    cluster: {
      clusterName: o.config.cluster_name,
      serverVersion: SERVER_VERSION,
      minClientVersion: o.config.client_tools.min_version,
      recommendedClientVersion: o.config.client_tools.recommended_version,
      localLogin: o.config.auth.local_login,
      ...(o.config.auth.first_admin ? { localLoginExempt: o.config.auth.first_admin.user } : {}),
      ...(o.config.auth.default_connector ? { defaultConnector: o.config.auth.default_connector } : {}),
    },
    sso: await ssoOptions(o.config),
    lockout: {
      maxFailures: o.config.auth.lockout.max_failures,
      lockoutMs: parseDuration(o.config.auth.lockout.duration),
    },
    sessionTtlMs: parseDuration(o.config.auth.session_ttl),
    ...(o.config.auth.lock_keepalive
      ? { lockKeepaliveSeconds: parseDuration(o.config.auth.lock_keepalive) / 1000 }
      : {}),
    // WebAuthn ceremonies are bound to the proxy's public address, decided here, not by callers.
    relyingParty: relyingParty(proxyConfigFrom(o.config, SERVER_VERSION)),
    // Application access: app hosts live under the proxy's public host; assertions by the App CA.
    apps: {
      publicUrl: proxyConfigFrom(o.config, SERVER_VERSION).publicUrl,
      signingKey: () => o.cas.appJwtKeys[0],
    },
    agentJoin,
    nodeRenewal,
    caRotation,
    // WatchTrust snapshots carry every CA's rotation state and go out again on each phase change.
    authorities: () => o.cas.status(),
    onAuthoritiesChange: (fn) => o.cas.onChange(fn),
    tls: { ...o.tls, clientCaPems: o.cas.trustedHostCaPems() },
    host: o.listen.host,
    port: o.listen.port,
  });
  const probe = new AgentlessProbe({
    backend: o.backend,
    clock: o.clock,
    logger,
    hostCaKeys: () => o.cas.trustedHostCaKeys(),
  });
  probe.start();
  o.cas.keySet.setRuntimeLifetime(
    runtimeCaLifetime({ source: o.source, backend: o.backend, clock: o.clock }),
  );
  caRotation.start();
  return {
    server,
    close: async () => {
      await caRotation.stop();
      await probe.stop();
      await server.close();
    },
  };
}
