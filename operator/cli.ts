// The `operator` subcommand: flags → runOperator. server/main.ts registers it with
// registerOperatorCommand(program); running this file directly gives the same command standalone
// (`node operator/cli.ts operator ...`), which the tests use to run operators as real processes.
import { Command } from "commander";
import { runOperator } from "./main.ts";

export interface OperatorCommandFlags {
  kubeconfig?: string;
  namespace?: string;
  clusterName?: string;
  trustDomain?: string;
  identity?: string;
  leaseName: string;
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
  resync: string;
  recheck: string;
  caSecretPrefix?: string;
  diagnosticsAddr?: string;
  authAddr?: string;
  authServerName?: string;
  presetRoles: string;
  finalizerTimeout: string;
  staleAfter: string;
}

function seconds(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${flag} must be a positive number of seconds`);
  return Math.round(n * 1000);
}

export function registerOperatorCommand(program: Command): Command {
  return program
    .command("operator")
    .description("reconcile the svc custom resources and CA Secrets (leader-elected)")
    .option("--kubeconfig <file>", "kubeconfig (default: $KUBECONFIG, ~/.kube/config or in-cluster)")
    .option(
      "--namespace <ns>",
      "namespace of the resources, CA Secrets and Lease (default: $SVC_NAMESPACE or $POD_NAMESPACE)",
    )
    .option("--cluster-name <name>", "cluster name written into the CAs (default: $SVC_CLUSTER_NAME)")
    .option("--trust-domain <domain>", "SPIFFE trust domain (default: the cluster name)")
    .option(
      "--identity <id>",
      "leader-election identity (default: $POD_NAME or the hostname, plus a random suffix)",
    )
    .option("--lease-name <name>", "Lease name", "svc-operator")
    .option("--lease-duration <s>", "seconds a Lease stays valid without renewal", "15")
    .option("--renew-deadline <s>", "seconds the leader keeps trying to renew before it steps down", "10")
    .option("--retry-period <s>", "seconds between acquire/renew attempts", "2")
    .option("--resync <s>", "seconds between full reconciles of every object", "300")
    .option(
      "--recheck <s>",
      "seconds between looks at what makes no watch event (a missing Connector Secret, a JoinToken redemption in auth)",
      "30",
    )
    .option("--ca-secret-prefix <prefix>", "prefix of the CA Secret names (default svc-ca-)")
    .option("--diagnostics-addr <host:port>", "listener for /healthz and /metrics (default: none)")
    .option(
      "--auth-addr <host:port>",
      "auth's gRPC address: revoke a deleted User's sessions, report JoinToken use (default: $SVC_AUTH_ADDR; none: both off)",
    )
    .option(
      "--auth-server-name <name>",
      "name to verify in auth's certificate (default: the --auth-addr host)",
    )
    .option(
      "--preset-roles <true|false>",
      "whether the preset Roles admin and access exist without custom resources (auth's source.preset_roles must match)",
      "true",
    )
    .option(
      "--finalizer-timeout <s>",
      "seconds a deleted User's finalizer waits for auth before it is removed anyway (Warning Event)",
      "120",
    )
    .option("--stale-after <s>", "seconds without a current informer before /readyz fails", "60")
    .action(async (flags: OperatorCommandFlags) => {
      if (flags.presetRoles !== "true" && flags.presetRoles !== "false")
        throw new Error("operator: --preset-roles must be true or false");
      const env = process.env;
      const namespace = flags.namespace ?? env["SVC_NAMESPACE"] ?? env["POD_NAMESPACE"];
      const clusterName = flags.clusterName ?? env["SVC_CLUSTER_NAME"];
      if (!namespace)
        throw new Error("operator: --namespace (or $SVC_NAMESPACE / $POD_NAMESPACE) is required");
      if (!clusterName) throw new Error("operator: --cluster-name (or $SVC_CLUSTER_NAME) is required");
      const podName = env["POD_NAME"];
      const authAddr = flags.authAddr ?? env["SVC_AUTH_ADDR"];
      const handle = await runOperator({
        namespace,
        clusterName,
        handleSignals: true,
        leaseName: flags.leaseName,
        leaseDurationMs: seconds("lease-duration", flags.leaseDuration),
        renewDeadlineMs: seconds("renew-deadline", flags.renewDeadline),
        retryPeriodMs: seconds("retry-period", flags.retryPeriod),
        resyncMs: seconds("resync", flags.resync),
        recheckMs: seconds("recheck", flags.recheck),
        presetRoles: flags.presetRoles === "true",
        finalizerTimeoutMs: seconds("finalizer-timeout", flags.finalizerTimeout),
        staleAfterMs: seconds("stale-after", flags.staleAfter),
        ...(flags.kubeconfig ? { kubeconfigPath: flags.kubeconfig } : {}),
        ...(flags.trustDomain ? { trustDomain: flags.trustDomain } : {}),
        ...(flags.identity ? { identity: flags.identity } : podName ? { identity: podName } : {}),
        ...(flags.caSecretPrefix ? { caSecretPrefix: flags.caSecretPrefix } : {}),
        ...(flags.diagnosticsAddr ? { diagnosticsAddr: flags.diagnosticsAddr } : {}),
        ...(authAddr ? { authAddr } : {}),
        ...(flags.authServerName ? { authServerName: flags.authServerName } : {}),
      });
      await handle.done;
      // Stopped (SIGTERM): leave even if a pooled HTTP connection would keep the loop alive.
      setTimeout(() => process.exit(process.exitCode ?? 0), 2_000).unref();
    });
}

if (import.meta.main) {
  const program = new Command("svcd");
  registerOperatorCommand(program);
  await program.parseAsync(process.argv);
}
