// A single-node Kubernetes cluster for tests, built like the apiserver harness (kube.ts) from the
// pinned Go-built binaries: etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
// the host; containerd 2, kubelet and kube-proxy in a network namespace of their own (the
// "node"), with runc and the Debian CNI plugins; CoreDNS as a Deployment so Service names resolve.
// Images come from OCI archives imported into containerd, never from a registry.
//
// Network: the host and the node are joined by a veth pair (host 10.250.0.1, node 10.250.0.2).
// Pods live on a bridge inside the node (10.244.0.0/24); the host routes the Pod and Service
// ranges to the node, so tests on the host reach Pods and ClusterIPs, and Pods reach the host
// (the apiserver, PostgreSQL) at 10.250.0.1. Everything the cluster adds to the network goes away
// with the namespace, even when a test worker dies (a watchdog deletes it).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  type Daemon,
  type KubeCluster,
  kubeconfig,
  kubectl,
  SERVICE_CIDR,
  type StaticUser,
  startDaemon,
  startKube,
  stopDaemon,
  tail,
} from "./kube.ts";
import { cachedToolPath, toolCacheDir, toolVersions } from "./tools.ts";

const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const HOST_ADDRESS = "10.250.0.1";
export const NODE_ADDRESS = "10.250.0.2";
export const POD_CIDR = "10.244.0.0/24";
export const DNS_SERVICE_IP = "10.96.0.10";
export const NODE_NAME = "svc-node";
/** Local images the harness builds; no registry is reachable, so Pods name these. */
export const PAUSE_IMAGE = "svc.test/pause:1";
export const COREDNS_IMAGE = "svc.test/coredns:1";

const NODE_USER = `system:node:${NODE_NAME}`;
const PROXY_USER = "system:kube-proxy";
const CONTROLLER_MANAGER_USER = "system:kube-controller-manager";
const SCHEDULER_USER = "system:kube-scheduler";

export interface Cluster {
  /** The control plane: kubeconfigs for the admin and static users, the apiserver URL. */
  readonly kube: KubeCluster;
  readonly nodeName: string;
  /** Where Pods reach the host: bind host services (PostgreSQL) here for Pods to use them. */
  readonly hostAddress: string;
  /** Imports an OCI archive into the node's containerd (namespace k8s.io), keeping its name. */
  importImage(archive: string, name: string): Promise<void>;
  /** The last lines of each node daemon's log, for failure messages. */
  logs(lines?: number): string;
  /** Deletes every Pod, stops every daemon, deletes the network namespace and the folder. */
  stop(): Promise<void>;
}

export interface StartClusterOptions {
  /** Extra static-token users of the apiserver. */
  users?: StaticUser[];
  /** How long to wait for the node and CoreDNS to become Ready (default 240 s). */
  readyTimeoutMs?: number;
}

function nodeBin(name: "kubelet" | "kube-proxy" | "kube-controller-manager" | "kube-scheduler"): string {
  return join(cachedToolPath("kube-apiserver"), "..", name);
}

function goToolBin(tool: string, version: string, binary = tool): string {
  return join(toolCacheDir(), `${tool}-${version}`, "bin", binary);
}

function requireExecutable(path: string): string {
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: run \`make provision\` (builds the cluster's pinned tools once)`);
  }
  return path;
}

async function run(cmd: string, args: string[], timeoutMs = 60_000): Promise<string> {
  const { stdout } = await execFileAsync(cmd, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

async function tryRun(cmd: string, args: string[]): Promise<void> {
  try {
    await run(cmd, args, 30_000);
  } catch {
    // Teardown of what may already be gone.
  }
}

/** Builds the pause program (test/harness/pause) once per Go version into the cache. */
async function pauseBinary(): Promise<string> {
  const goVersion = (await run("go", ["env", "GOVERSION"])).trim();
  const out = join(toolCacheDir(), "cluster-images", `pause-${goVersion}`);
  if (!existsSync(out)) {
    await mkdir(join(out, ".."), { recursive: true });
    const tmp = `${out}.${process.pid}`;
    await execFileAsync(
      "go",
      ["build", "-trimpath", "-ldflags=-s -w", "-o", tmp, join(import.meta.dirname, "pause", "pause.go")],
      { env: { ...process.env, CGO_ENABLED: "0", GOFLAGS: "" }, cwd: import.meta.dirname },
    );
    await run("mv", [tmp, out]);
  }
  return out;
}

/**
 * An OCI archive of one static binary as the entrypoint, assembled with umoci (the same tool the
 * project's image build uses), cached by the binary's path and size.
 */
async function singleBinaryImage(
  binary: string,
  entrypoint: string[],
  user: string,
  key: string,
): Promise<string> {
  const dir = join(toolCacheDir(), "cluster-images");
  const archive = join(dir, `${key}.tar`);
  if (existsSync(archive)) return archive;
  const work = join(dir, `${key}.${process.pid}`);
  await run("rm", ["-rf", work]);
  await mkdir(join(work, "root"), { recursive: true });
  const inImage = join(work, "root", entrypoint[0] ?? "/entry");
  await mkdir(join(inImage, ".."), { recursive: true });
  await run("cp", [binary, inImage]);
  const tar = ["--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner"];
  await run("tar", [...tar, "-C", join(work, "root"), "-cf", join(work, "layer.tar"), "."]);
  const layout = join(work, "layout");
  await run("umoci", ["init", "--layout", layout]);
  await run("umoci", ["new", "--image", `${layout}:1`]);
  await run("umoci", ["raw", "add-layer", "--no-history", "--image", `${layout}:1`, join(work, "layer.tar")]);
  const entry = entrypoint.flatMap((e) => ["--config.entrypoint", e]);
  await run("umoci", [
    "config",
    "--no-history",
    "--image",
    `${layout}:1`,
    ...entry,
    "--config.user",
    user,
    "--created",
    "1970-01-01T00:00:00Z",
  ]);
  await run("umoci", ["gc", "--layout", layout]);
  await run("tar", [...tar, "-C", layout, "-cf", `${archive}.tmp`, "."]);
  await run("mv", [`${archive}.tmp`, archive]);
  await run("rm", ["-rf", work]);
  return archive;
}

function containerdConfig(dir: string, socket: string): string {
  return `version = 3
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"

[grpc]
  address = "${socket}"

[ttrpc]
  address = "${socket}.ttrpc"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "${PAUSE_IMAGE}"

[plugins."io.containerd.cri.v1.runtime"]
  # Without CAP_SYS_RESOURCE nothing may lower oom_score_adj; runc then fails with "can't get
  # final child's PID from pipe". Restricting keeps Pods at or above containerd's own score.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "${dir}/cni/net.d"

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`;
}

function cniConfig(dir: string): string {
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "svc-test",
      plugins: [
        {
          type: "bridge",
          bridge: "svccni0",
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            ranges: [[{ subnet: POD_CIDR }]],
            routes: [{ dst: "0.0.0.0/0" }],
            dataDir: join(dir, "cni", "ipam"),
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

function kubeletConfig(dir: string, socket: string): string {
  return JSON.stringify(
    {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      // The host is cgroup v1 (hybrid) with cgroupfs and swap; each default refuses to start.
      failCgroupV1: false,
      cgroupDriver: "cgroupfs",
      failSwapOn: false,
      containerRuntimeEndpoint: `unix://${socket}`,
      podLogsDir: join(dir, "pod-logs"),
      clusterDNS: [DNS_SERVICE_IP],
      clusterDomain: "cluster.local",
      resolvConf: join(dir, "resolv.conf"),
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: join(dir, "ca.crt") },
      },
      authorization: { mode: "Webhook" },
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      // Eviction needs image filesystem stats that cgroup v1 with overlayfs on this disk does not
      // give; a test cluster would only evict its own Pods.
      evictionHard: { "memory.available": "1Mi", "nodefs.available": "0%", "imagefs.available": "0%" },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      serializeImagePulls: false,
      maxPods: 60,
      nodeStatusReportFrequency: "10s",
    },
    null,
    2,
  );
}

function kubeProxyConfig(kubeconfigPath: string): string {
  return JSON.stringify(
    {
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      clientConnection: { kubeconfig: kubeconfigPath },
      mode: "iptables",
      clusterCIDR: POD_CIDR,
      hostnameOverride: NODE_NAME,
      bindAddress: NODE_ADDRESS,
      healthzBindAddress: "127.0.0.1:10256",
      metricsBindAddress: "127.0.0.1:10249",
      // The node namespace is fresh: leave the host's conntrack table sizes alone.
      conntrack: { maxPerCore: 0, min: 0 },
      // A Pod calling a Service that lands on itself or a neighbour on the same bridge needs the
      // reply to come back through the node; masquerading everything guarantees it.
      iptables: { masqueradeAll: true },
    },
    null,
    2,
  );
}

function schedulerConfig(kubeconfigPath: string): string {
  return JSON.stringify(
    {
      apiVersion: "kubescheduler.config.k8s.io/v1",
      kind: "KubeSchedulerConfiguration",
      clientConnection: { kubeconfig: kubeconfigPath },
      leaderElection: { leaderElect: false },
    },
    null,
    2,
  );
}

/** CoreDNS with the RBAC, Service and Corefile a kubeadm cluster would have (port 1053, no caps). */
function corednsManifest(): string {
  const labels = { "k8s-app": "kube-dns" };
  const items = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: "kube-system" } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        {
          apiGroups: [""],
          resources: ["endpoints", "services", "pods", "namespaces"],
          verbs: ["list", "watch"],
        },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: "kube-system" }],
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "coredns", namespace: "kube-system" },
      data: {
        Corefile: [
          ".:1053 {",
          "    errors",
          "    health :8080",
          "    ready :8181",
          "    kubernetes cluster.local in-addr.arpa ip6.arpa {",
          "        pods insecure",
          "        fallthrough in-addr.arpa ip6.arpa",
          "    }",
          "    cache 30",
          "}",
          "",
        ].join("\n"),
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "coredns", namespace: "kube-system", labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: "coredns",
            dnsPolicy: "Default",
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65532,
              seccompProfile: { type: "RuntimeDefault" },
            },
            containers: [
              {
                name: "coredns",
                image: COREDNS_IMAGE,
                imagePullPolicy: "Never",
                args: ["-conf", "/etc/coredns/Corefile"],
                ports: [
                  { name: "dns", containerPort: 1053, protocol: "UDP" },
                  { name: "dns-tcp", containerPort: 1053, protocol: "TCP" },
                ],
                readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
                livenessProbe: { httpGet: { path: "/health", port: 8080 } },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ["ALL"] },
                },
                volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
              },
            ],
            volumes: [{ name: "config", configMap: { name: "coredns" } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: "kube-system", labels },
      spec: {
        clusterIP: DNS_SERVICE_IP,
        selector: labels,
        ports: [
          { name: "dns", port: 53, targetPort: 1053, protocol: "UDP" },
          { name: "dns-tcp", port: 53, targetPort: 1053, protocol: "TCP" },
        ],
      },
    },
  ];
  return JSON.stringify({ apiVersion: "v1", kind: "List", items });
}

/** Deletes the node namespace, the host's veth end and routes when `pid` (this worker) dies. */
function networkWatchdog(pid: number, netns: string, hostVeth: string): ChildProcess {
  const script =
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done; ' +
    'for p in $(ip netns pids "$2" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done; ' +
    'ip netns delete "$2" 2>/dev/null; ip link delete "$3" 2>/dev/null; exit 0';
  const w = spawn("bash", ["-c", script, "netns-watchdog", String(pid), netns, hostVeth], {
    detached: true,
    stdio: "ignore",
  });
  w.unref();
  return w;
}

/**
 * When `pid` (this worker) dies without stop(): kills every Pod's processes (they live in network
 * namespaces of their own, so deleting the node's does not end them), then unmounts what the
 * kubelet and containerd mounted below `dir` and removes the Pod cgroups, before the apiserver
 * harness's own watchdog deletes the folder (3 s later).
 */
function podWatchdog(pid: number, dir: string): ChildProcess {
  const script =
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done; ' +
    "for f in $(find /sys/fs/cgroup/*/kubepods -name cgroup.procs 2>/dev/null); do " +
    'for p in $(cat "$f"); do kill -9 "$p" 2>/dev/null; done; done; ' +
    "sleep 1; " +
    'grep -o " $2/[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done; ' +
    'for c in /sys/fs/cgroup/*/kubepods; do find "$c" -depth -type d -exec rmdir {} \\; 2>/dev/null; done; ' +
    "exit 0";
  const w = spawn("bash", ["-c", script, "pod-watchdog", String(pid), dir], {
    detached: true,
    stdio: "ignore",
  });
  w.unref();
  return w;
}

/** Unmounts everything below `dir` (volumes, overlay roots, netns files), deepest first. */
async function unmountBelow(dir: string): Promise<void> {
  const mounts = (await run("cat", ["/proc/self/mounts"]))
    .split("\n")
    .map((l) => (l.split(" ")[1] ?? "").replace(/\\040/g, " "))
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) await tryRun("umount", ["-l", m]);
}

/**
 * Removes the (now empty) cgroups the kubelet made for Pods under every cgroup v1 controller
 * (cgroupfs driver: /sys/fs/cgroup/<controller>/kubepods/...), deepest first.
 */
async function removeCgroups(): Promise<void> {
  const root = "/sys/fs/cgroup";
  if (!existsSync(root)) return;
  for (const controller of readdirSync(root)) {
    const top = join(root, controller, "kubepods");
    if (!existsSync(top)) continue;
    const dirs = (await run("find", [top, "-mindepth", "0", "-type", "d"]).catch(() => ""))
      .split("\n")
      .filter(Boolean)
      .sort((a, b) => b.length - a.length);
    for (const d of dirs) await tryRun("rmdir", [d]);
  }
}

/** Kills the containerd shims (and with them the containers) started from this containerd. */
async function killShims(socket: string): Promise<void> {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = (await run("cat", [`/proc/${pid}/cmdline`])).split("\0");
      if (cmdline[0]?.endsWith("containerd-shim-runc-v2") && cmdline.includes(socket)) {
        process.kill(Number(pid), "SIGKILL");
      }
    } catch {
      // Gone meanwhile.
    }
  }
}

export async function startCluster(opts: StartClusterOptions = {}): Promise<Cluster> {
  const versions = toolVersions();
  const containerdVersion = versions["CONTAINERD_VERSION"] ?? "";
  const corednsVersion = versions["COREDNS_VERSION"] ?? "";
  const containerdBin = requireExecutable(goToolBin("containerd", containerdVersion));
  const ctrBin = requireExecutable(goToolBin("containerd", containerdVersion, "ctr"));
  const corednsBin = requireExecutable(goToolBin("coredns", corednsVersion));
  const kubeletBin = requireExecutable(nodeBin("kubelet"));
  const proxyBin = requireExecutable(nodeBin("kube-proxy"));
  const cmBin = requireExecutable(nodeBin("kube-controller-manager"));
  const schedBin = requireExecutable(nodeBin("kube-scheduler"));
  const readyTimeoutMs = opts.readyTimeoutMs ?? 240_000;

  const id = String(process.pid % 100_000);
  const netns = `svc-node-${id}`;
  const hostVeth = `svch${id}`;
  const nodeVeth = `svcn${id}`;
  const daemons: { name: string; d: Daemon; log: string }[] = [];
  let kube: KubeCluster | undefined;
  let guard: ChildProcess | undefined;
  let podGuard: ChildProcess | undefined;
  let stopped = false;
  let socket = "";

  const logs = (lines = 30): string =>
    daemons.map(({ name, log }) => `--- ${name} (${log})\n${tail(log, lines)}`).join("\n");

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const admin = kube?.adminKubeconfig;
    if (admin) {
      // Pods first, while the kubelet runs, so CNI DEL and unmounts happen the normal way.
      await kubectl(admin, [
        "delete",
        "pods",
        "--all-namespaces",
        "--all",
        "--grace-period=1",
        "--wait=false",
      ]);
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const left = await kubectl(admin, ["get", "pods", "-A", "-o", "name"]);
        if (left.code !== 0 || left.stdout.trim() === "") break;
        await sleep(1_000);
      }
    }
    for (const { d } of [...daemons].reverse()) await stopDaemon(d, 10_000);
    if (socket) await killShims(socket);
    if (kube) await unmountBelow(kube.dir);
    await kube?.stop();
    for (const p of (await run("ip", ["netns", "pids", netns]).catch(() => "")).split("\n").filter(Boolean)) {
      try {
        process.kill(Number(p), "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await tryRun("ip", ["netns", "delete", netns]);
    await tryRun("ip", ["link", "delete", hostVeth]);
    await removeCgroups();
    guard?.kill("SIGKILL");
    podGuard?.kill("SIGKILL");
  };

  try {
    // The network: a namespace for the node, joined to the host by a veth pair.
    await tryRun("ip", ["netns", "delete", netns]);
    await tryRun("ip", ["link", "delete", hostVeth]);
    await run("ip", ["netns", "add", netns]);
    guard = networkWatchdog(process.pid, netns, hostVeth);
    await run("ip", ["link", "add", hostVeth, "type", "veth", "peer", "name", nodeVeth]);
    await run("ip", ["link", "set", nodeVeth, "netns", netns]);
    await run("ip", ["addr", "add", `${HOST_ADDRESS}/30`, "dev", hostVeth]);
    await run("ip", ["link", "set", hostVeth, "up"]);
    await run("ip", ["-n", netns, "addr", "add", `${NODE_ADDRESS}/30`, "dev", nodeVeth]);
    await run("ip", ["-n", netns, "link", "set", nodeVeth, "up"]);
    await run("ip", ["-n", netns, "link", "set", "lo", "up"]);
    await run("ip", ["-n", netns, "route", "add", "default", "via", HOST_ADDRESS]);
    await run("ip", ["route", "add", POD_CIDR, "via", NODE_ADDRESS]);
    await run("ip", ["route", "add", SERVICE_CIDR, "via", NODE_ADDRESS]);
    await run("ip", ["netns", "exec", netns, "sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    // Pod to Service to a Pod on the same bridge: kube-proxy wants bridged traffic through iptables.
    await tryRun("ip", ["netns", "exec", netns, "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1"]);

    // The control plane on the host, advertising the host's end of the veth.
    kube = await startKube({
      advertiseAddress: HOST_ADDRESS,
      users: [
        { name: NODE_USER, groups: ["system:nodes"] },
        { name: PROXY_USER },
        { name: CONTROLLER_MANAGER_USER },
        { name: SCHEDULER_USER },
        ...(opts.users ?? []),
      ],
    });
    const dir = kube.dir;
    podGuard = podWatchdog(process.pid, dir);
    const port = new URL(kube.url).port;
    const nodeUrl = `https://${HOST_ADDRESS}:${port}`;
    const writeKubeconfig = async (user: string, url: string): Promise<string> => {
      const path = join(dir, `kubeconfig-${user.replace(/[^a-z0-9]+/g, "-")}.json`);
      await writeFile(path, kubeconfig(url, kube?.caPem ?? "", user, kube?.tokenFor(user) ?? ""), {
        mode: 0o600,
      });
      return path;
    };

    const start = async (
      name: string,
      bin: string,
      args: string[],
      inNode: boolean,
      env?: NodeJS.ProcessEnv,
    ) => {
      const log = join(dir, `${name}.log`);
      // nsenter joins only the network namespace: `ip netns exec` would also give each daemon a
      // mount namespace of its own, and the kubelet's volume mounts must be seen by containerd.
      const d = inNode
        ? startDaemon("nsenter", [`--net=/run/netns/${netns}`, "--", bin, ...args], log, env)
        : startDaemon(bin, args, log, env);
      daemons.push({ name, d, log });
      return d;
    };

    // Controller-manager and scheduler beside the apiserver.
    await start(
      "kube-controller-manager",
      cmBin,
      [
        `--kubeconfig=${await writeKubeconfig(CONTROLLER_MANAGER_USER, kube.url)}`,
        `--service-account-private-key-file=${join(dir, "sa.key")}`,
        `--root-ca-file=${join(dir, "ca.crt")}`,
        "--use-service-account-credentials=true",
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        "--secure-port=0",
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        "--v=1",
      ],
      false,
    );
    const schedConfig = join(dir, "scheduler.json");
    await writeFile(schedConfig, schedulerConfig(await writeKubeconfig(SCHEDULER_USER, kube.url)));
    await start("kube-scheduler", schedBin, [`--config=${schedConfig}`, "--secure-port=0", "--v=1"], false);

    // containerd in the node namespace.
    socket = join(dir, "containerd", "containerd.sock");
    await mkdir(join(dir, "containerd"), { recursive: true });
    await mkdir(join(dir, "cni", "net.d"), { recursive: true });
    await writeFile(join(dir, "cni", "net.d", "10-svc-test.conflist"), cniConfig(dir));
    await writeFile(join(dir, "containerd.toml"), containerdConfig(dir, socket));
    // The shim and runc are found on PATH.
    const binDir = join(containerdBin, "..");
    const nodeEnv = { ...process.env, PATH: `${binDir}:/usr/sbin:/usr/bin:/sbin:/bin` };
    const containerd = await start(
      "containerd",
      containerdBin,
      [`--config=${join(dir, "containerd.toml")}`, "--log-level=warn"],
      true,
      nodeEnv,
    );
    for (let i = 0; !existsSync(socket); i++) {
      if (containerd.child.exitCode !== null || i > 300)
        throw new Error(`containerd did not start:\n${logs()}`);
      await sleep(100);
    }
    const ctr = (args: string[]) =>
      run(ctrBin, ["--address", socket, "--namespace", "k8s.io", ...args], 300_000);
    const importImage = async (archive: string, name: string): Promise<void> => {
      // One name per image: --base-name turns the index's tag (org.opencontainers.image.ref.name)
      // into <repository>:<tag>. (--index-name would add a second, expiring "import-<date>" name
      // that the CRI may pick and then lose.)
      // An index whose ref.name is already a full reference (the project's image) names itself.
      const index = JSON.parse(
        await run("tar", ["-xOf", archive, "./index.json"]).catch(() =>
          run("tar", ["-xOf", archive, "index.json"]),
        ),
      ) as {
        manifests?: { annotations?: Record<string, string> }[];
      };
      const refName = index.manifests?.[0]?.annotations?.["org.opencontainers.image.ref.name"] ?? "";
      const base = /[/:]/.test(refName) ? [] : ["--base-name", name.slice(0, name.lastIndexOf(":"))];
      await ctr(["images", "import", ...base, archive]);
      const listed = await ctr(["images", "list", "-q"]);
      if (!listed.split("\n").includes(name))
        throw new Error(`image ${name} not in containerd after import:\n${listed}`);
    };
    await importImage(
      await singleBinaryImage(await pauseBinary(), ["/pause"], "65535:65535", "pause"),
      PAUSE_IMAGE,
    );
    await importImage(
      await singleBinaryImage(corednsBin, ["/coredns"], "65532:65532", `coredns-${corednsVersion}`),
      COREDNS_IMAGE,
    );

    // kubelet and kube-proxy in the node namespace.
    await writeFile(join(dir, "resolv.conf"), "nameserver 127.0.0.1\n");
    await writeFile(join(dir, "kubelet.json"), kubeletConfig(dir, socket));
    await start(
      "kubelet",
      kubeletBin,
      [
        `--config=${join(dir, "kubelet.json")}`,
        `--kubeconfig=${await writeKubeconfig(NODE_USER, nodeUrl)}`,
        `--root-dir=${join(dir, "kubelet")}`,
        `--cert-dir=${join(dir, "kubelet-pki")}`,
        `--hostname-override=${NODE_NAME}`,
        `--node-ip=${NODE_ADDRESS}`,
        "--v=1",
      ],
      true,
      nodeEnv,
    );
    await writeFile(
      join(dir, "kube-proxy.json"),
      kubeProxyConfig(await writeKubeconfig(PROXY_USER, nodeUrl)),
    );
    await start("kube-proxy", proxyBin, [`--config=${join(dir, "kube-proxy.json")}`, "--v=1"], true, nodeEnv);

    // Ready: the node reports Ready, then CoreDNS answers.
    const admin = kube.adminKubeconfig;
    const deadline = Date.now() + readyTimeoutMs;
    const waitFor = async (what: string, check: () => Promise<boolean>): Promise<void> => {
      while (!(await check())) {
        for (const { name, d } of daemons) {
          if (d.child.exitCode !== null) throw new Error(`${name} exited (${d.child.exitCode}):\n${logs()}`);
        }
        if (Date.now() > deadline)
          throw new Error(`${what} not ready after ${readyTimeoutMs} ms:\n${logs()}`);
        await sleep(1_000);
      }
    };
    await waitFor("node", async () => {
      const r = await kubectl(admin, [
        "get",
        "node",
        NODE_NAME,
        "-o",
        "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
      ]);
      return r.stdout.trim() === "True";
    });
    const applied = await kubectl(admin, ["apply", "-f", "-"], corednsManifest());
    if (applied.code !== 0) throw new Error(`CoreDNS manifest refused: ${applied.stderr}`);
    await waitFor("CoreDNS", async () => {
      const r = await kubectl(admin, [
        "-n",
        "kube-system",
        "get",
        "deployment",
        "coredns",
        "-o",
        "jsonpath={.status.readyReplicas}",
      ]);
      return r.stdout.trim() === "1";
    });

    return { kube, nodeName: NODE_NAME, hostAddress: HOST_ADDRESS, importImage, logs, stop };
  } catch (err) {
    const detail = daemons.length > 0 ? `\n${logs()}` : "";
    await stop();
    if (err instanceof Error && detail && !err.message.includes("--- ")) err.message += detail;
    throw err;
  }
}
