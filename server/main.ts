// svcd: the single daemon entry point. `svcd start` runs auth and proxy in one process on the
// embedded default; each other subcommand runs one role. Only roles that exist are registered,
// so --help never lists a command that cannot run.
import { Command, CommanderError, Option } from "commander";
import { isSvcError } from "../core/errors.ts";
import { registerOperatorCommand } from "../operator/cli.ts";
import { untilSignal } from "./signals.ts";
import { SERVER_VERSION } from "./version.ts";

interface BotFlags {
  auth?: string;
  proxy?: string;
  token?: string;
  caPin?: string;
  caFile?: string;
  authServerName?: string;
  out: string;
}

interface AgentFlags {
  auth?: string;
  proxy?: string;
  authServerName?: string;
  caPin?: string;
  caFile?: string;
  token?: string;
  dataDir: string;
  listen?: string;
  tunnel?: string | true;
  advertiseAddress?: string;
  labels?: string;
  hostname?: string;
  diagListen?: string;
  krlFile?: string;
}

// Agents, bots and agentless registration reach auth one of two ways (server/agent/auth-target.ts).
const proxyOption = () =>
  new Option(
    "--proxy <host:port>",
    "the proxy's public address: auth is reached through it (its ping names auth's TLS name)",
  ).conflicts(["auth", "authServerName"]);
const authOption = (also: string) =>
  new Option("--auth <host:port>", `auth gRPC address, reached directly (instead of --proxy${also})`);

const program = new Command("svcd")
  .description("svc platform daemon: auth, proxy and the node/bot/operator roles")
  .version(SERVER_VERSION, "-v, --version")
  .showHelpAfterError()
  .exitOverride();

program
  .command("start")
  .description("run auth and proxy in one process on the embedded default (data in $SVC_DATA_DIR or ./data)")
  .option("-c, --config <file>", "config file (default: <data dir>/svc.yaml, created on the first start)")
  .option("-d, --data-dir <dir>", "data folder (overrides $SVC_DATA_DIR)")
  .option("--auth-listen <host:port>", "auth gRPC listen address for this run (config: auth.listen_addr)")
  .option("--proxy-listen <host:port>", "proxy HTTPS listen address for this run (config: proxy.listen_addr)")
  .option(
    "--diag-listen <host:port>",
    "diagnostics listen address for this run (config: auth.diagnostics_addr)",
  )
  .action(
    async (opts: {
      config?: string;
      dataDir?: string;
      authListen?: string;
      proxyListen?: string;
      diagListen?: string;
    }) => {
      const { runEmbedded } = await import("./embedded/start.ts");
      await runEmbedded(opts);
    },
  );

program
  .command("auth")
  .description(
    "run auth alone (Kubernetes: informer cache, PostgreSQL, CA Secrets; issues the proxy identity)",
  )
  .requiredOption("-c, --config <file>", "config file")
  .action(async (opts: { config: string }) => {
    const { runAuth } = await import("./roles/auth.ts");
    await runAuth(opts);
  });

program
  .command("proxy")
  .description("run the proxy alone: identity from a mounted folder, calls auth at proxy.auth_addr")
  .requiredOption("-c, --config <file>", "config file")
  .action(async (opts: { config: string }) => {
    const { runProxy } = await import("./roles/proxy.ts");
    await runProxy(opts);
  });

program
  .command("agent")
  .description("run the node agent: join once with a token, then serve SSH with a host certificate")
  .addOption(proxyOption())
  .addOption(authOption("; a joined agent reuses the one it last used"))
  .option("--auth-server-name <name>", "TLS name to expect on auth's certificate")
  .option("--ca-pin <sha256:hex>", "pin of the cluster's host CA (printed by `svcctl tokens add`)")
  .option("--ca-file <file>", "the cluster's host CA certificate (instead of --ca-pin)")
  .option("--token <name.secret>", "one-time join token (first start only)")
  .requiredOption("--data-dir <dir>", "where the agent keeps its credentials (mode 0700)")
  .option(
    "--tunnel [host:port]",
    "serve SSH through a reverse tunnel to the proxy (default: the --proxy address); listens on no port unless --listen",
  )
  .option("--listen <host:port>", "SSH listen address (default 0.0.0.0:3022; with --tunnel: none)")
  .option("--advertise-address <host:port>", "address the proxy dials (default: as auth sees the agent)")
  .option("--labels <k=v,...>", "node labels")
  .option("--hostname <name>", "node name (default: this machine's hostname)")
  .option(
    "--diag-listen <host:port>",
    "diagnostics listener: /healthz (with the lock list's age), /readyz, /metrics",
  )
  .option(
    "--krl-file <path>",
    "keep the cluster's OpenSSH revocation list (KRL) in this file, for a local sshd's RevokedKeys",
  )
  .action(async (opts: AgentFlags) => {
    const [{ runAgent, parseLabels }, { createLogger }] = await Promise.all([
      import("./agent/main.ts"),
      import("./logger.ts"),
    ]);
    const agent = await runAgent({
      ...(opts.auth ? { authAddress: opts.auth } : {}),
      ...(opts.proxy ? { proxyAddress: opts.proxy } : {}),
      dataDir: opts.dataDir,
      ...(opts.listen ? { listen: opts.listen } : {}),
      ...(opts.tunnel
        ? { tunnel: typeof opts.tunnel === "string" ? { proxyAddress: opts.tunnel } : {} }
        : {}),
      logger: createLogger({ name: "svcd-agent" }),
      ...(opts.authServerName ? { authServerName: opts.authServerName } : {}),
      ...(opts.caPin ? { caPin: opts.caPin } : {}),
      ...(opts.caFile ? { caFile: opts.caFile } : {}),
      ...(opts.token ? { token: opts.token } : {}),
      ...(opts.advertiseAddress ? { advertiseAddress: opts.advertiseAddress } : {}),
      ...(opts.labels ? { labels: parseLabels(opts.labels) } : {}),
      ...(opts.hostname ? { hostname: opts.hostname } : {}),
      ...(opts.diagListen ? { diagListen: opts.diagListen } : {}),
      ...(opts.krlFile ? { krlFile: opts.krlFile } : {}),
    });
    const where = [
      ...(agent.ssh.port > 0 ? [`on ${agent.ssh.host}:${agent.ssh.port}`] : []),
      ...(agent.tunnel ? ["through a reverse tunnel to the proxy"] : []),
    ];
    process.stdout.write(`agent ${agent.agentId} (${agent.hostname}) serving SSH ${where.join(" and ")}\n`);
    await untilSignal();
    await agent.close();
  });

program
  .command("agentless")
  .description(
    "register a plain OpenSSH sshd as a node (once, with a join token) and write the sshd_config lines it needs",
  )
  .addOption(proxyOption())
  .addOption(authOption(""))
  .option("--auth-server-name <name>", "TLS name to expect on auth's certificate")
  .option("--ca-pin <sha256:hex>", "pin of the cluster's host CA (printed by `svcctl tokens add`)")
  .option("--ca-file <file>", "the cluster's host CA certificate (instead of --ca-pin)")
  .requiredOption("--token <name.secret>", "one-time join token")
  .requiredOption("--hostname <name>", "node name")
  .requiredOption("--address <host:port>", "where the proxy and users reach this sshd")
  .option("--labels <k=v,...>", "node labels (the token's labels win)")
  .option("--host-key <file>", "sshd's host public key", "/etc/ssh/ssh_host_ed25519_key.pub")
  .requiredOption("--out <dir>", "folder for the host certificate, the user CA and sshd_config.svc")
  .action(
    async (opts: {
      auth?: string;
      proxy?: string;
      authServerName?: string;
      caPin?: string;
      caFile?: string;
      token: string;
      hostname: string;
      address: string;
      labels?: string;
      hostKey: string;
      out: string;
    }) => {
      const [{ registerAgentlessNode }, { parseLabels }] = await Promise.all([
        import("./agent/agentless.ts"),
        import("./agent/main.ts"),
      ]);
      const reg = await registerAgentlessNode({
        ...(opts.auth ? { authAddress: opts.auth } : {}),
        ...(opts.proxy ? { proxyAddress: opts.proxy } : {}),
        token: opts.token,
        hostname: opts.hostname,
        address: opts.address,
        hostPublicKeyFile: opts.hostKey,
        outDir: opts.out,
        ...(opts.authServerName ? { authServerName: opts.authServerName } : {}),
        ...(opts.caPin ? { caPin: opts.caPin } : {}),
        ...(opts.caFile ? { caFile: opts.caFile } : {}),
        ...(opts.labels ? { labels: parseLabels(opts.labels) } : {}),
      });
      process.stdout.write(
        `node ${reg.nodeId} registered; add these lines to sshd_config (also in ${reg.sshdConfigPath}) and reload sshd:\n${reg.sshdConfig.join("\n")}\n`,
      );
    },
  );

program
  .command("bot")
  .description("run a bot: redeem a one-time bootstrap token, then keep its SSH and X.509 credentials fresh")
  .addOption(proxyOption())
  .addOption(authOption(""))
  .option("--token <name.secret>", "one-time bootstrap token (first start only)")
  .option("--ca-pin <sha256:hex>", "pin of the cluster's host CA (printed by `svcctl agent-identities add`)")
  .option("--ca-file <file>", "the cluster's host CA certificate (instead of --ca-pin)")
  .option("--auth-server-name <name>", "TLS name to expect on auth's certificate")
  .requiredOption("--out <dir>", "folder for the credentials (written atomically, mode 0700)")
  .action(async (opts: BotFlags) => {
    const [{ runBot }, { createLogger }] = await Promise.all([
      import("./bot/main.ts"),
      import("./logger.ts"),
    ]);
    const stop = new AbortController();
    void untilSignal().then(() => stop.abort());
    await runBot({
      ...(opts.auth ? { authAddress: opts.auth } : {}),
      ...(opts.proxy ? { proxyAddress: opts.proxy } : {}),
      outDir: opts.out,
      logger: createLogger({ name: "svcd-bot" }),
      signal: stop.signal,
      ...(opts.token ? { token: opts.token } : {}),
      ...(opts.caPin ? { caPin: opts.caPin } : {}),
      ...(opts.caFile ? { caFile: opts.caFile } : {}),
      ...(opts.authServerName ? { serverName: opts.authServerName } : {}),
    });
  });

registerOperatorCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode;
  } else {
    const message = isSvcError(err) || err instanceof Error ? err.message : String(err);
    process.stderr.write(`svcd: ${message}\n`);
    process.exitCode = 1;
  }
}
