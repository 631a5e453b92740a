// svc: the user CLI (docs/cli.md). Talks to the proxy over HTTPS only.
import { Command, Option } from "commander";
import { runCli } from "./exit-codes.ts";
import { addAppsCommand } from "./svc-apps.ts";
import { certs } from "./svc-certs.ts";
import { ls } from "./svc-nodes.ts";
import { CLIENT_VERSION, login, logout, ping, status } from "./svc-session.ts";
import { ssh } from "./svc-ssh.ts";

export function svcProgram(): Command {
  const program = new Command("svc")
    .description("svc user CLI: log in through the proxy, list nodes, get SSH certificates, connect")
    .version(CLIENT_VERSION, "-v, --version")
    .showHelpAfterError()
    .enablePositionalOptions()
    .exitOverride();
  const json = (): Option => new Option("--json", "print JSON instead of text");

  program
    .command("ping")
    .description("check that a proxy answers, which cluster it is, and whether this svc is recent enough")
    .option("--proxy <host:port>", "proxy to ask (default: the profile's)")
    .option("--ca <file>", "PEM of the cluster's host CA to trust (default: the profile's)")
    .option("--insecure-skip-verify", "do not verify the proxy's TLS certificate (unsafe)")
    .addOption(json())
    .action(async (o: { proxy?: string; ca?: string; insecureSkipVerify?: boolean; json?: boolean }) =>
      ping(o),
    );

  program
    .command("login")
    .description("log in through the proxy and store the session in the profile ($SVC_HOME or ~/.svc)")
    .option("--proxy <host:port>", "proxy address (default: the profile's)")
    .option("--user <name>", "user name (default: the profile's, else asked)")
    .option("--ca <file>", "PEM of the cluster's host CA to trust (e.g. host-ca.pem from the data folder)")
    .option(
      "--insecure-skip-verify",
      "do not verify the proxy's TLS certificate (unsafe; first contact only)",
    )
    .option("--password-file <file>", "read the password from a file instead of the terminal")
    .option("--reset-token <token>", "choose a new password with a one-time reset token, then log in")
    .option(
      "--auth <connector>",
      'sign in through this SSO connector (OIDC, SAML, GitHub) in a browser; "local" for a password; a host:port is instead auth\'s gRPC address, remembered for svcctl',
    )
    .option("--timeout <duration>", "how long single sign-on waits for the browser (e.g. 90s, 5m)", "5m")
    .option("--no-browser", "single sign-on: only print the URL to open, do not start a browser")
    .addHelpText(
      "after",
      `
Single sign-on (--auth <connector>, or the cluster's default connector when password login is
off): svc listens on http://127.0.0.1:<random port>/callback, prints the URL to open and opens
it in your browser ($BROWSER, open, or xdg-open when there is a display). Sign in at your
identity provider; the browser comes back to svc, which stores the session like a password
login. Connectors: GET https://<proxy>/v1/webapi/connectors/public.`,
    )
    .addOption(json())
    .action(async (o) => login(o));

  program
    .command("status")
    .description("show the current session: user, roles, expiry")
    .addOption(json())
    .action(async (o: { json?: boolean }) => status(o));

  program
    .command("logout")
    .description("end the session on the cluster and forget it locally")
    .addOption(json())
    .action(async (o: { json?: boolean }) => logout(o));

  program
    .command("ls")
    .description("list the nodes your roles let you see, with their labels")
    .option("--label <key[=value]...>", "only nodes with these labels")
    .addOption(json())
    .action(async (o: { json?: boolean; label?: string[] }) => ls(o));

  program
    .command("certs")
    .description("write a key, a short-lived certificate and a known_hosts file for plain OpenSSH")
    .option("--out <dir>", "folder for the files (default: $SVC_HOME/keys)")
    .option("--ttl <duration>", "certificate lifetime, e.g. 1h (capped by your roles)")
    .option(
      "--node <name>",
      "scope the certificate to one node: only the logins your roles grant there (needed for agentless nodes past 256 principals)",
    )
    .addOption(json())
    .action(async (o: { out?: string; ttl?: string; json?: boolean; node?: string }) => certs(o));

  program
    .command("ssh")
    .description("open a shell or run a command on a node, through the proxy (or --direct)")
    .argument("<[login@]node>", "login and node host name")
    .argument("[command...]", "command to run instead of a shell")
    .option("--direct", "dial the node's address directly instead of going through the proxy")
    .option("-l, --login <login>", "remote login (default: the part before @, else your user name)")
    .passThroughOptions()
    .action(async (target: string, command: string[], o: { direct?: boolean; login?: string }) => {
      process.exitCode = await ssh(target, command, o);
    });

  addAppsCommand(program);

  return program;
}

if (import.meta.main) {
  await runCli("svc", async () => {
    await svcProgram().parseAsync(process.argv);
    return typeof process.exitCode === "number" ? process.exitCode : undefined;
  });
}
