// `svcd proxy`: the proxy role on its own, as the Kubernetes Deployment runs it. It holds no CA key
// and no state: its TLS identity (server certificate for the public names, client certificate for
// auth) comes from the folder where the Secret auth issues is mounted; it waits for that folder to
// be complete, and reloads it when auth renews it. Resources (public connectors) come from the
// informer cache. /readyz on the diagnostics listener: source synced and auth answering.
import { Server as HttpsServer } from "node:https";
import { CoreV1Api } from "@kubernetes/client-node";
import { type Clock, systemClock } from "../../core/clock.ts";
import { webRoutes } from "../../web/serve.ts";
import type { AuthConnection } from "../auth/client.ts";
import { firstAuthAddress } from "../auth/client.ts";
import { type Config, loadConfigFile, splitHostPort } from "../config.ts";
import { createMetricsRegistry, type Diagnostics, startDiagnostics } from "../diagnostics.ts";
import { createLogger } from "../logger.ts";
import { forwarding } from "../proxy/api-layers.ts";
import { startAppAccess } from "../proxy/apps/index.ts";
import { GrpcCliAuthApi } from "../proxy/cli-auth-api.ts";
import { proxyConfigFrom } from "../proxy/config.ts";
import { GrpcAuthApi } from "../proxy/grpc-auth-api.ts";
import { startInventoryCache } from "../proxy/inventory-cache.ts";
import { startProxyTrust } from "../proxy/locks.ts";
import { hostPortOf, ProxyPeering, peerAddressOf } from "../proxy/peering/peering.ts";
import { recordingRoutes } from "../proxy/recordings-route.ts";
import { GrpcAdminAuthApi } from "../proxy/routes/admin-api.ts";
import { adminRoutes } from "../proxy/routes/admin-routes.ts";
import { passwordResetRoutes } from "../proxy/routes/password-reset.ts";
import { userCertRoutes } from "../proxy/routes/user-certs.ts";
import { type ProxyServer, startProxyServer } from "../proxy/server.ts";
import { SessionCache } from "../proxy/session-cache.ts";
import { GrpcTerminalAuthApi } from "../proxy/terminal-auth.ts";
import { terminalRoutes } from "../proxy/terminal-route.ts";
import { createProxyTunnels } from "../proxy/tunnel/index.ts";
import { GrpcNodeRegistrations, proxyAuthConnection } from "../proxy/tunnel/registration.ts";
import { untilSignal } from "../signals.ts";
import { SERVER_VERSION } from "../version.ts";
import type { RoleDeps } from "./auth.ts";
import {
  Closers,
  configPath,
  retryUntil,
  roleKubeConfig,
  sourceFresh,
  sourceGauges,
  startSource,
} from "./common.ts";
import {
  identityFromSecretData,
  type LoadedIdentity,
  readIdentityFolder,
  watchIdentityFolder,
} from "./identity-folder.ts";
import { LiveResources } from "./live-source.ts";
import type { ProxyIdentity } from "./proxy-identity.ts";
import { PUBLIC_TLS_POLL_MS, PublicTls } from "./public-tls.ts";

export interface RunningProxy {
  /** https://host:port actually bound */
  url: string;
  diagnosticsPort: number | undefined;
  /** Digest of the identity in use (changes on reload). */
  identityDigest(): string;
  close(): Promise<void>;
}

/**
 * The proxy's connection to auth for one identity (one channel, round-robin over the replicas of
 * proxy.auth_addr) and the wrappers routes use on it; replaced as a whole when the identity
 * changes. Streams (trust, sessions, inventory) take `connection` too.
 */
interface AuthClients {
  connection: AuthConnection;
  authApi: GrpcAuthApi;
  cliAuthApi: GrpcCliAuthApi;
  terminalAuth: GrpcTerminalAuthApi;
  adminApi: GrpcAdminAuthApi;
  registrations: GrpcNodeRegistrations;
}

function authClients(address: string, serverName: string, id: ProxyIdentity): AuthClients {
  const connection = proxyAuthConnection({
    address,
    caPems: [id.caPem],
    certPem: id.clientCertPem,
    keyPem: id.clientKeyPem,
    serverName,
  });
  return {
    connection,
    authApi: new GrpcAuthApi(connection),
    cliAuthApi: new GrpcCliAuthApi(connection),
    terminalAuth: new GrpcTerminalAuthApi(connection),
    adminApi: new GrpcAdminAuthApi(connection),
    registrations: new GrpcNodeRegistrations(connection),
  };
}

function closeClients(c: AuthClients): void {
  c.connection.close();
}

/** Old clients may still carry calls that began before a reload: closed after this grace. */
const OLD_CLIENTS_GRACE_MS = 60_000;

export async function startProxy(config: Config, deps: RoleDeps = {}): Promise<RunningProxy> {
  const clock: Clock = deps.clock ?? systemClock;
  const logger = (deps.logger ?? createLogger({ level: config.log_level, name: "svcd-proxy" })).child({
    component: "proxy",
  });
  const { auth_addr: authAddr, identity_dir: identityDirSetting } = config.proxy;
  if (!authAddr || !identityDirSetting) {
    throw new Error("svcd proxy needs proxy.auth_addr and proxy.identity_dir in the config");
  }
  const identityDir = configPath(config, identityDirSetting);
  // Several replicas (a list of IPs, or one name resolving to all): the TLS name defaults to
  // the first one's host; with IPs, auth_server_name names what auth's certificate says.
  const serverName = config.proxy.auth_server_name ?? splitHostPort(firstAuthAddress(authAddr)).host;
  const closers = new Closers(logger);
  const stopping = new AbortController();
  closers.add(() => stopping.abort(new Error("proxy is stopping")));

  let clients: AuthClients | undefined;
  let source: LiveResources | undefined;
  const ready = async (): Promise<boolean> =>
    Boolean(source?.synced()) &&
    sourceFresh(config, source ?? {}) &&
    clients !== undefined &&
    (await clients.authApi.health().catch(() => false));

  try {
    const registry = createMetricsRegistry("proxy");
    let diagnostics: Diagnostics | undefined;
    if (config.proxy.diagnostics_addr) {
      const d = splitHostPort(config.proxy.diagnostics_addr);
      diagnostics = await startDiagnostics(registry, d.host, d.port, { ready });
      const running = diagnostics;
      closers.add(() => running.close());
    }

    const raw = await startSource(config, () => roleKubeConfig(config), logger);
    closers.add(() => raw.stop());
    source = new LiveResources(raw);
    sourceGauges(registry, source);

    // Auth writes the Secret once it runs; the kubelet mounts it some seconds later.
    const signal = deps.signal ? AbortSignal.any([deps.signal, stopping.signal]) : stopping.signal;
    const identitySecret = config.source.type === "kubernetes" ? config.proxy.identity_secret : undefined;
    const secrets = identitySecret ? roleKubeConfig(config).makeApiClient(CoreV1Api) : undefined;
    let loaded: LoadedIdentity = await retryUntil(
      "the proxy identity",
      async () => {
        try {
          return await readIdentityFolder(identityDir);
        } catch (err) {
          if (!secrets || !identitySecret || config.source.type !== "kubernetes") throw err;
          // Not mounted yet: the same Secret through the API (RBAC: get on this one name).
          const secret = await secrets
            .readNamespacedSecret({ name: identitySecret, namespace: config.source.namespace })
            .catch(() => {
              throw err;
            });
          return await identityFromSecretData(secret.data ?? {});
        }
      },
      {
        logger,
        signal,
        maxDelayMs: 5_000,
      },
    );
    clients = authClients(authAddr, serverName, loaded.identity);
    closers.add(() => {
      if (clients) closeClients(clients);
    });
    const current = (): AuthClients => {
      if (!clients) throw new Error("proxy is stopped");
      return clients;
    };

    // proxy.public_tls: a browser-trusted certificate for its own names (SNI), the identity for
    // in-cluster names. Not there yet (cert-manager still issuing): the identity serves meanwhile.
    let publicTls: PublicTls | undefined;
    if (config.proxy.public_tls) {
      const { cert_file, key_file } = config.proxy.public_tls;
      publicTls = await PublicTls.start(
        { cert_file: configPath(config, cert_file), key_file: configPath(config, key_file) },
        {
          intervalMs: PUBLIC_TLS_POLL_MS,
          onLoad: (l) =>
            logger.info(
              { names: l.leaf.subjectAltName, notAfter: l.leaf.validTo },
              "public TLS certificate in service",
            ),
          onError: (err) =>
            logger.warn(
              { err: err instanceof Error ? err.message : String(err) },
              "public TLS certificate unusable; the last good one (or the proxy identity) serves its names",
            ),
        },
      );
      const running = publicTls;
      closers.add(() => running.close());
    }

    // Reverse tunnels (docs/tunnels.md), terminated with the mounted identity (reloads included);
    // auth says whether the node is still registered (a removed node's certificate outlives it).
    // Set once the proxy is bound (its peer address needs the port): the NodeDialer asks lazily.
    let peering: ProxyPeering | undefined;
    const tunnels = createProxyTunnels({
      peer: () => peering?.peerDial,
      isRegisteredNode: (id) => current().registrations.isRegistered(id),
      tls: () => ({
        certPem: loaded.identity.certPem,
        keyPem: loaded.identity.keyPem,
        caPems: [loaded.identity.caPem],
      }),
      logger: logger.child({ component: "proxy-tunnel" }),
    });
    // Locks reach the proxy pushed (WatchTrust as the proxy, with the mounted identity, reloads
    // included): locked users' sessions and terminals are refused and closed here (docs/locks.md).
    const trust = startProxyTrust({
      connection: () => current().connection,
      clock,
      logger: logger.child({ component: "proxy-trust" }),
      metrics: registry,
    });
    closers.add(() => trust.close());
    // Web sessions answered from memory while WatchSessions is live; every use asks auth while
    // it is not (docs/proxy-cache.md). Inside the lock guard: a locked user is refused at once.
    const sessions = new SessionCache({
      connection: () => current().connection,
      clock,
      logger: logger.child({ component: "proxy-sessions" }),
      metrics: registry,
    });
    sessions.start();
    closers.add(() => sessions.close());
    // The node list and the terminal's per-node decision from auth's pushed inventory, auth's
    // own code on the same data; auth answers while the copy cannot (docs/proxy-cache.md).
    const inventory = startInventoryCache({
      connection: () => current().connection,
      trust: trust.watcher,
      clock,
      logger: logger.child({ component: "proxy-inventory" }),
      metrics: registry,
    });
    closers.add(async () => inventory.close());
    // Application access (docs/apps.md): the app hosts' server, on the same TLS material (the
    // identity names *.<public host>; proxy.public_tls may too), locks and revocations.
    const apps = startAppAccess({
      connection: () => current().connection,
      publicUrl: proxyConfigFrom(config, SERVER_VERSION).publicUrl,
      tls: {
        certPem: loaded.identity.certPem,
        keyPem: loaded.identity.keyPem,
        ...(publicTls ? { sniCallback: publicTls.sniCallback } : {}),
      },
      locks: trust.locks,
      sessions,
      clock,
      logger: logger.child({ component: "proxy-apps" }),
      metrics: registry,
    });
    closers.add(() => apps.close());
    const proxy: ProxyServer = await startProxyServer({
      config: proxyConfigFrom(config, SERVER_VERSION),
      apps,
      tls: {
        certPem: loaded.identity.certPem,
        keyPem: loaded.identity.keyPem,
        ...(publicTls ? { sniCallback: publicTls.sniCallback } : {}),
      },
      authApi: inventory.serveAuthApi(
        trust.locks.guardSessions(sessions.guard(forwarding(() => current().authApi))),
      ),
      logger,
      ready: () => (source?.synced() ?? false) && sourceFresh(config, source ?? {}),
      resources: source,
      // gRPC for auth on the public port too: raw TCP, mutual TLS stays end to end.
      // (The first replica of a list: raw TCP cannot be balanced per call.)
      authPassthrough: { address: authAddr, serverName },
      metrics: registry,
      routes: [
        terminalRoutes({
          terminalAuth: inventory.serveTerminalAuth(forwarding(() => current().terminalAuth)),
          clock,
          dialer: tunnels.dialer,
          locks: trust.locks,
          // A web session reuses its terminal certificate per node; session events drop it.
          sessions,
        }),
        recordingRoutes({ terminalAuth: forwarding(() => current().terminalAuth) }),
        webRoutes(),
        passwordResetRoutes({ api: forwarding(() => current().cliAuthApi) }),
        userCertRoutes({ api: forwarding(() => current().cliAuthApi) }),
        adminRoutes({
          api: forwarding(() => current().adminApi),
          sourceType: config.source.type === "kubernetes" ? "kubernetes" : "folder",
          // Nodes reach auth at auth.advertise_addr when set (outside the cluster), else where we do.
          agentTarget: () => ({
            // The public port routes gRPC to auth: the join command names only it.
            proxyAddress: config.proxy.public_addr,
            authAddress: config.auth.advertise_addr ?? firstAuthAddress(authAddr),
            hostCaPem: loaded.identity.caPem,
            serverName,
          }),
        }),
      ],
    });
    closers.add(() => proxy.close());
    // Any replica reaches any tunnelled node (docs/tunnels.md, "Several proxies"): this one relays
    // svc-peer into its tunnels and tells its agents where to be found, with the mounted identity.
    const running = new ProxyPeering({
      tunnels: tunnels.registry,
      identity: () => ({
        certPem: loaded.identity.certPem,
        keyPem: loaded.identity.keyPem,
        clientCertPem: loaded.identity.clientCertPem,
        clientKeyPem: loaded.identity.clientKeyPem,
        caPems: [loaded.identity.caPem],
      }),
      peerAddr: peerAddressOf({
        listen_addr: hostPortOf(proxyConfigFrom(config, SERVER_VERSION).listenHost, proxy.port),
        peer_addr: config.proxy.peer_addr,
      }),
      logger: logger.child({ component: "proxy-peering" }),
    });
    peering = running;
    running.register(proxy.router);
    closers.add(() => running.close());
    logger.info({ proxyId: running.selfId, peerAddr: running.peerAddr }, "proxy peering ready");
    tunnels.attach(proxy.router);
    closers.add(() => tunnels.close());

    const stopWatching = watchIdentityFolder(
      identityDir,
      loaded.digest,
      (next) => {
        const server = proxy.app.server;
        if (server instanceof HttpsServer) {
          server.setSecureContext({
            cert: next.identity.certPem,
            key: next.identity.keyPem,
            minVersion: "TLSv1.2",
          });
        }
        apps.setTls(next.identity.certPem, next.identity.keyPem);
        const old = clients;
        clients = authClients(authAddr, serverName, next.identity);
        if (old) setTimeout(() => closeClients(old), OLD_CLIENTS_GRACE_MS).unref();
        loaded = next;
        logger.info({ notAfter: next.notAfter.toISOString() }, "proxy identity reloaded");
      },
      { intervalMs: 2_000 },
    );
    closers.add(stopWatching);

    return {
      url: proxy.url,
      diagnosticsPort: diagnostics?.port,
      identityDigest: () => loaded.digest,
      close: () => closers.close(),
    };
  } catch (err) {
    await closers.close();
    throw err;
  }
}

/** `svcd proxy --config FILE`: runs until SIGTERM/SIGINT, then drains and exits. */
export async function runProxy(opts: { config: string }): Promise<void> {
  const config = await loadConfigFile(opts.config);
  const logger = createLogger({ level: config.log_level, name: "svcd-proxy" });
  const stop = new AbortController();
  void untilSignal().then(() => stop.abort(new Error("stopped by a signal")));
  let proxy: RunningProxy;
  try {
    proxy = await startProxy(config, { logger, signal: stop.signal });
  } catch (err) {
    if (stop.signal.aborted) return;
    throw err;
  }
  logger.info({ url: proxy.url, diagnosticsPort: proxy.diagnosticsPort }, "proxy is serving");
  if (!stop.signal.aborted) await new Promise((resolve) => stop.signal.addEventListener("abort", resolve));
  await proxy.close();
}
