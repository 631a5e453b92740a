// svcctl: the admin CLI (docs/cli.md). gRPC to auth with the admin's own session; `export` is
// offline (reads the CA store directly).
import { Command, Option } from "commander";
import { runCli } from "./exit-codes.ts";
import { CLIENT_VERSION } from "./svc-session.ts";
import { CA_TYPE_CHOICES, caRotate, caStatus, PHASE_CHOICES } from "./svcctl-ca.ts";
import { EXPORT_TYPES, exportCa } from "./svcctl-export.ts";
import { LOCK_FORMATS, type LockAddOptions, lockAdd, lockLs, lockRm } from "./svcctl-locks.ts";
import {
  agentIdentitiesAdd,
  agentIdentitiesLs,
  agentIdentitiesRm,
  auditSearch,
  nodesLs,
  nodesRm,
  tokensAdd,
  tokensLs,
  tokensRm,
} from "./svcctl-tokens.ts";
import { type GlobalOptions, rolesLs, usersAdd, usersLs, usersReset, usersRm } from "./svcctl-users.ts";

export function svcctlProgram(): Command {
  const program = new Command("svcctl")
    .description(
      "svc admin CLI: users, roles, join tokens, nodes, agent identities, locks, CA export and rotation, audit",
    )
    .version(CLIENT_VERSION, "-v, --version")
    .option(
      "--auth <host:port>",
      "auth gRPC address, reached directly (default: $SVC_AUTH_ADDR, the profile's, else through the profile's proxy)",
    )
    .addOption(
      new Option(
        "--proxy <host:port>",
        "the proxy's public address: auth is reached through it (default: the profile's proxy)",
      ).conflicts("auth"),
    )
    .option("--ca <file>", "host CA PEM to verify auth with (default: the profile's)")
    .showHelpAfterError()
    .exitOverride();

  // Global options live on the root; every action merges them with its own.
  const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals() as GlobalOptions;
  const json = (): Option => new Option("--json", "print JSON instead of text");
  const group = (name: string, description: string): Command =>
    program.command(name).description(description);

  const users = group("users", "manage users (a new user gets a one-time password reset link)");
  users
    .command("add")
    .description("create a user; prints a one-time reset token/link (no password is chosen by the admin)")
    .argument("<name>", "user name")
    .requiredOption("--roles <r1,r2>", "roles of the user")
    .option("--logins <a,b>", "Unix logins the user may use (the logins trait)")
    .addOption(json())
    .action(async (name: string, _o, cmd: Command) => usersAdd(name, globals(cmd)));
  users
    .command("ls")
    .description("list users")
    .addOption(json())
    .action(async (_o, cmd: Command) => usersLs(globals(cmd)));
  users
    .command("rm")
    .description("delete a user (sessions and credentials go with it)")
    .argument("<name>", "user name")
    .addOption(json())
    .action(async (name: string, _o, cmd: Command) => usersRm(name, globals(cmd)));
  users
    .command("reset")
    .description("issue a new one-time password reset and revoke the user's sessions")
    .argument("<name>", "user name")
    .addOption(json())
    .action(async (name: string, _o, cmd: Command) => usersReset(name, globals(cmd)));

  group("roles", "inspect roles")
    .command("ls")
    .description("list roles")
    .addOption(json())
    .action(async (_o, cmd: Command) => rolesLs(globals(cmd)));

  const tokens = group("tokens", "node join tokens");
  tokens
    .command("add")
    .description("create a one-time node join token; prints it once with the svcd agent command")
    .option("--name <name>", "token name (default: generated)")
    .option("--ttl <duration>", "lifetime, e.g. 30m (default 1h, at most 30 days)")
    .option("--labels <k=v,...>", "labels pinned on the node that joins")
    .addOption(json())
    .action(async (_o, cmd: Command) => tokensAdd(globals(cmd)));
  tokens
    .command("ls")
    .description("list join tokens (never their secrets)")
    .addOption(json())
    .action(async (_o, cmd: Command) => tokensLs(globals(cmd)));
  tokens
    .command("rm")
    .description("delete a join token")
    .argument("<name>", "token name")
    .addOption(json())
    .action(async (name: string, _o, cmd: Command) => tokensRm(name, globals(cmd)));

  const nodes = group("nodes", "inspect and remove nodes");
  nodes
    .command("ls")
    .description("list nodes with id, status, address and labels")
    .addOption(json())
    .action(async (_o, cmd: Command) => nodesLs(globals(cmd)));
  nodes
    .command("rm")
    .description("remove a node: its calls to auth are refused from now on and its hostname is free again")
    .argument("<node>", "hostname or node id")
    .addOption(json())
    .action(async (node: string, _o, cmd: Command) => nodesRm(node, globals(cmd)));

  const bots = group("agent-identities", "bots (machine identities)");
  bots
    .command("add")
    .description("create a bot and a one-time bootstrap token; prints it once with the svcd bot command")
    .argument("<name>", "bot name")
    .requiredOption("--roles <r1,r2>", "roles the bot acts with")
    .option("--ttl <duration>", "certificate lifetime (default 1h)")
    .option("--token-ttl <duration>", "bootstrap token lifetime (default 1h)")
    .option("--allow-workload-svids", "the bot may request SPIFFE SVIDs for its workloads")
    .option("--join <method>", "bootstrap method: only token (IAM join is not supported for bots)", "token")
    .addOption(json())
    .action(async (name: string, _o, cmd: Command) => agentIdentitiesAdd(name, globals(cmd)));
  bots
    .command("ls")
    .description("list bots with their generation and lock state")
    .addOption(json())
    .action(async (_o, cmd: Command) => agentIdentitiesLs(globals(cmd)));
  bots
    .command("rm")
    .description("delete a bot: its credentials stop renewing")
    .argument("<name>", "bot name")
    .addOption(json())
    .action(async (name: string, _o, cmd: Command) => agentIdentitiesRm(name, globals(cmd)));

  program
    .command("export")
    .description(
      "print public CA material, offline, from the CA store (data folder or Kubernetes Secrets); --type krl asks auth for the OpenSSH revocation list",
    )
    .addOption(new Option("--type <type>", "what to export").choices(EXPORT_TYPES).makeOptionMandatory())
    .option("--out <file>", "krl: write the KRL to this file (atomically, mode 0644) instead of stdout")
    .option("--data-dir <dir>", "embedded data folder (default: $SVC_DATA_DIR, else ./data)")
    .option("--kubeconfig <file>", "read the CA Secrets from Kubernetes instead")
    .option("--namespace <ns>", "namespace of auth's CA Secrets (with --kubeconfig)")
    .option("--secret-prefix <prefix>", "CA Secret name prefix (default svc-ca-)")
    .option("--cluster-name <name>", "cluster name for the key comments (default: from svc.yaml, else svc)")
    .addOption(json())
    .action(async (_o, cmd: Command) => exportCa(globals(cmd)));

  // Locks (docs/locks.md): `lock`, also reachable as `locks`.
  const lock = group("lock", "locks: refuse a user, role, bot, node or certificate everywhere").alias(
    "locks",
  );
  const format = (): Option => new Option("--format <format>", "output format").choices(LOCK_FORMATS);
  lock
    .command("add")
    .description("create a lock on exactly one target; it is enforced by auth, nodes and proxies at once")
    .option("--user <name>", "lock a user (local or single sign-on)")
    .option("--role <name>", "lock every identity holding this role")
    .option("--bot <name>", "lock a bot (agent identity)")
    .option("--node <id>", "lock a node by id: no logins to it, its calls to auth refused")
    .option("--key-id <id>", "lock one certificate by its key id (as sshd logs it)")
    .option("--message <text>", "shown to whoever is refused (no secrets)")
    .option("--ttl <duration>", "lift the lock after this long, e.g. 1h")
    .option("--expires <time>", "lift the lock at this RFC 3339 time")
    .option("--name <name>", "lock name (default: generated)")
    .addOption(format())
    .addOption(json())
    .action(async (_o, cmd: Command) => lockAdd(globals(cmd) as LockAddOptions));
  lock
    .command("ls")
    .description("list the locks in force (expired ones are gone)")
    .addOption(format())
    .addOption(json())
    .action(async (_o, cmd: Command) => lockLs(globals(cmd)));
  lock
    .command("rm")
    .description("remove a lock")
    .argument("<name>", "lock name")
    .addOption(format())
    .addOption(json())
    .action(async (name: string, _o, cmd: Command) => lockRm(name, globals(cmd)));

  const ca = group("ca", "certificate authority rotation (docs/ca-rotation.md)");
  ca.command("status")
    .description("every CA with its rotation phase, mode and keys")
    .addOption(json())
    .action(async (_o, cmd: Command) => caStatus(globals(cmd)));
  ca.command("rotate")
    .description(
      "move a CA to a rotation phase (init, update_clients, update_servers, standby; rollback until standby), or start an automatic rotation with --auto",
    )
    .addOption(new Option("--type <type>", "which CA").choices(CA_TYPE_CHOICES).makeOptionMandatory())
    .addOption(new Option("--phase <phase>", "the phase to move to").choices(PHASE_CHOICES))
    .option("--auto", "start at init and move on by itself after each grace period")
    .option(
      "--grace <duration>",
      "with --auto: how long each phase is held (default: auth.ca_rotation_grace, 1h)",
    )
    .option(
      "--force",
      "standby: end the rotation even though certificates of the removed key are still valid",
    )
    .addOption(json())
    .action(async (_o, cmd: Command) => caRotate(globals(cmd) as Parameters<typeof caRotate>[0]));

  group("audit", "audit log")
    .command("search")
    .description("search audit events, newest first")
    .option("--type <type>", "exact event type, e.g. user.login")
    .option("--user <name>", "exact user name")
    .option("--since <time|duration>", "from this time (RFC 3339) or this long ago (2h)")
    .option("--until <time|duration>", "up to this time (RFC 3339) or this long ago")
    .option("--limit <n>", "page size (default 50, max 500)")
    .option("--offset <n>", "events to skip")
    .addOption(json())
    .action(async (_o, cmd: Command) => auditSearch(globals(cmd)));

  return program;
}

if (import.meta.main) {
  // grpc-js passes an IP address as TLS server name (DEP0123); it only clutters a CLI's stderr.
  process.noDeprecation = true;
  await runCli("svcctl", async () => {
    await svcctlProgram().parseAsync(process.argv);
    return undefined;
  });
}
