// `svcd auth`: the auth role on its own, as the Kubernetes Deployment runs it. Resources come from
// the informer cache (KubernetesSource), state from the shared backend (PostgreSQL), CA keys from
// Secrets (or files). Auth issues its own TLS server certificate (renewed at half-life, swapped
// into the live gRPC server) and, as the only CA holder, the proxy's identity Secret. The diagnostics listener starts first, so /healthz answers while auth
// waits for its CAs; /readyz turns true once the resource cache has synced and gRPC is serving.

import { hostname } from "node:os";
import type { Backend } from "../../core/backend/backend.ts";
import { openBackend } from "../../core/backend/index.ts";
import { CertificateAuthorities } from "../../core/ca/authorities.ts";
import { type CaKeyStore, FileCaKeyStore } from "../../core/ca/key-store.ts";
import { SecretRotationStateStore } from "../../core/ca/rotation-secret-store.ts";
import { FileRotationStateStore, type RotationStateStore } from "../../core/ca/rotation-store.ts";
import { SecretCaKeyStore } from "../../core/ca/secret-store.ts";
import { type Clock, systemClock } from "../../core/clock.ts";
import { parseDuration } from "../../core/duration.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import { type AuthRole, startAuthRole } from "../assemble-auth.ts";
import { HostCaFollower } from "../auth/ca-rotation.ts";
import { FirstAdminSecret } from "../auth/first-admin.ts";
import { type Config, loadConfigFile, postgresUrl, splitHostPort } from "../config.ts";
import { createMetricsRegistry, type Diagnostics, startDiagnostics } from "../diagnostics.ts";
import { createLogger, type Logger } from "../logger.ts";
import { untilSignal } from "../signals.ts";
import { issueServerIdentity } from "../wiring.ts";
import {
  Closers,
  configPath,
  retryUntil,
  roleKubeConfig,
  sourceFresh,
  sourceGauges,
  startSource,
} from "./common.ts";
import { LiveResources } from "./live-source.ts";
import { ProxyIdentitySecret, proxyPublicNames } from "./proxy-identity.ts";
import { ServerCertRenewer } from "./server-cert-renewal.ts";

export interface RoleDeps {
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  logger?: Logger;
  /** Aborting it gives up a start that still waits (for CAs, an identity): the start rejects. */
  signal?: AbortSignal;
}

export interface RunningAuth {
  /** host:port of the gRPC listener (the bound port). */
  address: string;
  diagnosticsPort: number | undefined;
  cas: CertificateAuthorities;
  /** The resource cache auth decides from (objects being deleted already hidden). */
  resources: ResourceSource;
  backend: Backend;
  /** Source synced and gRPC serving. */
  ready(): boolean;
  close(): Promise<void>;
}

/** The names on auth's server certificate: tls_names, the advertise host and the listen host. */
export function authTlsNames(config: Config): string[] {
  const hosts = [
    ...(config.auth.tls_names ?? []),
    splitHostPort(config.auth.advertise_addr ?? config.auth.listen_addr).host,
    splitHostPort(config.auth.listen_addr).host,
  ];
  return [...new Set(hosts.filter((h) => h !== "" && h !== "0.0.0.0" && h !== "::"))];
}

function caStore(config: Config, kubeConfig: () => ReturnType<typeof roleKubeConfig>): CaKeyStore {
  const store = config.ca_store;
  if (store.type === "files") return new FileCaKeyStore(configPath(config, store.path));
  return new SecretCaKeyStore({
    kubeConfig: kubeConfig(),
    namespace: store.namespace,
    ...(store.secret_prefix ? { prefix: store.secret_prefix } : {}),
  });
}

/** Where the CA rotation phases live: beside the key files, or one mutable Secret beside the CA Secrets. */
function rotationStore(
  config: Config,
  kubeConfig: () => ReturnType<typeof roleKubeConfig>,
): RotationStateStore {
  const store = config.ca_store;
  if (store.type === "files") return new FileRotationStateStore(configPath(config, store.path));
  return new SecretRotationStateStore({
    kubeConfig: kubeConfig(),
    namespace: store.namespace,
    ...(store.secret_prefix ? { prefix: store.secret_prefix } : {}),
  });
}

async function openStateBackend(config: Config, env: NodeJS.ProcessEnv, clock: Clock, logger: Logger) {
  const b = config.backend;
  if (b.type === "sqlite")
    return openBackend({ type: "sqlite", path: configPath(config, b.path) }, { clock });
  return openBackend(
    {
      type: "postgres",
      connectionString: await postgresUrl(b, env),
      ...(b.schema ? { schema: b.schema } : {}),
    },
    // An idle connection's error (database restart) is logged; the pool reconnects.
    { clock, onError: (err) => logger.warn({ err: err.message }, "postgres connection error") },
  );
}

export async function startAuth(config: Config, deps: RoleDeps = {}): Promise<RunningAuth> {
  const env = deps.env ?? process.env;
  const clock = deps.clock ?? systemClock;
  const logger = (deps.logger ?? createLogger({ level: config.log_level, name: "svcd-auth" })).child({
    component: "auth",
  });
  const closers = new Closers(logger);
  const stopping = new AbortController();
  closers.add(() => stopping.abort(new Error("auth is stopping")));
  let kube: ReturnType<typeof roleKubeConfig> | undefined;
  const kubeConfig = () => {
    kube ??= roleKubeConfig(config);
    return kube;
  };
  let source: (ResourceSource & { synced(): boolean }) | undefined;
  let serving = false;
  const ready = () => serving && (source?.synced() ?? false) && sourceFresh(config, source ?? {});

  try {
    const registry = createMetricsRegistry("auth");
    let diagnostics: Diagnostics | undefined;
    if (config.auth.diagnostics_addr) {
      const d = splitHostPort(config.auth.diagnostics_addr);
      diagnostics = await startDiagnostics(registry, d.host, d.port, { ready });
      const running = diagnostics;
      closers.add(() => running.close());
    }

    // The operator creates the CA Secrets in Kubernetes mode (auth may only read them): wait.
    const store = caStore(config, kubeConfig);
    const cas = await retryUntil(
      "the certificate authorities",
      () =>
        CertificateAuthorities.loadOrCreate(store, {
          clusterName: config.cluster_name,
          trustDomain: config.trust_domain ?? config.cluster_name,
          clock,
          rotationStore: rotationStore(config, kubeConfig),
          nodeCertTtlSeconds: parseDuration(config.auth.node_cert_ttl) / 1000,
        }),
      { logger, signal: deps.signal ? AbortSignal.any([deps.signal, stopping.signal]) : stopping.signal },
    );

    const backend = await openStateBackend(config, env, clock, logger);
    closers.add(() => backend.close());

    const raw = await startSource(config, kubeConfig, logger);
    closers.add(() => raw.stop());
    const resources = new LiveResources(raw);
    source = resources;
    sourceGauges(registry, resources);

    const listen = splitHostPort(config.auth.listen_addr);
    const issueTls = () =>
      issueServerIdentity(cas, { commonName: "auth", hosts: authTlsNames(config), clock });
    const tls = await issueTls();
    const role: AuthRole = await startAuthRole({
      config,
      cas,
      backend,
      source: resources,
      writer: raw,
      clock,
      logger,
      tls,
      listen,
    });
    closers.add(() => role.close());
    // Trusts every trusted host CA and re-issues the certificate when a CA rotation switches keys.
    const follower = new HostCaFollower({
      cas,
      initial: tls,
      issue: issueTls,
      apply: (t) => role.server.setTls(t),
      logger,
    });
    follower.start();
    closers.add(() => follower.stop());
    // 90-day certificate, re-issued at half-life and swapped in for new connections (no restart).
    const renewer = new ServerCertRenewer({
      current: tls,
      issue: issueTls,
      apply: (fresh) => follower.set(fresh),
      clock,
      logger,
    });
    renewer.start();
    closers.add(() => renewer.stop());
    serving = true;
    closers.add(() => {
      serving = false;
    });

    const identity = config.auth.proxy_identity;
    if (identity) {
      if (config.source.type !== "kubernetes") {
        throw new Error(
          "auth.proxy_identity needs the kubernetes source (it writes a Secret in its namespace)",
        );
      }
      const manager = new ProxyIdentitySecret({
        kubeConfig: kubeConfig(),
        namespace: config.source.namespace,
        secretName: identity.secret_name,
        cas,
        // The public host and its app hosts (*.<host>, docs/apps.md), then the in-cluster names.
        names: [...proxyPublicNames(splitHostPort(config.proxy.public_addr).host), ...identity.dns_names],
        clientName: config.cluster_name,
        ttlMs: parseDuration(identity.ttl),
        clock,
        logger,
      });
      manager.start();
      closers.add(() => manager.stop());
    }

    const firstAdmin = config.auth.first_admin;
    if (firstAdmin) {
      if (config.source.type !== "kubernetes")
        throw new Error("auth.first_admin needs the kubernetes source (it writes a Secret in its namespace)");
      const keeper = new FirstAdminSecret({
        kubeConfig: kubeConfig(),
        namespace: config.source.namespace,
        secretName: firstAdmin.secret_name,
        user: firstAdmin.user,
        publicAddr: config.proxy.public_addr,
        backend,
        source: resources,
        clock,
        logger,
        instance: env["POD_NAME"] ?? hostname(),
      });
      keeper.start();
      closers.add(() => keeper.stop());
    }

    return {
      address: `${listen.host}:${role.server.port}`,
      diagnosticsPort: diagnostics?.port,
      cas,
      resources,
      backend,
      ready,
      close: () => closers.close(),
    };
  } catch (err) {
    await closers.close();
    throw err;
  }
}

/** `svcd auth --config FILE`: runs until SIGTERM/SIGINT, then drains and exits. */
export async function runAuth(opts: { config: string }): Promise<void> {
  const config = await loadConfigFile(opts.config);
  const logger = createLogger({ level: config.log_level, name: "svcd-auth" });
  // A signal while auth still waits for its CAs stops it too.
  const stop = new AbortController();
  void untilSignal().then(() => stop.abort(new Error("stopped by a signal")));
  let auth: RunningAuth;
  try {
    auth = await startAuth(config, { logger, signal: stop.signal });
  } catch (err) {
    if (stop.signal.aborted) return;
    throw err;
  }
  logger.info({ address: auth.address, diagnosticsPort: auth.diagnosticsPort }, "auth is serving");
  if (!stop.signal.aborted) await new Promise((resolve) => stop.signal.addEventListener("abort", resolve));
  await auth.close();
}
