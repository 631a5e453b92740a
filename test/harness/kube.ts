// A real Kubernetes control plane for tests: etcd + kube-apiserver on free loopback ports, RBAC
// on, static-token users, generated certificates and service-account keys, kubeconfigs on disk.
// No controller-manager runs, so nothing that needs one (namespace deletion, default service
// accounts, pods) makes progress; CRDs, RBAC, ConfigMaps, Secrets, Leases and watches all work.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { get as httpGet } from "node:http";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { toolPath } from "./tools.ts";

const execFileAsync = promisify(execFile);

/** A static-token identity declared at start (the token file is read once by kube-apiserver). */
export interface StaticUser {
  name: string;
  /** Groups beyond system:authenticated, which the apiserver adds to everyone. */
  groups?: string[];
}

export interface StartKubeOptions {
  /** Extra static-token users, besides the admin and the operator. */
  users?: StaticUser[];
  /**
   * Control plane of a cluster with nodes (test/harness/cluster.ts): the apiserver listens on
   * every address and advertises this one in the `kubernetes` Service's endpoints, admits Pods
   * with their ServiceAccounts, authorizes kubelets with the Node authorizer and NodeRestriction,
   * and reaches kubelets with a client certificate. Without it, the apiserver stays on loopback.
   */
  advertiseAddress?: string;
  /** How long to wait for /readyz on each start (default 180 s: 2 shared cores are slow). */
  readyTimeoutMs?: number;
}

export interface KubeCluster {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** PEM of the CA that signed the apiserver's serving certificate. */
  readonly caPem: string;
  /** Temporary folder holding keys, token file, kubeconfigs, logs (removed by stop()). */
  readonly dir: string;
  /** Kubeconfig path of `svc-admin`, group system:masters. */
  readonly adminKubeconfig: string;
  /** Kubeconfig path of the operator's identity: no groups, only what RBAC manifests grant. */
  readonly operatorKubeconfig: string;
  /** The operator's user name, as RBAC sees it (a ServiceAccount subject matches it). */
  readonly operatorUser: string;
  /** Kubeconfig path for a static user declared in StartKubeOptions.users (or admin/operator). */
  kubeconfigFor(user: string): string;
  /** Bearer token of a declared static user, for clients that do not read kubeconfigs. */
  tokenFor(user: string): string;
  /**
   * Kubeconfig path for a real ServiceAccount (created if absent) with a token from the
   * TokenRequest API, signed by the apiserver's service-account key.
   */
  serviceAccountKubeconfig(namespace: string, name: string): Promise<string>;
  /** Stops kube-apiserver and etcd and removes the folder. Safe to call twice. */
  stop(): Promise<void>;
  /** Stops kube-apiserver and starts it again on the same port and data; resolves when ready. */
  restartApiserver(): Promise<void>;
}

export const ADMIN_USER = "svc-admin";
export const OPERATOR_USER = "system:serviceaccount:svc-system:svc-operator";
/** Service addresses of every harness apiserver; cluster.ts routes them to its node. */
export const SERVICE_CIDR = "10.96.0.0/24";
const SERVICE_IP = "10.96.0.1";

/** Children of every cluster in this process, killed on exit whatever the test outcome. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of live) child.kill("SIGKILL");
  });
}

/** Port that was free a moment ago (the daemons cannot take a listening socket from us). */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => {
        if (addr && typeof addr === "object") resolve(addr.port);
        else reject(new Error("no port"));
      });
    });
  });
}

/**
 * Kills `pid` when this Node process disappears, even by SIGKILL, so a crashed test worker leaves
 * no daemon behind; exits by itself once `pid` is gone. With pid 0 it only removes `dir` then.
 */
export function watchdog(pid: number, dir = ""): ChildProcess {
  const script =
    'while kill -0 "$1" 2>/dev/null && { [ "$2" = 0 ] || kill -0 "$2" 2>/dev/null; }; do sleep 1; done; ' +
    'kill -0 "$1" 2>/dev/null && exit 0; ' +
    '[ "$2" = 0 ] || kill -9 "$2" 2>/dev/null; ' +
    '[ -n "$3" ] && sleep 3 && rm -rf "$3"; exit 0';
  const w = spawn("bash", ["-c", script, "watchdog", String(process.pid), String(pid), dir], {
    detached: true,
    stdio: "ignore",
  });
  w.unref();
  return w;
}

export function tail(path: string, lines = 25): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

export interface Daemon {
  child: ChildProcess;
  exited: Promise<number | null>;
  guard: ChildProcess;
}

export function startDaemon(
  bin: string,
  args: string[],
  logPath: string,
  env: NodeJS.ProcessEnv = process.env,
): Daemon {
  const fd = openSync(logPath, "a");
  const child = spawn(bin, args, { stdio: ["ignore", fd, fd], env });
  closeSync(fd);
  live.add(child);
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve(code ?? (signal ? -1 : null));
    });
    child.once("error", () => {
      live.delete(child);
      resolve(-1);
    });
  });
  const guard = watchdog(child.pid ?? 0);
  return { child, exited, guard };
}

export async function stopDaemon(d: Daemon, graceMs: number): Promise<void> {
  if (d.child.exitCode === null && d.child.signalCode === null) {
    d.child.kill("SIGTERM");
    const timer = setTimeout(() => d.child.kill("SIGKILL"), graceMs);
    await d.exited;
    clearTimeout(timer);
  }
  d.guard.kill("SIGKILL");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET url over TLS trusting `ca`; resolves the status code, or 0 when the connection fails. */
function probe(url: string, ca: string, token: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { ca, headers: { authorization: `Bearer ${token}` }, timeout: 5_000 }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(0));
    req.end();
  });
}

async function openssl(args: string[], cwd: string): Promise<void> {
  await execFileAsync("openssl", args, { cwd });
}

/** Self-signed CA and a serving certificate for every name a client may use for the apiserver. */
async function makeCerts(dir: string, extraIps: string[]): Promise<void> {
  const ecKey = () =>
    generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "sec1", format: "pem" });
  await writeFile(join(dir, "ca.key"), ecKey(), { mode: 0o600 });
  await writeFile(join(dir, "apiserver.key"), ecKey(), { mode: 0o600 });
  // The service-account signing key: the apiserver issues and verifies ES256 tokens with it.
  await writeFile(join(dir, "sa.key"), ecKey(), { mode: 0o600 });
  await openssl(
    [
      "req",
      "-x509",
      "-new",
      "-key",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "2",
      "-subj",
      "/CN=svc-test-kube-ca",
    ],
    dir,
  );
  await openssl(
    ["req", "-new", "-key", "apiserver.key", "-out", "apiserver.csr", "-subj", "/CN=kube-apiserver"],
    dir,
  );
  const sans = [
    "IP:127.0.0.1",
    `IP:${SERVICE_IP}`,
    ...extraIps.map((ip) => `IP:${ip}`),
    "DNS:localhost",
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
  ];
  await writeFile(
    join(dir, "apiserver.ext"),
    `subjectAltName=${sans.join(",")}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n` +
      "authorityKeyIdentifier=keyid\n",
  );
  await openssl(
    [
      "x509",
      "-req",
      "-in",
      "apiserver.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "apiserver.crt",
      "-days",
      "2",
      "-extfile",
      "apiserver.ext",
    ],
    dir,
  );
}

/** A client certificate signed by the test CA (for the apiserver calling kubelets). */
async function makeClientCert(dir: string, name: string, subject: string): Promise<void> {
  const key = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({
    type: "sec1",
    format: "pem",
  });
  await writeFile(join(dir, `${name}.key`), key, { mode: 0o600 });
  await openssl(["req", "-new", "-key", `${name}.key`, "-out", `${name}.csr`, "-subj", subject], dir);
  await writeFile(
    join(dir, `${name}.ext`),
    "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n",
  );
  await openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      "-days",
      "2",
      "-extfile",
      `${name}.ext`,
    ],
    dir,
  );
}

export function kubeconfig(url: string, caPem: string, user: string, token: string): string {
  // JSON is YAML, and kubectl / client-node read it as a kubeconfig.
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "svc-test", cluster: { server: url, "certificate-authority-data": b64(caPem) } }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: "svc-test", context: { cluster: "svc-test", user, namespace: "default" } }],
      "current-context": "svc-test",
    },
    null,
    2,
  );
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

/** token-auth-file line: token,user,uid,"group1,group2" */
function tokenLine(token: string, u: StaticUser): string {
  const groups = (u.groups ?? []).join(",");
  return `${token},${u.name},${u.name}${groups ? `,"${groups}"` : ""}`;
}

async function waitReady(
  url: string,
  ca: string,
  token: string,
  d: Daemon,
  logPath: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void d.exited.then((c) => {
    exitCode = c;
  });
  let last = 0;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) {
      throw new Error(`kube-apiserver exited (${exitCode}) while starting:\n${tail(logPath)}`);
    }
    last = await probe(`${url}/readyz`, ca, token);
    if (last === 200) return;
    await sleep(250);
  }
  throw new Error(`kube-apiserver not ready after ${timeoutMs} ms (last /readyz ${last}):\n${tail(logPath)}`);
}

async function waitEtcd(port: number, d: Daemon, logPath: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (d.child.exitCode !== null || d.child.signalCode !== null) {
      throw new Error(`etcd exited while starting:\n${tail(logPath)}`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      const req = httpGet({ host: "127.0.0.1", port, path: "/health", timeout: 2_000 }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c.toString();
        });
        res.on("end", () => resolve(res.statusCode === 200 && body.includes('"health":"true"')));
      });
      req.once("timeout", () => req.destroy());
      req.once("error", () => resolve(false));
    });
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`etcd not healthy after ${timeoutMs} ms:\n${tail(logPath)}`);
}

/** Starts etcd and kube-apiserver; resolves once /readyz answers 200. */
export async function startKube(opts: StartKubeOptions = {}): Promise<KubeCluster> {
  // Resolve binaries first: a missing tool fails fast with the "run make provision" message.
  const etcdBin = toolPath("etcd");
  const apiserverBin = toolPath("kube-apiserver");
  const readyTimeoutMs = opts.readyTimeoutMs ?? 180_000;
  installExitHook();

  const dir = await mkdtemp(join(tmpdir(), "svc-kube-"));
  const dirGuard = watchdog(0, dir);
  let etcd: Daemon | undefined;
  let apiserver: Daemon | undefined;
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (apiserver) await stopDaemon(apiserver, 15_000);
    if (etcd) await stopDaemon(etcd, 10_000);
    dirGuard.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const advertise = opts.advertiseAddress;
    await makeCerts(dir, advertise ? [advertise] : []);
    if (advertise)
      await makeClientCert(
        dir,
        "apiserver-kubelet-client",
        "/O=system:masters/CN=kube-apiserver-kubelet-client",
      );
    const caPem = await readFile(join(dir, "ca.crt"), "utf8");

    const users: StaticUser[] = [
      { name: ADMIN_USER, groups: ["system:masters"] },
      { name: OPERATOR_USER },
      ...(opts.users ?? []),
    ];
    const tokens = new Map<string, string>();
    for (const u of users) {
      if (tokens.has(u.name)) throw new Error(`static user ${u.name} declared twice`);
      if (/[",\n]/.test(u.name) || (u.groups ?? []).some((g) => /[",\n]/.test(g))) {
        throw new Error(`static user ${u.name}: names and groups cannot hold quotes, commas or newlines`);
      }
      tokens.set(u.name, randomBytes(32).toString("hex"));
    }
    await writeFile(
      join(dir, "tokens.csv"),
      `${users.map((u) => tokenLine(tokens.get(u.name) ?? "", u)).join("\n")}\n`,
      { mode: 0o600 },
    );

    // etcd: retried on fresh ports, since a port found free can be taken before etcd binds it.
    const etcdLog = join(dir, "etcd.log");
    let etcdPort = 0;
    for (let attempt = 1; ; attempt++) {
      etcdPort = await freePort();
      const peerPort = await freePort();
      const client = `http://127.0.0.1:${etcdPort}`;
      const peer = `http://127.0.0.1:${peerPort}`;
      etcd = startDaemon(
        etcdBin,
        [
          "--name=svc-test",
          `--data-dir=${join(dir, "etcd")}`,
          `--listen-client-urls=${client}`,
          `--advertise-client-urls=${client}`,
          `--listen-peer-urls=${peer}`,
          `--initial-advertise-peer-urls=${peer}`,
          `--initial-cluster=svc-test=${peer}`,
          "--initial-cluster-state=new",
          // Test data is disposable: skipping fsync spares the shared disk and cores.
          "--unsafe-no-fsync",
          "--log-level=warn",
        ],
        etcdLog,
      );
      try {
        await waitEtcd(etcdPort, etcd, etcdLog, 60_000);
        break;
      } catch (err) {
        await stopDaemon(etcd, 5_000);
        etcd = undefined;
        await rm(join(dir, "etcd"), { recursive: true, force: true });
        if (attempt >= 3) throw err;
      }
    }

    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    const apiserverLog = join(dir, "kube-apiserver.log");
    const network = advertise
      ? [
          "--bind-address=0.0.0.0",
          `--advertise-address=${advertise}`,
          "--authorization-mode=Node,RBAC",
          "--enable-admission-plugins=NodeRestriction",
          `--kubelet-client-certificate=${join(dir, "apiserver-kubelet-client.crt")}`,
          `--kubelet-client-key=${join(dir, "apiserver-kubelet-client.key")}`,
          "--kubelet-preferred-address-types=InternalIP",
          `--client-ca-file=${join(dir, "ca.crt")}`,
        ]
      : [
          "--bind-address=127.0.0.1",
          "--advertise-address=127.0.0.1",
          // The endpoint reconciler refuses a loopback address; nothing here needs the in-cluster
          // `kubernetes` Service endpoints.
          "--endpoint-reconciler-type=none",
          "--authorization-mode=RBAC",
          // Needs the default ServiceAccount that only the controller-manager creates.
          "--disable-admission-plugins=ServiceAccount",
        ];
    const apiserverArgs = [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      ...network,
      `--secure-port=${port}`,
      `--tls-cert-file=${join(dir, "apiserver.crt")}`,
      `--tls-private-key-file=${join(dir, "apiserver.key")}`,
      `--token-auth-file=${join(dir, "tokens.csv")}`,
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--service-account-key-file=${join(dir, "sa.key")}`,
      `--service-account-signing-key-file=${join(dir, "sa.key")}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      "--profiling=false",
      "--v=1",
    ];
    const adminToken = tokens.get(ADMIN_USER) ?? "";
    const launchApiserver = async (): Promise<void> => {
      apiserver = startDaemon(apiserverBin, apiserverArgs, apiserverLog);
      await waitReady(url, caPem, adminToken, apiserver, apiserverLog, readyTimeoutMs);
    };
    await launchApiserver();

    const kubeconfigPaths = new Map<string, string>();
    for (const u of users) {
      const path = join(dir, `kubeconfig-${kubeconfigPaths.size}.yaml`);
      await writeFile(path, kubeconfig(url, caPem, u.name, tokens.get(u.name) ?? ""), { mode: 0o600 });
      kubeconfigPaths.set(u.name, path);
    }
    const lookup = <T>(m: Map<string, T>, user: string): T => {
      const v = m.get(user);
      if (v === undefined) throw new Error(`no static user ${user}; declare it in startKube({ users })`);
      return v;
    };

    return {
      url,
      caPem,
      dir,
      adminKubeconfig: lookup(kubeconfigPaths, ADMIN_USER),
      operatorKubeconfig: lookup(kubeconfigPaths, OPERATOR_USER),
      operatorUser: OPERATOR_USER,
      kubeconfigFor: (user) => lookup(kubeconfigPaths, user),
      tokenFor: (user) => lookup(tokens, user),
      serviceAccountKubeconfig: async (namespace, name) => {
        const admin = lookup(kubeconfigPaths, ADMIN_USER);
        const sa = await kubectl(admin, ["-n", namespace, "create", "serviceaccount", name]);
        if (sa.code !== 0 && !/already exists/.test(sa.stderr)) {
          throw new Error(`could not create service account ${namespace}/${name}: ${sa.stderr.trim()}`);
        }
        const tok = await kubectl(admin, ["-n", namespace, "create", "token", name, "--duration=2h"]);
        if (tok.code !== 0)
          throw new Error(`TokenRequest for ${namespace}/${name} failed: ${tok.stderr.trim()}`);
        const path = join(dir, `kubeconfig-sa-${namespace}-${name}.yaml`);
        const user = `system:serviceaccount:${namespace}:${name}`;
        await writeFile(path, kubeconfig(url, caPem, user, tok.stdout.trim()), { mode: 0o600 });
        return path;
      },
      stop,
      restartApiserver: async () => {
        if (stopped) throw new Error("cluster is stopped");
        if (apiserver) await stopDaemon(apiserver, 15_000);
        // The port was ours a moment ago; Go sets SO_REUSEADDR, so TIME_WAIT does not block it.
        await launchApiserver();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the machine's real kubectl against a kubeconfig; never throws on a non-zero exit. */
export async function kubectl(
  kubeconfigPath: string,
  args: string[],
  input?: string,
  timeoutMs = 60_000,
): Promise<KubectlResult> {
  return await new Promise((resolve, reject) => {
    const child = spawn("kubectl", [`--kubeconfig=${kubeconfigPath}`, `--request-timeout=30s`, ...args], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    // kubectl may exit before reading its stdin (a bad flag, a killed run): the write then fails
    // with EPIPE, which is the exit code's story to tell, not an uncaught error of the test run.
    child.stdin.on("error", () => {});
    child.stdin.end(input ?? "");
  });
}
