// `helm install` end to end, the way a platform team installs svc: the image `make image` builds,
// imported into a real node's containerd; the chart installed with Helm into a namespace that
// enforces Pod Security `restricted`; PostgreSQL outside the cluster, as a managed database would
// be, passed through the documented Secret. Then a first admin, a user and a node, all through the
// proxy's Service; a rolling `helm upgrade` with clients counting failures; `helm uninstall`.
// The steps are docs/install-kubernetes.md's commands, read from the file and run with bash (the
// guide's own test, test/chart-guide.test.ts, runs the rest against a bare apiserver), with only
// what this cluster needs substituted: the database URL, the public address, a NodePort.
// The cluster is the single-node harness (test/harness/cluster.ts) unless SVC_E2E_KUBECONFIG names
// another one (`make e2e-kind`).

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type DocCommand, docCommands } from "./chart-helm.ts";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import { ensureImage } from "./harness/image.ts";
import { freePort, kubectl } from "./harness/kube.ts";
import { type PostgresServer, startPostgres } from "./harness/postgres.ts";
import { toolPath } from "./harness/tools.ts";
import {
  type E2eTarget,
  eventually,
  getJson,
  must,
  runCommand,
  startTarget,
  withHosts,
} from "./helm-e2e-fixture.ts";
import { HttpsClient } from "./proxy-https-client.ts";
import { mustOpen, type TerminalConnection } from "./terminal-client.ts";

const root = join(import.meta.dirname, "..");
const bin = (name: "svc" | "svcctl" | "svcd") => join(root, "bin", name);
const NS = "svc-system";
const RELEASE = "svc";
const PUBLIC_HOST = "svc.e2e.test";
const NODE_PORT = 30443;
const PUBLIC_ADDR = `${PUBLIC_HOST}:${NODE_PORT}`;
const ADMIN_PASSWORD = "e2e-first-admin-password";
const BOB_PASSWORD = "e2e-bob-password-12";
const AGENT_NODE = "web-1";

let target: E2eTarget;
let pg: PostgresServer;
let dir: string;
let kc: string;
let chrome: RunningChromium | undefined;
let caPem = "";
let agent: { child: ChildProcess; output: () => string } | undefined;
const timings: Record<string, number> = {};
let guide: DocCommand[] = [];
const ranGuide = new Set<string>();
/** Extra values this cluster needs on top of the guide's: a NodePort instead of an Ingress. */
const CLUSTER_VALUES = `--set clusterName=e2e --set proxy.service.type=NodePort --set proxy.service.nodePort=${NODE_PORT}`;
let imageRef = "";

const k = (args: string[], input?: string) => kubectl(kc, args, input, 300_000);
const ok = async (args: string[], input?: string) => must(await k(args, input), `kubectl ${args.join(" ")}`);

/** The guide's commands of section `n` (all, or those starting with `prefix`). */
function guideCommands(n: string, prefix = ""): DocCommand[] {
  const found = guide.filter((c) => c.section.startsWith(`${n}. `) && c.text.startsWith(prefix));
  if (found.length === 0) throw new Error(`docs/install-kubernetes.md §${n} has no "${prefix}" command`);
  return found;
}

/**
 * Runs guide commands as one bash script (shell variables carry over, as in a user's terminal),
 * in a folder where `charts/` is the repository's, with the pinned helm and `bin/` on PATH.
 */
async function runGuide(commands: DocCommand[], rewrite: (t: string) => string = (t) => t): Promise<string> {
  for (const c of commands) ranGuide.add(c.text.split("\n")[0] ?? "");
  const script = commands.map((c) => rewrite(c.text)).join("\n");
  const r = await runCommand("bash", ["-euo", "pipefail", "-c", `cd "$0"\n${script}`, dir], {
    env: guideEnv(),
    timeoutMs: 900_000,
  });
  return must(r, `guide commands:\n${script}`).stdout;
}

function guideEnv(): NodeJS.ProcessEnv {
  return {
    KUBECONFIG: kc,
    PATH: `${join(toolPath("helm"), "..")}:${join(root, "bin")}:${process.env["PATH"] ?? ""}`,
  };
}
/** Public names as DNS would resolve them for a user, for the CLIs. */
const hosts = () => ({ [PUBLIC_HOST]: target.nodeAddress });
const cli = (home: string, cmd: string, args: string[], input?: string) =>
  withHosts(dir, hosts(), cmd, args, { env: { SVC_HOME: join(dir, home) }, input, timeoutMs: 120_000 });
const proxyClient = () => new HttpsClient(`https://${target.nodeAddress}:${NODE_PORT}`, caPem, PUBLIC_HOST);

async function login(user: string, password: string): Promise<string> {
  const r = await proxyClient().send({
    method: "POST",
    path: "/v1/webapi/login",
    headers: { origin: `https://${PUBLIC_ADDR}` },
    body: { username: user, password },
  });
  const id = (r.json as { session_id?: unknown } | undefined)?.session_id;
  if (r.status !== 200 || typeof id !== "string") throw new Error(`login ${user}: ${r.status} ${r.text}`);
  return id;
}

const BENCH = process.env["SVC_E2E_BENCH"] === "1";
const TERMINALS = 100;

/** A bare Node process of the same image, as restricted as the chart's Pods: the memory floor. */
function baselineDeployment(image: string): string {
  const labels = { app: "baseline-node" };
  return stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "baseline-node", namespace: NS },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 10001,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: "node",
              image,
              command: [
                "node",
                "-e",
                "require('node:http').createServer((q, s) => s.end('ok')).listen(8080)",
              ],
              readinessProbe: { httpGet: { path: "/", port: 8080 }, periodSeconds: 2 },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ["ALL"] },
              },
            },
          ],
        },
      },
    },
  });
}

/** Working-set bytes of each Pod in the namespace, from the kubelet's summary API. */
async function podMemory(): Promise<Map<string, number>> {
  const nodes = await getJson<{ items: { metadata: { name: string } }[] }>(kc, ["nodes"]);
  const out = new Map<string, number>();
  for (const n of nodes.items) {
    const r = await k(["get", "--raw", `/api/v1/nodes/${n.metadata.name}/proxy/stats/summary`]);
    if (r.code !== 0) throw new Error(`stats summary: ${r.stderr}`);
    const summary = JSON.parse(r.stdout) as {
      pods?: { podRef: { name: string; namespace: string }; memory?: { workingSetBytes?: number } }[];
    };
    for (const p of summary.pods ?? []) {
      if (p.podRef.namespace === NS) out.set(p.podRef.name, p.memory?.workingSetBytes ?? 0);
    }
  }
  return out;
}

/**
 * Calls GET /v1/webapi/session through the NodePort every 100 ms, each on a new connection (as
 * separate clients would), counting answers other than 200 and connection failures.
 */
function pollSession(session: string): { stop(): Promise<{ calls: number; failures: number }> } {
  let calls = 0;
  let failures = 0;
  let running = true;
  const loop = (async () => {
    const client = proxyClient();
    while (running) {
      calls++;
      try {
        const r = await client.send({
          path: "/v1/webapi/session",
          headers: { authorization: `Bearer ${session}` },
        });
        if (r.status !== 200) failures++;
      } catch {
        failures++;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { calls, failures };
    },
  };
}

interface PodList {
  items: {
    metadata: { name: string; labels?: Record<string, string> };
    spec: { containers: { securityContext?: Record<string, unknown> }[] };
    status: {
      phase: string;
      conditions?: { type: string; status: string }[];
      containerStatuses?: { restartCount: number }[];
    };
  }[];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-helm-e2e-"));
  const started = Date.now();
  target = await startTarget();
  kc = target.kubeconfig;
  timings["cluster start (s)"] = (Date.now() - started) / 1000;

  const image = await ensureImage();
  imageRef = image.reference;
  await target.importImage(image.archive, image.reference);

  pg = await startPostgres(process.env, {
    address: target.hostAddress,
    clientCidrs: target.podCidrs,
    password: randomBytes(12).toString("hex"),
  });

  guide = docCommands(await readFile(join(root, "docs", "install-kubernetes.md"), "utf8"));
  await symlink(join(root, "charts"), join(dir, "charts"));
  // §1: the namespace, its Pod Security level, the database Secret (our PostgreSQL's URL).
  await runGuide(guideCommands("1"), (t) =>
    t.replace("postgres://svc:CHANGE-ME@db.example.com:5432/svc", pg.url),
  );
  // §3: helm install, then the guide's rollout status and `helm test`.
  const t0 = Date.now();
  await runGuide(
    guideCommands("3", "helm install"),
    (t) => `${t.replace("svc.example.com:443", PUBLIC_ADDR)} ${CLUSTER_VALUES} --wait --timeout 10m`,
  );
  timings["helm install to all Pods Ready (s)"] = (Date.now() - t0) / 1000;
  await runGuide([...guideCommands("3", "kubectl"), ...guideCommands("3", "helm test")]);

  const secret = await getJson<{ data: Record<string, string> }>(kc, [
    "-n",
    NS,
    "secret",
    `${RELEASE}-proxy-identity`,
  ]);
  caPem = Buffer.from(secret.data["ca.crt"] ?? "", "base64").toString("utf8");
  await writeFile(join(dir, "ca.pem"), caPem);
}, 1_800_000);

afterAll(async () => {
  if (process.env["SVC_E2E_TIMINGS"])
    await writeFile(process.env["SVC_E2E_TIMINGS"], JSON.stringify(timings, null, 2));
  agent?.child.kill("SIGTERM");
  await chrome?.close();
  await target?.stop();
  await pg?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 300_000);

describe("helm install on a cluster whose kubelet runs the chart's Pods", () => {
  it("admits every Pod under Pod Security restricted, and each becomes Ready through its own probes", async () => {
    const pods = await getJson<PodList>(kc, ["-n", NS, "pods"]);
    const byComponent = new Map<string, number>();
    for (const p of pods.items) {
      const c = p.metadata.labels?.["app.kubernetes.io/component"] ?? "?";
      byComponent.set(c, (byComponent.get(c) ?? 0) + 1);
      expect(p.status.phase, p.metadata.name).toBe("Running");
      expect(p.status.conditions?.find((x) => x.type === "Ready")?.status, p.metadata.name).toBe("True");
      for (const s of p.status.containerStatuses ?? []) expect(s.restartCount, p.metadata.name).toBe(0);
    }
    expect(Object.fromEntries(byComponent)).toMatchObject({ auth: 2, proxy: 2, operator: 2 });
    // The namespace enforces restricted: a Pod that does not drop to it is refused at admission.
    const bad = await k([
      "-n",
      NS,
      "run",
      "unrestricted",
      `--image=${imageRef}`,
      "--restart=Never",
      "--",
      "svcd",
      "--version",
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/violates PodSecurity "restricted/);
  }, 600_000);

  it("answers through the guide's port-forward (§5, trying it without DNS)", async () => {
    const line = guideCommands("5", "kubectl -n svc-system port-forward")[0]?.text ?? "";
    ranGuide.add(line);
    const port = await freePort();
    const [cmd, ...args] = line.replace("3080:443", `${port}:443`).split(" ");
    const child = spawn(cmd ?? "kubectl", args, { env: { ...process.env, ...guideEnv() }, stdio: "ignore" });
    try {
      const via = new HttpsClient(`https://localhost:${port}`, caPem, PUBLIC_HOST);
      const ping = await eventually(
        "ping through port-forward",
        async () => {
          const r = await via.send({ path: "/v1/webapi/ping" });
          return r.status === 200 ? r : undefined;
        },
        60_000,
      );
      expect(ping.json).toMatchObject({ cluster_name: "e2e" });
    } finally {
      child.kill("SIGTERM");
    }
  }, 600_000);

  it("gives the first admin a one-time reset link that works in a browser through the Service", async () => {
    // §4, as written: the reset link from the Secret auth wrote.
    const resetUrl = (
      await runGuide(guideCommands("4", "kubectl -n svc-system get secret svc-first-admin"))
    ).trim();
    expect(resetUrl).toMatch(new RegExp(`^https://${PUBLIC_ADDR.replace(/\./g, "\\.")}/web/reset\\?token=`));
    chrome = await launchChromium({
      hostMap: { [PUBLIC_HOST]: target.nodeAddress },
      ignoreHTTPSErrors: true,
    });
    const page: Page = await chrome.context.newPage();
    await page.goto(resetUrl);
    await page.fill("#password", ADMIN_PASSWORD);
    await page.fill("#again", ADMIN_PASSWORD);
    await page.click("#submit");
    await page.waitForSelector("#done:not([hidden])", { timeout: 30_000 });
    await page.close();
    // The link is spent: auth removes it once the admin has a password.
    await eventually("first-admin Secret emptied", async () => {
      const r = await k([
        "-n",
        NS,
        "get",
        "secret",
        `${RELEASE}-first-admin`,
        "-o",
        "jsonpath={.data.reset-url}",
      ]);
      return r.code !== 0 || r.stdout.trim() === "" ? true : undefined;
    });
    await writeFile(join(dir, "admin-pw"), `${ADMIN_PASSWORD}\n`);
    const r = await cli("admin", bin("svc"), [
      "login",
      "--proxy",
      PUBLIC_ADDR,
      "--user",
      "admin",
      "--ca",
      join(dir, "ca.pem"),
      "--password-file",
      join(dir, "admin-pw"),
    ]);
    expect(r.code, r.stderr).toBe(0);
  }, 600_000);

  it("takes a Role and a User from kubectl apply; the user logs in through the proxy's Service", async () => {
    await ok(
      ["-n", NS, "apply", "-f", "-"],
      [
        stringify({
          apiVersion: "svc.dev/v1",
          kind: "Role",
          metadata: { name: "e2e-ops", namespace: NS },
          spec: { allow: { logins: ["root"], node_labels: { env: "prod" } } },
        }),
        stringify({
          apiVersion: "svc.dev/v1",
          kind: "User",
          metadata: { name: "bob", namespace: NS },
          spec: { roles: ["e2e-ops"] },
        }),
      ].join("---\n"),
    );
    await eventually("User bob Ready", async () => {
      const r = await k([
        "-n",
        NS,
        "get",
        "user",
        "bob",
        "-o",
        "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
      ]);
      return r.stdout.trim() === "True" ? true : undefined;
    });
    const reset = await cli("admin", bin("svcctl"), ["users", "reset", "bob", "--json"]);
    expect(reset.code, reset.stderr).toBe(0);
    const t = (JSON.parse(reset.stdout) as { reset_token?: string }).reset_token ?? "";
    expect(t).not.toBe("");
    await writeFile(join(dir, "bob-pw"), `${BOB_PASSWORD}\n`);
    const r = await cli("bob", bin("svc"), [
      "login",
      "--proxy",
      PUBLIC_ADDR,
      "--user",
      "bob",
      "--ca",
      join(dir, "ca.pem"),
      "--reset-token",
      t,
      "--password-file",
      join(dir, "bob-pw"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(await login("bob", BOB_PASSWORD)).not.toBe("");
  }, 600_000);

  it("joins a node agent with a JoinToken resource; svc ssh runs a command on it", async () => {
    // §6, as written: the secret, its hash in a JoinToken, Ready, the host CA, the token.
    const steps = guideCommands("6").filter((c) => !c.text.startsWith("svcd agent"));
    const token = (await runGuide(steps)).trim().split("\n").pop() ?? "";
    expect(token).toMatch(/^web-1\.[A-Za-z0-9_-]+$/);
    // The guide's `svcd agent` line: the proxy's public address only, a reverse tunnel, no port.
    const agentLine = guideCommands("6", "svcd agent")[0]?.text ?? "";
    ranGuide.add(agentLine.split("\n")[0] ?? "");
    const command = agentLine
      .replace("svc.example.com:443", PUBLIC_ADDR)
      .replace('"web-1.SECRET"', `"${token}"`)
      .replace("/var/lib/svc-agent", join(dir, "agent"));
    // Resolving the public name as DNS would, in a mount namespace of its own (as withHosts does).
    await writeFile(join(dir, "agent-hosts"), `127.0.0.1 localhost\n${target.nodeAddress} ${PUBLIC_HOST}\n`);
    const child = spawn(
      "unshare",
      [
        "--mount",
        "--propagation",
        "private",
        "--",
        "bash",
        "-c",
        `mount --bind "$1" /etc/hosts && cd "$0" && exec ${command} --hostname ${AGENT_NODE}`,
        dir,
        join(dir, "agent-hosts"),
      ],
      { env: { ...process.env, ...guideEnv() }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr?.on("data", (c: Buffer) => {
      out += c.toString();
    });
    agent = { child, output: () => out };
    await eventually("agent's tunnel up", async () => {
      if (child.exitCode !== null) throw new Error(`agent exited ${child.exitCode}:\n${out}`);
      return out.includes("tunnel to the proxy is up") ? true : undefined;
    });
    await eventually("JoinToken Used", async () => {
      const r = await k(["-n", NS, "get", "jointoken", "web-1", "-o", "jsonpath={.status.phase}"]);
      return r.stdout.trim() === "Used" ? true : undefined;
    });
    const r = await eventually(
      "svc ssh",
      async () => {
        const x = await cli("bob", bin("svc"), ["ssh", `root@${AGENT_NODE}`, "echo", "hello-from-the-node"]);
        return x.code === 0 ? x : undefined;
      },
      60_000,
    );
    expect(r.stdout).toContain("hello-from-the-node");
  }, 600_000);

  it("runs the browser terminal through the Service and lists its recording", async () => {
    if (!chrome) throw new Error("no browser");
    const page = await chrome.context.newPage();
    await page.goto(`https://${PUBLIC_ADDR}/web/terminal?node=${AGENT_NODE}&login=root`);
    await page.waitForURL(/\/web\/login\?next=/, { timeout: 30_000 });
    await page.fill("#username", "bob");
    await page.fill("#password", BOB_PASSWORD);
    await page.click("#submit");
    await page.waitForSelector('#status[data-state="connected"]', { timeout: 60_000 });
    await page.click("#terminal");
    await page.keyboard.type("echo brow''ser-ok");
    await page.keyboard.press("Enter");
    await eventually(
      "terminal output",
      async () => {
        const lines = await page.evaluate(() => {
          const t = (
            window as unknown as {
              svcTerminal?: {
                term: {
                  buffer: {
                    active: {
                      length: number;
                      getLine(i: number): { translateToString(trim: boolean): string } | undefined;
                    };
                  };
                };
              };
            }
          ).svcTerminal?.term;
          if (!t) return [];
          const out: string[] = [];
          for (let i = 0; i < t.buffer.active.length; i++)
            out.push(t.buffer.active.getLine(i)?.translateToString(true) ?? "");
          return out;
        });
        return lines.includes("browser-ok") ? true : undefined;
      },
      30_000,
    );
    await page.click("#disconnect");
    await page.waitForSelector('#status[data-state="closed"]', { timeout: 30_000 });
    const link = await eventually(
      "recording listed",
      async () => {
        await page.goto(`https://${PUBLIC_ADDR}/web/recordings`);
        await page.waitForSelector("#user:not(:empty)", { timeout: 30_000 });
        return (
          (await page
            .locator("#recordings a")
            .first()
            .getAttribute("href", { timeout: 1000 })
            .catch(() => null)) ?? undefined
        );
      },
      60_000,
    );
    expect(link).toMatch(/^\/web\/recordings\//);
    await page.close();
  }, 600_000);

  // `npm run bench -- cluster` (bench/cluster.bench.ts): memory of each Pod at idle and with 100
  // open terminals, read from the kubelet's summary API, against a bare Node Pod of the same image.
  it.runIf(BENCH)(
    "measures each Pod's memory at idle and with 100 open terminals",
    async () => {
      const baselineStart = Date.now();
      await ok(["-n", NS, "apply", "-f", "-"], baselineDeployment(imageRef));
      await ok(["-n", NS, "rollout", "status", "deployment/baseline-node", "--timeout=600s"]);
      timings["baseline: bare Node Deployment to Ready (s)"] = (Date.now() - baselineStart) / 1000;
      await new Promise((r) => setTimeout(r, 15_000));
      for (const [pod, bytes] of await podMemory()) timings[`memory idle MiB: ${pod}`] = bytes / 2 ** 20;
      const session = await login("bob", BOB_PASSWORD);
      const open: TerminalConnection[] = [];
      for (let i = 0; i < TERMINALS; i++) {
        const t = await mustOpen({
          baseUrl: `https://${target.nodeAddress}:${NODE_PORT}`,
          caPem,
          servername: PUBLIC_HOST,
          query: { node: AGENT_NODE, login: "root", cols: "80", rows: "24" },
          headers: { authorization: `Bearer ${session}` },
          keepOutput: false,
        });
        await t.waitControl("ready");
        open.push(t);
      }
      await new Promise((r) => setTimeout(r, 15_000));
      for (const [pod, bytes] of await podMemory())
        timings[`memory ${TERMINALS} terminals MiB: ${pod}`] = bytes / 2 ** 20;
      for (const t of open) t.ws.close();
      await ok(["-n", NS, "delete", "deployment", "baseline-node", "--wait=true"]);
    },
    900_000,
  );

  it("rolls auth with helm upgrade while clients keep calling and an open terminal stays open", async () => {
    const session = await login("bob", BOB_PASSWORD);
    const term: TerminalConnection = await mustOpen({
      baseUrl: `https://${target.nodeAddress}:${NODE_PORT}`,
      caPem,
      servername: PUBLIC_HOST,
      query: { node: AGENT_NODE, login: "root", cols: "80", rows: "24" },
      headers: { authorization: `Bearer ${session}` },
    });
    await term.waitControl("ready");
    const poll = pollSession(session);
    const t0 = Date.now();
    // §7 as written (CRDs first, then `helm upgrade --reuse-values`), changing a value only auth's
    // Pods use: auth rolls; the proxy replicas, and with them the open terminal, stay.
    await runGuide(guideCommands("7"), (t) =>
      t.startsWith("helm upgrade")
        ? `${t} --set auth.resources.requests.memory=200Mi --wait --timeout 10m`
        : t,
    );
    await ok(["-n", NS, "rollout", "status", `deployment/${RELEASE}-auth`, "--timeout=600s"]);
    const { calls, failures } = await poll.stop();
    timings["helm upgrade (auth) (s)"] = (Date.now() - t0) / 1000;
    timings["helm upgrade: session calls"] = calls;
    timings["helm upgrade: failed session calls"] = failures;
    const mark = term.received();
    term.type("echo still''-open\n");
    await term.waitFor("still-open", 30_000, mark);
    term.ws.close();
    expect(calls).toBeGreaterThan(10);
    expect(failures).toBe(0);
  }, 600_000);

  it("rolls every Deployment with helm upgrade while clients keep calling", async () => {
    const session = await login("bob", BOB_PASSWORD);
    const poll = pollSession(session);
    const t0 = Date.now();
    // logLevel reaches every component's config: operator, auth and proxy all roll.
    await runGuide(
      guideCommands("7", "helm upgrade"),
      (t) => `${t} --set logLevel=debug --wait --timeout 10m`,
    );
    await ok([
      "-n",
      NS,
      "rollout",
      "status",
      "deployment/svc-proxy",
      "deployment/svc-auth",
      "deployment/svc-operator",
      "--timeout=600s",
    ]);
    const { calls, failures } = await poll.stop();
    timings["helm upgrade (all) (s)"] = (Date.now() - t0) / 1000;
    timings["helm upgrade (all): session calls"] = calls;
    timings["helm upgrade (all): failed session calls"] = failures;
    expect(calls).toBeGreaterThan(10);
    expect(failures).toBe(0);
    // Every proxy Pod was replaced, the one holding the node's tunnel too: the agent reconnects
    // through the Service, and any replica reaches it again.
    const again = await eventually(
      "svc ssh after the proxies rolled",
      async () => {
        const x = await cli("bob", bin("svc"), ["ssh", `root@${AGENT_NODE}`, "echo", "back-after-roll"]);
        return x.code === 0 ? x : undefined;
      },
      120_000,
    );
    expect(again.stdout).toContain("back-after-roll");
  }, 900_000);

  it("helm uninstall keeps the CRDs and the CA Secrets, and leaves nothing Terminating", async () => {
    await runGuide(guideCommands("8", "helm uninstall"), (t) => `${t} --wait --timeout 5m`);
    await ok(["get", "crd", "users.svc.dev", "roles.svc.dev", "jointokens.svc.dev"]);
    const secrets = await getJson<{ items: { metadata: { name: string } }[] }>(kc, ["-n", NS, "secrets"]);
    expect(
      secrets.items.map((s) => s.metadata.name).filter((n) => n.startsWith("svc-ca-")).length,
    ).toBeGreaterThan(0);
    const users = await getJson<{ items: { metadata: { name: string; deletionTimestamp?: string } }[] }>(kc, [
      "-n",
      NS,
      "users",
    ]);
    expect(users.items.filter((u) => u.metadata.deletionTimestamp)).toEqual([]);
    expect(users.items.map((u) => u.metadata.name).sort()).toEqual(["admin", "bob"]);
  }, 600_000);

  it("ran every guide command the guide's own test leaves to a cluster with Pods", async () => {
    const guideTest = await readFile(join(root, "test", "chart-guide.test.ts"), "utf8");
    const left = guide
      .map((c) => c.text.split("\n")[0] ?? "")
      .filter((first) => guideTest.includes(JSON.stringify(first)) || guideTest.includes(`'${first}'`));
    expect(left.length).toBeGreaterThan(5);
    for (const first of left) expect([...ranGuide], first).toContain(first);
  });
});
