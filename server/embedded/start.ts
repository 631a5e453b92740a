// `svcd start`: auth and proxy in one process on the embedded default — resources from a folder of
// manifests, state in SQLite, CA keys in the data folder. The same components the Kubernetes
// deployment runs, wired through the same seams.
import { writeFile } from "node:fs/promises";
import { Server as HttpsServer } from "node:https";
import { join } from "node:path";
import { writeFileAtomic } from "../../core/atomic-file.ts";
import { openBackend } from "../../core/backend/index.ts";
import { CertificateAuthorities } from "../../core/ca/authorities.ts";
import { FileCaKeyStore } from "../../core/ca/key-store.ts";
import { FileRotationStateStore } from "../../core/ca/rotation-store.ts";
import { generateEcdsaP256, issueTlsServerCert, privateKeyToPem } from "../../core/certs/x509.ts";
import { type Clock, systemClock } from "../../core/clock.ts";
import { parseDuration } from "../../core/duration.ts";
import { appAtHost } from "../../core/resources/index.ts";
import { FolderSource } from "../../core/sources/folder.ts";
import { webRoutes } from "../../web/serve.ts";
import { startAuthRole } from "../assemble-auth.ts";
import { PasswordResets } from "../auth/admin-password-reset.ts";
import { HostCaFollower } from "../auth/ca-rotation.ts";
import { NodeStore } from "../auth/nodes.ts";
import { setPassword } from "../auth/passwords.ts";
import { splitHostPort } from "../config.ts";
import { createMetricsRegistry, type Diagnostics, startDiagnostics } from "../diagnostics.ts";
import { createLogger, type Logger } from "../logger.ts";
import { AppHostCerts, startAppAccess } from "../proxy/apps/index.ts";
import { GrpcCliAuthApi } from "../proxy/cli-auth-api.ts";
import { proxyConfigFrom } from "../proxy/config.ts";
import { GrpcAuthApi } from "../proxy/grpc-auth-api.ts";
import { startInventoryCache } from "../proxy/inventory-cache.ts";
import { startProxyTrust } from "../proxy/locks.ts";
import { hostPortOf, ProxyPeering, peerAddressOf } from "../proxy/peering/peering.ts";
import { recordingRoutes } from "../proxy/recordings-route.ts";
import { GrpcAdminAuthApi } from "../proxy/routes/admin-api.ts";
import { adminRoutes } from "../proxy/routes/admin-routes.ts";
import { publicAddressOfRun } from "../proxy/routes/admin-tokens.ts";
import { passwordResetRoutes } from "../proxy/routes/password-reset.ts";
import { userCertRoutes } from "../proxy/routes/user-certs.ts";
import { type ProxyServer, startProxyServer } from "../proxy/server.ts";
import { SessionCache } from "../proxy/session-cache.ts";
import { GrpcTerminalAuthApi } from "../proxy/terminal-auth.ts";
import { terminalRoutes } from "../proxy/terminal-route.ts";
import { createProxyTunnels } from "../proxy/tunnel/index.ts";
import { proxyAuthConnection } from "../proxy/tunnel/registration.ts";
import { proxyPublicNames } from "../roles/proxy-identity.ts";
import { ServerCertRenewer } from "../roles/server-cert-renewal.ts";
import { untilSignal } from "../signals.ts";
import { SERVER_VERSION } from "../version.ts";
import { issueServerIdentity, issueServiceClientIdentity } from "../wiring.ts";
import { type DataDir, openDataDir, resolveDataRoot } from "./data-dir.ts";
import { type ClosableClient, EmbeddedProxyIdentity } from "./proxy-renewal.ts";

export interface EmbeddedOptions {
  config?: string;
  dataDir?: string;
  /** Runtime overrides (not written to the config file): host:port */
  authListen?: string;
  proxyListen?: string;
  diagListen?: string;
}

export interface RunningPlatform {
  data: DataDir;
  authAddress: string;
  proxyUrl: string;
  diagnosticsPort: number | undefined;
  hostCaPem: string;
  /** The proxy's own certificates (renewed live; renewNow() for operators and tests). */
  proxyIdentity: Pick<
    EmbeddedProxyIdentity<Record<string, ClosableClient>>,
    "serverTls" | "clientTls" | "renewNow"
  >;
  /** First start without SVC_ADMIN_PASSWORD_FILE: the first admin's one-time reset token. */
  firstAdminReset?: { username: string; token: string; expires: Date };
  close(): Promise<void>;
}

export async function startEmbedded(
  opts: EmbeddedOptions,
  deps: { env?: NodeJS.ProcessEnv; clock?: Clock; logger?: Logger } = {},
): Promise<RunningPlatform> {
  const env = deps.env ?? process.env;
  const clock = deps.clock ?? systemClock;
  const data = await openDataDir({
    root: opts.dataDir ?? resolveDataRoot(env),
    ...(opts.config ? { configPath: opts.config } : {}),
    ...(env.SVC_ADMIN_PASSWORD_FILE ? { adminPasswordFile: env.SVC_ADMIN_PASSWORD_FILE } : {}),
  });
  const config = data.config;
  if (
    config.backend.type !== "sqlite" ||
    config.source.type !== "folder" ||
    config.ca_store.type !== "files"
  ) {
    throw new Error(
      "svcd start runs the embedded default only (sqlite backend, folder source, files CA store)",
    );
  }
  const logger = deps.logger ?? createLogger({ level: config.log_level });
  const closers: Array<() => Promise<void>> = [];
  const close = async (): Promise<void> => {
    for (const c of closers.splice(0).reverse()) {
      try {
        await c();
      } catch (err) {
        logger.warn({ err }, "error while stopping");
      }
    }
  };

  try {
    const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(data.paths.ca), {
      clusterName: config.cluster_name,
      trustDomain: config.cluster_name,
      clock,
      rotationStore: new FileRotationStateStore(data.paths.ca),
      nodeCertTtlSeconds: parseDuration(config.auth.node_cert_ttl) / 1000,
    });
    // Public material only: lets CLIs and browsers trust the proxy without the CA keys. Every
    // trusted host CA, rewritten when a rotation changes them.
    const hostCaFile = join(data.root, "host-ca.pem");
    const writeHostCas = () => writeFileAtomic(hostCaFile, cas.trustedHostCaPems().join(""), 0o644);
    await writeHostCas();
    const offHostCas = cas.onChange(() => {
      writeHostCas().catch((err: unknown) => logger.warn({ err }, "cannot rewrite host-ca.pem"));
    });
    closers.push(async () => {
      offHostCas();
    });

    // The state file holds password hashes and session digests: created private before SQLite opens it.
    await writeFile(data.paths.sqlite ?? "", "", { mode: 0o600, flag: "a" });
    const backend = await openBackend({ type: "sqlite", path: data.paths.sqlite ?? "" }, { clock });
    closers.push(() => backend.close());
    const source = new FolderSource({
      dir: data.paths.manifests,
      onProblem: (p) => logger.warn({ problem: p }, "manifest problem; the last good version stays in force"),
    });
    await source.start();
    closers.push(() => source.stop());

    // A generated first-admin secret is a one-time reset token (docs/cli.md): the admin picks the
    // password. A password from SVC_ADMIN_PASSWORD_FILE is set as is.
    let firstAdminReset: RunningPlatform["firstAdminReset"];
    if (data.firstAdmin?.password !== undefined) {
      await setPassword(backend, data.firstAdmin.name, data.firstAdmin.password);
    } else if (data.firstAdmin) {
      firstAdminReset = await new PasswordResets({ backend, clock }).issue(data.firstAdmin.name);
    }

    const authListen = splitHostPort(opts.authListen ?? config.auth.listen_addr);
    const issueAuthTls = () =>
      issueServerIdentity(cas, {
        commonName: "auth",
        hosts: [authListen.host, splitHostPort(config.auth.advertise_addr ?? config.auth.listen_addr).host],
        clock,
      });
    const authTls = await issueAuthTls();
    const authRole = await startAuthRole({
      config,
      cas,
      backend,
      source,
      writer: source,
      clock,
      logger,
      tls: authTls,
      listen: authListen,
    });
    const auth = authRole.server;
    closers.push(() => authRole.close());
    // Trusts every trusted host CA and re-issues auth's certificate when a CA rotation switches keys.
    const authTlsFollower = new HostCaFollower({
      cas,
      initial: authTls,
      issue: issueAuthTls,
      apply: (t) => auth.setTls(t),
      logger,
    });
    authTlsFollower.start();
    closers.push(() => authTlsFollower.stop());
    const authTlsRenewer = new ServerCertRenewer({
      current: authTls,
      issue: issueAuthTls,
      apply: (fresh) => authTlsFollower.set(fresh),
      clock,
      logger,
    });
    authTlsRenewer.start();
    closers.push(async () => authTlsRenewer.stop());

    const proxyConfig = proxyConfigFrom(
      opts.proxyListen ? { ...config, proxy: { ...config.proxy, listen_addr: opts.proxyListen } } : config,
      SERVER_VERSION,
    );
    const publicHost = new URL(proxyConfig.publicUrl).hostname;
    // The proxy's server and client certificates renew live at half their life (proxy-renewal.ts).
    // Its app hosts too (*.<public host>, docs/apps.md).
    const issueProxyTls = () =>
      issueServerIdentity(cas, { commonName: publicHost, hosts: proxyPublicNames(publicHost), clock });
    const issueProxyClient = () =>
      issueServiceClientIdentity(cas, { role: "proxy", name: config.cluster_name, clock });
    const authTarget = {
      address: `${authListen.host === "0.0.0.0" ? "127.0.0.1" : authListen.host}:${auth.port}`,
      serverName: "localhost",
    };
    const proxyIdentity = new EmbeddedProxyIdentity({
      serverTls: await issueProxyTls(),
      clientTls: await issueProxyClient(),
      issueServerTls: issueProxyTls,
      issueClientTls: issueProxyClient,
      // One channel to auth per client certificate, shared by every wrapper and stream.
      clients: (c) => {
        const connection = proxyAuthConnection({
          ...authTarget,
          caPems: cas.trustedHostCaPems(),
          certPem: c.certPem,
          keyPem: c.keyPem,
        });
        return {
          connection,
          authApi: new GrpcAuthApi(connection),
          cliAuthApi: new GrpcCliAuthApi(connection),
          terminalAuth: new GrpcTerminalAuthApi(connection),
          adminApi: new GrpcAdminAuthApi(connection),
        };
      },
      clock,
      logger,
    });
    closers.push(async () => proxyIdentity.close());
    const authApi = proxyIdentity.client("authApi");
    const cliAuthApi = proxyIdentity.client("cliAuthApi");
    const terminalAuth = proxyIdentity.client("terminalAuth");
    const adminApi = proxyIdentity.client("adminApi");
    // The connection in force (a forwarding handle: client and metadata follow renewals).
    const authConnection = proxyIdentity.client("connection");
    // Nodes reach auth where svcd prints it (auth.advertise_addr, else the listen address).
    const agentAuthAddress = config.auth.advertise_addr ?? `${authListen.host}:${auth.port}`;
    const registry = createMetricsRegistry("svcd");
    // Locks reach the proxy pushed (WatchTrust as the proxy): locked users' sessions and
    // terminals are refused and closed here without asking auth (docs/locks.md).
    const trust = startProxyTrust({
      connection: () => authConnection,
      clock,
      logger: logger.child({ component: "proxy-trust" }),
      metrics: registry,
    });
    closers.push(() => trust.close());
    // Web sessions answered from memory while WatchSessions is live; every use asks auth while
    // it is not (docs/proxy-cache.md). Inside the lock guard: a locked user is refused at once.
    const sessions = new SessionCache({
      connection: () => authConnection,
      clock,
      logger: logger.child({ component: "proxy-sessions" }),
      metrics: registry,
    });
    sessions.start();
    closers.push(() => sessions.close());
    // The node list and the terminal's per-node decision from auth's pushed inventory
    // (docs/proxy-cache.md); auth answers while the copy cannot.
    const inventory = startInventoryCache({
      connection: () => authConnection,
      trust: trust.watcher,
      clock,
      logger: logger.child({ component: "proxy-inventory" }),
      metrics: registry,
    });
    closers.push(async () => inventory.close());
    // Reverse tunnels (docs/tunnels.md): agents' TLS is checked against the host CA and the node
    // must still be registered here (a removed node's certificate outlives its record).
    const nodeRecords = new NodeStore({ backend, clock });
    // Set once the proxy is bound (its peer address needs the port): the NodeDialer asks lazily.
    let peering: ProxyPeering | undefined;
    const tunnels = createProxyTunnels({
      peer: () => peering?.peerDial,
      tls: () => ({
        certPem: proxyIdentity.serverTls().certPem,
        keyPem: proxyIdentity.serverTls().keyPem,
        caPems: cas.trustedHostCaPems(),
      }),
      isRegisteredNode: async (id) => (await nodeRecords.get(id)) !== undefined,
      logger: logger.child({ component: "proxy-tunnel" }),
    });
    // App hosts get a certificate for their exact name from the host CA here where the wildcard
    // cannot serve: TLS clients refuse it over one label (*.localhost, the default public
    // address). Under a dotted public host the identity's wildcard covers every app host, and
    // the certificate presented says nothing about which Apps exist.
    const hostCerts = publicHost.includes(".")
      ? undefined
      : new AppHostCerts({
          known: (host) => appAtHost(source.list("App"), host, publicHost) !== undefined,
          issue: async (host) => {
            const key = generateEcdsaP256();
            const certPem = await issueTlsServerCert(cas.hostCa, {
              publicKey: key.publicKey,
              commonName: host,
              dnsNames: [host],
              clock,
            });
            return { certPem, keyPem: privateKeyToPem(key.privateKey) };
          },
          clock,
          logger: logger.child({ component: "proxy-apps" }),
        });
    // Application access (docs/apps.md): the app hosts' server, checked against the same locks
    // and web-session revocations as the console.
    const apps = startAppAccess({
      connection: () => authConnection,
      publicUrl: proxyConfig.publicUrl,
      tls: proxyIdentity.serverTls(),
      ...(hostCerts ? { hostCerts } : {}),
      locks: trust.locks,
      sessions,
      clock,
      logger: logger.child({ component: "proxy-apps" }),
      metrics: registry,
    });
    closers.push(() => apps.close());
    const proxy: ProxyServer = await startProxyServer({
      config: proxyConfig,
      tls: proxyIdentity.serverTls(),
      apps,
      authApi: inventory.serveAuthApi(trust.locks.guardSessions(sessions.guard(authApi))),
      logger: logger.child({ component: "proxy" }),
      ready: () => source.synced(),
      resources: source,
      // gRPC for auth on the proxy's port too (auth's certificate names "localhost" here).
      authPassthrough: {
        address: `${authListen.host === "0.0.0.0" ? "127.0.0.1" : authListen.host}:${auth.port}`,
        serverName: "localhost",
      },
      metrics: registry,
      // The browser terminal (and `svc ssh`), recordings, the web UI, and the CLI routes.
      routes: [
        terminalRoutes({
          terminalAuth: inventory.serveTerminalAuth(terminalAuth),
          clock,
          dialer: tunnels.dialer,
          locks: trust.locks,
        }),
        recordingRoutes({ terminalAuth }),
        webRoutes(),
        passwordResetRoutes({ api: cliAuthApi }),
        userCertRoutes({ api: cliAuthApi }),
        adminRoutes({
          api: adminApi,
          sourceType: "folder",
          // Nodes join through the proxy's public port, which routes their gRPC to auth.
          agentTarget: () => ({
            proxyAddress: publicAddressOfRun(config.proxy.public_addr, opts.proxyListen, proxy.url),
            authAddress: agentAuthAddress,
            hostCaPem: cas.hostCa.certPem,
          }),
        }),
      ],
    });
    closers.push(() => proxy.close());
    // New connections to the public port get the renewed certificate; open ones keep theirs.
    proxyIdentity.onServerTls((t) => {
      const server = proxy.app.server;
      if (server instanceof HttpsServer)
        server.setSecureContext({ cert: t.certPem, key: t.keyPem, minVersion: "TLSv1.2" });
      apps.setTls(t.certPem, t.keyPem);
    });
    proxyIdentity.start();
    // A host X.509 CA phase change (docs/ca-rotation.md): the proxy's clients to auth are rebuilt
    // trusting the new set, and its certificates are re-issued by the key that signs now.
    let hostCas = cas.trustedHostCaPems().join("");
    const offProxyCas = cas.onChange(() => {
      const now = cas.trustedHostCaPems().join("");
      if (now === hostCas) return;
      hostCas = now;
      proxyIdentity
        .renewNow()
        .catch((err: unknown) => logger.warn({ err }, "proxy certificates not re-issued"));
    });
    closers.push(async () => {
      offProxyCas();
    });
    // Where other replicas would relay to (one replica here: agents report it, nobody dials it).
    const running = new ProxyPeering({
      tunnels: tunnels.registry,
      identity: () => ({
        certPem: proxyIdentity.serverTls().certPem,
        keyPem: proxyIdentity.serverTls().keyPem,
        clientCertPem: proxyIdentity.clientTls().certPem,
        clientKeyPem: proxyIdentity.clientTls().keyPem,
        caPems: cas.trustedHostCaPems(),
      }),
      peerAddr: peerAddressOf({
        listen_addr: hostPortOf(proxyConfig.listenHost, proxy.port),
        peer_addr: config.proxy.peer_addr,
      }),
      logger: logger.child({ component: "proxy-peering" }),
    });
    peering = running;
    running.register(proxy.router);
    closers.push(async () => running.close());
    tunnels.attach(proxy.router);
    closers.push(async () => tunnels.close());

    let diagnostics: Diagnostics | undefined;
    const diagAddr = opts.diagListen ?? config.auth.diagnostics_addr;
    if (diagAddr) {
      const d = splitHostPort(diagAddr);
      diagnostics = await startDiagnostics(registry, d.host, d.port);
      const running = diagnostics;
      closers.push(() => running.close());
    }

    return {
      data,
      authAddress: `${authListen.host}:${auth.port}`,
      proxyUrl: proxy.url,
      diagnosticsPort: diagnostics?.port,
      hostCaPem: cas.hostCa.certPem,
      proxyIdentity,
      ...(firstAdminReset ? { firstAdminReset } : {}),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Runs until SIGTERM/SIGINT, then drains and exits cleanly. */
export async function runEmbedded(opts: EmbeddedOptions): Promise<void> {
  const platform = await startEmbedded(opts);
  const { data } = platform;
  const publicAddr = data.config.proxy.public_addr;
  const lines = [
    `svc is running (cluster "${data.config.cluster_name}", data in ${data.root})`,
    `  proxy: https://${publicAddr}  (listening on ${platform.proxyUrl})`,
    `  auth:  ${platform.authAddress} (gRPC, TLS 1.3)`,
    `  trust the proxy with the host CA in ${join(data.root, "host-ca.pem")}`,
  ];
  const reset = platform.firstAdminReset;
  if (reset) {
    const hours = Math.round((reset.expires.getTime() - Date.now()) / 3_600_000);
    lines.push(
      "",
      `First start: choose the password of "${reset.username}" with this one-time reset token`,
      `(shown only now, single use, valid ${hours} h):`,
      `  svc login --proxy ${publicAddr} --ca ${join(data.root, "host-ca.pem")} --reset-token ${reset.token}`,
      `  or open https://${publicAddr}/web/reset?token=${reset.token}`,
    );
  } else if (data.firstAdmin) {
    lines.push("", `First start: "${data.firstAdmin.name}" has the password from SVC_ADMIN_PASSWORD_FILE.`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);

  await untilSignal();
  await platform.close();
}
