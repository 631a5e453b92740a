// The Kubernetes deployment on a real apiserver, as local processes: the chart's RBAC (rendered
// with helm), one ServiceAccount token per component, and `svcd operator`, `svcd auth` and
// `svcd proxy` (bin/svcd) with configs like the chart's, state in a fresh PostgreSQL schema. The kubelet's part (mounting the proxy identity Secret into a folder) is played by a
// poller that copies the Secret with the same atomic symlink swap the kubelet uses.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { closeSync, openSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { CoreV1Api } from "@kubernetes/client-node";
import { parseAllDocuments, stringify } from "yaml";
import { formatSshPublicKey } from "../core/certs/ssh-keys.ts";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import { PROXY_IDENTITY_FILES } from "../server/roles/proxy-identity.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";
import { freePort } from "./harness/ports.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";
import { toolPath } from "./harness/tools.ts";
import { HttpsClient } from "./proxy-https-client.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
export const NS = "svc-e2e";
export const CLUSTER = "e2e";
export const PROXY_IDENTITY_SECRET = "svc-proxy-identity";

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `probe` returns a value (not undefined); throws with `what` after `ms`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}

export interface Daemon {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  log: string;
  logText(): string;
}

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
}

export interface E2ePlatform {
  kube: KubeCluster;
  dir: string;
  pgUrl: string;
  schema: string;
  ports: { auth: number; authDiag: number; proxy: number; proxyDiag: number; operatorDiag: number };
  kubeconfigs: { auth: string; proxy: string; operator: string };
  identityDir: string;
  authConfig: string;
  proxyConfig: string;
  daemons: Daemon[];
  startOperator(): Daemon;
  startAuth(): Daemon;
  startProxy(): Daemon;
  /** Applies the CRDs (server-side) and waits until they are established. */
  applyCrds(): Promise<void>;
  /** Plays the kubelet: copies the identity Secret into identityDir whenever it changes. */
  startMounting(): void;
  /** The host CA from the identity Secret (for HTTPS to the proxy). */
  hostCaPem(): Promise<string>;
  diag(port: number, path: string): Promise<number>;
  stop(): Promise<void>;
}

async function helmTemplate(): Promise<K8sObject[]> {
  const { stdout } = await run(
    toolPath("helm"),
    // The one required value: the RBAC applied here does not depend on it.
    [
      "template",
      "svc",
      join(root, "charts", "svc"),
      "--namespace",
      NS,
      "-f",
      join(root, "charts", "svc", "ci", "default-values.yaml"),
    ],
    { maxBuffer: 32 * 1024 * 1024 },
  );
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

async function must(p: Promise<{ code: number; stdout: string; stderr: string }>): Promise<string> {
  const r = await p;
  if (r.code !== 0) throw new Error(r.stderr || r.stdout);
  return r.stdout;
}

/** Resolves true once something accepts TCP connections on the port. */
export function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

export async function startE2ePlatform(
  opts: { identityTtl?: string; pgUrl?: string; identitySecret?: boolean } = {},
): Promise<E2ePlatform> {
  const kube = await startKube();
  const dir = await mkdtemp(join(tmpdir(), "svc-k8s-e2e-"));
  const daemons: Daemon[] = [];
  const pgUrl = opts.pgUrl ?? testPostgresUrl();
  const schema = uniqueSchemaName("k8s_e2e");
  let mountTimer: NodeJS.Timeout | undefined;
  const stop = async (): Promise<void> => {
    if (mountTimer) clearInterval(mountTimer);
    for (const d of daemons)
      if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGTERM");
    await Promise.all(
      daemons.map(async (d) => {
        const t = setTimeout(() => d.child.kill("SIGKILL"), 10_000);
        await d.exited;
        clearTimeout(t);
      }),
    );
    await kube.stop();
    await dropSchema(pgUrl, schema).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await must(kubectl(kube.adminKubeconfig, ["create", "namespace", NS]));
    // The chart's ServiceAccounts, Roles and RoleBindings, exactly as rendered.
    // (Kubernetes RBAC only: the chart's svc.dev preset Roles need the CRDs, applied later.)
    const rbac = (await helmTemplate()).filter(
      (o) =>
        ["ServiceAccount", "Role", "RoleBinding"].includes(o.kind) && !o.apiVersion.startsWith("svc.dev/"),
    );
    await must(
      kubectl(kube.adminKubeconfig, ["apply", "-f", "-"], rbac.map((o) => stringify(o)).join("---\n")),
    );
    const kubeconfigs = {
      auth: await kube.serviceAccountKubeconfig(NS, "svc-auth"),
      proxy: await kube.serviceAccountKubeconfig(NS, "svc-proxy"),
      operator: await kube.serviceAccountKubeconfig(NS, "svc-operator"),
    };
    const ports = {
      auth: await freePort(),
      authDiag: await freePort(),
      proxy: await freePort(),
      proxyDiag: await freePort(),
      operatorDiag: await freePort(),
    };
    const pgUrlFile = join(dir, "postgres-url");
    await writeFile(pgUrlFile, `${pgUrl}\n`, { mode: 0o600 });
    const identityDir = join(dir, "identity");
    await mkdir(identityDir);
    // One config per component, like the chart's ConfigMap (plus the kubeconfig a Pod would not need).
    const config = (kubeconfig: string) => ({
      version: 1,
      cluster_name: CLUSTER,
      log_level: "info",
      auth: {
        listen_addr: `127.0.0.1:${ports.auth}`,
        diagnostics_addr: `127.0.0.1:${ports.authDiag}`,
        tls_names: ["svc-auth", `svc-auth.${NS}.svc`],
        proxy_identity: {
          secret_name: PROXY_IDENTITY_SECRET,
          dns_names: ["svc-proxy"],
          ttl: opts.identityTtl ?? "24h",
        },
      },
      proxy: {
        listen_addr: `127.0.0.1:${ports.proxy}`,
        public_addr: `localhost:${ports.proxy}`,
        oidc_issuer_url: `https://localhost:${ports.proxy}`,
        diagnostics_addr: `127.0.0.1:${ports.proxyDiag}`,
        auth_addr: `127.0.0.1:${ports.auth}`,
        identity_dir: identityDir,
        // As the chart sets it: the proxy reads its identity through the API until it is mounted.
        ...(opts.identitySecret ? { identity_secret: PROXY_IDENTITY_SECRET } : {}),
      },
      client_tools: { min_version: "0.1.0", recommended_version: "0.1.0" },
      backend: { type: "postgres", url_file: pgUrlFile, schema },
      source: { type: "kubernetes", namespace: NS, kubeconfig },
      ca_store: { type: "kubernetes", namespace: NS },
    });
    const authConfig = join(dir, "auth.yaml");
    const proxyConfig = join(dir, "proxy.yaml");
    await writeFile(authConfig, stringify(config(kubeconfigs.auth)));
    await writeFile(proxyConfig, stringify(config(kubeconfigs.proxy)));

    const launch = (name: string, cmd: string, args: string[]): Daemon => {
      const log = join(dir, `${name}.log`);
      const fd = openSync(log, "a");
      const child = spawn(cmd, args, {
        stdio: ["ignore", fd, fd],
        env: { ...process.env, SVC_LOG_LEVEL: "info" },
      });
      closeSync(fd);
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      const d: Daemon = {
        name,
        child,
        exited,
        log,
        logText: () => {
          try {
            return readFileSync(log, "utf8");
          } catch {
            return "";
          }
        },
      };
      daemons.push(d);
      return d;
    };
    const svcd = join(root, "bin", "svcd");
    const admin = loadKubeConfig(kube.adminKubeconfig).makeApiClient(CoreV1Api);
    let version = 0;
    let mountedRv = "";
    let mounting = false;

    const mountOnce = async (): Promise<void> => {
      let secret: Awaited<ReturnType<CoreV1Api["readNamespacedSecret"]>>;
      try {
        secret = await admin.readNamespacedSecret({ name: PROXY_IDENTITY_SECRET, namespace: NS });
      } catch {
        return; // not written yet, or the apiserver is restarting
      }
      const rv = secret.metadata?.resourceVersion ?? "";
      if (rv === mountedRv) return;
      // kubelet layout: ..<version>/ with the files, ..data -> ..<version>, <file> -> ..data/<file>
      const next = `..v${++version}`;
      await mkdir(join(identityDir, next));
      for (const [key, value] of Object.entries(secret.data ?? {})) {
        await writeFile(join(identityDir, next, key), Buffer.from(value, "base64"), { mode: 0o400 });
      }
      await symlink(next, join(identityDir, "..data_tmp"));
      await rename(join(identityDir, "..data_tmp"), join(identityDir, "..data"));
      for (const file of Object.values(PROXY_IDENTITY_FILES)) {
        await symlink(join("..data", file), join(identityDir, file)).catch(() => undefined);
      }
      for (const entry of await readdir(identityDir)) {
        if (/^\.\.v\d+$/.test(entry) && entry !== next) {
          await rm(join(identityDir, entry), { recursive: true, force: true });
        }
      }
      mountedRv = rv;
    };

    return {
      kube,
      dir,
      pgUrl,
      schema,
      ports,
      kubeconfigs,
      identityDir,
      authConfig,
      proxyConfig,
      daemons,
      startOperator: () =>
        launch("operator", svcd, [
          "operator",
          `--kubeconfig=${kubeconfigs.operator}`,
          `--namespace=${NS}`,
          `--cluster-name=${CLUSTER}`,
          "--lease-duration=4",
          "--renew-deadline=3",
          "--retry-period=0.5",
          `--diagnostics-addr=127.0.0.1:${ports.operatorDiag}`,
          // As the chart does: the operator calls auth (User deletion, JoinToken redemptions).
          `--auth-addr=127.0.0.1:${ports.auth}`,
          "--recheck=1",
        ]),
      startAuth: () => launch("auth", svcd, ["auth", "--config", authConfig]),
      startProxy: () => launch("proxy", svcd, ["proxy", "--config", proxyConfig]),
      applyCrds: async () => {
        await must(kubectl(kube.adminKubeconfig, ["apply", "--server-side", "-f", join(root, "crds")]));
        await must(
          kubectl(kube.adminKubeconfig, [
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            ...["roles", "users", "connectors", "jointokens", "agentidentities", "locks", "apps"].map(
              (p) => `crd/${p}.svc.dev`,
            ),
          ]),
        );
      },
      startMounting: () => {
        mountTimer ??= setInterval(() => {
          if (mounting) return;
          mounting = true;
          mountOnce()
            .catch(() => undefined)
            .finally(() => {
              mounting = false;
            });
        }, 500);
      },
      hostCaPem: async () => {
        const secret = await admin.readNamespacedSecret({ name: PROXY_IDENTITY_SECRET, namespace: NS });
        return Buffer.from(secret.data?.[PROXY_IDENTITY_FILES.caPem] ?? "", "base64").toString("utf8");
      },
      diag: async (port, path) => {
        try {
          return (await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) }))
            .status;
        } catch {
          return 0;
        }
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A user's view through the proxy: login, then IssueUserCerts via POST /v1/webapi/ssh/certs. */
export class ProxyUser {
  readonly #client: HttpsClient;
  readonly #origin: string;
  readonly #publicKey = formatSshPublicKey(generateKeyPairSync("ed25519").publicKey);
  sessionId = "";

  constructor(proxyPort: number, caPem: string) {
    this.#client = new HttpsClient(`https://127.0.0.1:${proxyPort}`, caPem, "localhost");
    this.#origin = `https://localhost:${proxyPort}`;
  }

  async login(username: string, password: string): Promise<number> {
    const r = await this.#client.send({
      method: "POST",
      path: "/v1/webapi/login",
      headers: { origin: this.#origin },
      body: { username, password },
    });
    const id = (r.json as { session_id?: unknown } | undefined)?.session_id;
    if (r.status === 200 && typeof id === "string") this.sessionId = id;
    return r.status;
  }

  /** The principals auth puts in a certificate now, or the HTTP status when it refuses. */
  async principals(): Promise<string[] | number> {
    const r = await this.#client.send({
      method: "POST",
      path: "/v1/webapi/ssh/certs",
      headers: { authorization: `Bearer ${this.sessionId}` },
      body: { public_key: this.#publicKey },
    });
    if (r.status !== 200) return r.status;
    return ((r.json as { principals?: string[] }).principals ?? []).slice().sort();
  }
}

export function roleYaml(name: string, logins: string[], extra: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: "svc.dev/v1",
    kind: "Role",
    metadata: { name, namespace: NS },
    spec: { allow: { logins, node_labels: { "*": "*" }, ...extra } },
  });
}

export function userYaml(name: string, roles: string[]): string {
  return stringify({
    apiVersion: "svc.dev/v1",
    kind: "User",
    metadata: { name, namespace: NS },
    spec: { roles },
  });
}
