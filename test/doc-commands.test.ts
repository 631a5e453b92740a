// Every command in the ```sh blocks of README.md and docs/*.md is either run here, against a real
// `svcd start` (free ports, a fresh data folder), or listed in ELSEWHERE with the test that runs
// it; a command in neither fails with its file and line, so the docs cannot drift from the code.
// Substitutions are explicit (SUBST): placeholders (<token>, <node>), ports and paths only.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as pty from "node-pty";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caPin } from "../server/agent/ca-pin.ts";
import { docCommands, root } from "./chart-helm.ts";
import { type Daemon, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";

const execFileP = promisify(execFile);
const STEP = 60_000;

interface Located {
  file: string;
  line: number;
  text: string;
}

/** The ```sh commands of a markdown file, each with the line its first line is on. */
function located(file: string, markdown: string): Located[] {
  const lines = markdown.split("\n");
  let cursor = 0;
  return docCommands(markdown).map((c) => {
    const first = c.text.split("\n")[0] ?? "";
    const at = lines.findIndex((l, i) => i >= cursor && l.trim() === first.trim());
    cursor = at + 1;
    return { file, line: at + 1, text: c.text };
  });
}

const key = (file: string, text: string) => `${file}\n${text}`;

/**
 * Commands another file runs. `reads`: that test reads the doc with docCommands and runs the
 * command from it; `sameAs`: the command is also in that doc, whose tests run it; `evidence`:
 * strings that file's source must contain (the command, or its argv when run without a shell).
 */
interface Elsewhere {
  file: string;
  command?: string; // every command of `file` when absent
  by: string[];
  why: string;
  reads?: string;
  sameAs?: string;
  evidence?: string[];
}

const IMAGE_RUN = "test/image-run.test.ts";
const ELSEWHERE: Elsewhere[] = [
  {
    file: "docs/install-kubernetes.md",
    by: ["test/chart-guide.test.ts", "test/helm-e2e.test.ts"],
    reads: "install-kubernetes.md",
    why: "the guide's test runs it against an apiserver; what needs Pods, the cluster test",
  },
  {
    file: "docs/kubernetes-mode.md",
    command: "kubectl -n svc-system get secret svc-first-admin -o jsonpath='{.data.reset-url}' | base64 -d",
    by: ["test/helm-e2e.test.ts"],
    reads: "install-kubernetes.md",
    sameAs: "docs/install-kubernetes.md",
    why: "the guide's §4 command, run on the cluster",
  },
  {
    file: "docs/operator.md",
    command: "kubectl apply --server-side --force-conflicts -f charts/svc/crds/",
    by: ["test/chart-guide.test.ts"],
    reads: "install-kubernetes.md",
    sameAs: "docs/install-kubernetes.md",
    why: "the guide's §7 command",
  },
  {
    file: "docs/operator.md",
    command: "helm upgrade svc charts/svc --namespace svc-system --reuse-values",
    by: ["test/chart-guide.test.ts"],
    reads: "install-kubernetes.md",
    sameAs: "docs/install-kubernetes.md",
    why: "the guide's §7 command",
  },
  {
    file: "README.md",
    command: "make test    # every test: lint, format, types, unit and integration tests against real peers",
    by: [".ci/run"],
    evidence: ["make test"],
    why: "the suite itself: CI runs it",
  },
  {
    file: "docs/testing-kubernetes.md",
    command: "make provision                        # once: builds the tools into the cache",
    by: ["Makefile"],
    evidence: ["test: deps provision"],
    why: "`make test` depends on it",
  },
  {
    file: "docs/testing-kubernetes.md",
    command: "vitest run test/kube-harness.test.ts  # the harness test itself",
    by: ["test/kube-harness.test.ts"],
    evidence: ["startKube"],
    why: "it runs that test file, which is in the suite",
  },
  {
    file: "README.md",
    command:
      "make image                    # dist/svc-image.tar: ghcr.io/svc-platform/svc:0.1.0, prints the digest",
    by: ["test/image.test.ts", "test/harness/image.ts"],
    evidence: ["make image", "scripts", "build.sh"],
    why: "the harness runs the target's recipe, scripts/image/build.sh",
  },
  {
    file: "docs/image.md",
    command: "make image",
    by: ["test/image.test.ts", "test/harness/image.ts"],
    evidence: ["make image", "scripts", "build.sh"],
    why: "the harness runs the target's recipe, scripts/image/build.sh",
  },
  {
    file: "docs/image.md",
    command: "podman load --input dist/svc-image.tar",
    by: [IMAGE_RUN],
    evidence: ['"load", "--input", image.archive'],
    why: "argv form, the archive from the harness",
  },
  {
    file: "docs/image.md",
    command: "podman run --rm ghcr.io/svc-platform/svc:0.1.0 --version",
    by: [IMAGE_RUN],
    evidence: ['"run", "--rm", "--runtime", "runc", image.reference, "--version"'],
    why: "argv form with --runtime runc (docs/image.md says why)",
  },
  {
    file: "docs/image.md",
    command:
      "podman run --detach --name svc --network host --read-only --cap-drop all \\\n  --volume svc-data:/var/lib/svc ghcr.io/svc-platform/svc:0.1.0",
    by: [IMAGE_RUN],
    evidence: ['"--detach"', '"--read-only"', '"--cap-drop"', '"--volume"'],
    why: "argv form with free ports (docs/image.md says why)",
  },
  ...["README.md", "docs/image.md"].flatMap((file): Elsewhere[] => [
    {
      file,
      command: "skopeo copy oci-archive:dist/svc-image.tar docker://ghcr.io/svc-platform/svc:0.1.0",
      by: [IMAGE_RUN],
      evidence: ["skopeo copy oci-archive:", '"copy"'],
      why: "to an oci: layout instead of a registry (none runs on the test machines)",
    },
    {
      file,
      command: "kind load image-archive dist/svc-image.tar",
      by: [IMAGE_RUN],
      evidence: ["kind load image-archive", '"--all-platforms"', '"--digests"'],
      why: "kind needs Docker: the ctr import kind runs in its node, with kind's flags",
    },
  ]),
  {
    file: "docs/image.md",
    command: "ctr -n k8s.io images import dist/svc-image.tar",
    by: [IMAGE_RUN],
    evidence: ['["--namespace", "k8s.io", "images", "import", image.archive]'],
    why: "argv form into a private containerd",
  },
  {
    file: "docs/sso.md",
    by: ["test/sso-cli.test.ts"],
    reads: "sso.md",
    why: "svc login --auth needs an identity provider and a browser: the SSO CLI test runs the guide's commands against oidc-provider with Chromium",
  },
  {
    file: "docs/apps.md",
    by: ["test/apps-docs.test.ts"],
    reads: "apps.md",
    why: "an App needs an upstream and a signed-in user: the guide's test runs its commands against svcd start with go-httpbin, and its verification example as the app",
  },
  {
    file: "docs/tunnels.md",
    by: ["test/tunnel-cli.test.ts"],
    evidence: ['"--proxy"', '"--tunnel"', '"--ca-pin"', '"--token"', '"--data-dir"'],
    why: "a token and a node's own data folder: the tunnel CLI test runs svcd agent --proxy --tunnel as a process and reaches it with svc ssh",
  },
  {
    file: "docs/performance.md",
    command: "npm run bench -- tunnel    # bench/tunnel.bench.ts, about 1.5–2 minutes",
    by: ["bench/tunnel.bench.ts", "package.json"],
    evidence: ['"bench": "node bench/run.ts"'],
    why: "a benchmark: `make bench` runs it, not the test suite (minutes of load)",
  },
  ...["auth", "proxy"].map(
    (name): Elsewhere => ({
      file: "docs/performance.md",
      command: `node bench/run.ts ${name}${name === "auth" ? "     # IssueUserCerts, empty RPC, logins (issue 3)" : "    # /v1/webapi/ping, /v1/webapi/session vs bare fastify (issue 4)"}`,
      by: [`bench/${name}.bench.ts`, "Makefile"],
      evidence: ["bench/run.ts"],
      why: "a benchmark: `make bench` runs it, not the test suite (minutes of load)",
    }),
  ),
];

function httpsStatus(port: number, ca: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, ca, servername: "localhost" }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("every command in README.md and docs/*.md is run by a test", () => {
  const all: Located[] = [];
  let files: string[] = [];
  const ran = new Set<string>();
  let dir = "";
  let env: NodeJS.ProcessEnv = {};
  let ports: { auth: number; proxy: number; diag: number; node: number };
  let platform: Daemon | undefined;
  let agent: Daemon | undefined;

  /** The command of `file` whose text starts with `prefix` (the doc must still have it). */
  const pick = (file: string, prefix: string): Located => {
    const c = all.find((x) => x.file === file && x.text.startsWith(prefix));
    if (!c) throw new Error(`${file} has no "${prefix}" command any more`);
    return c;
  };

  /** Runs a doc command with bash in the scratch folder, after the listed substitutions. */
  async function sh(c: Located, subst: Array<[string, string]> = []): Promise<string> {
    let text = c.text;
    for (const [from, to] of subst) {
      if (!text.includes(from)) throw new Error(`${c.file}:${c.line}: no "${from}" in ${text}`);
      text = text.replaceAll(from, to);
    }
    ran.add(key(c.file, c.text));
    try {
      const r = await execFileP("bash", ["-euo", "pipefail", "-c", text], { cwd: dir, env, timeout: 50_000 });
      return r.stdout;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`${c.file}:${c.line}: ${text}\nfailed: ${e.stderr ?? ""}${e.stdout ?? ""}`);
    }
  }

  beforeAll(async () => {
    files = [
      "README.md",
      ...(await readdir(join(root, "docs"))).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
    ];
    for (const f of files) all.push(...located(f, await readFile(join(root, f), "utf8")));
    // A user's checkout: `bin/` and `data/` under the current folder (README runs from the repo).
    dir = await mkdtemp(join(tmpdir(), "svc-doc-commands-"));
    await symlink(join(root, "bin"), join(dir, "bin"));
    ports = {
      auth: await freePort(),
      proxy: await freePort(),
      diag: await freePort(),
      node: await freePort(),
    };
    env = { ...process.env, SVC_HOME: join(dir, "home"), SVC_AUTH_ADDR: `127.0.0.1:${ports.auth}` };
    for (const k of ["SVC_DATA_DIR", "SVC_ADMIN_PASSWORD_FILE"]) delete env[k];
  });

  afterAll(async () => {
    await agent?.stop();
    await platform?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    "README: make start, svc login --reset-token, svcctl tokens add, the printed svcd agent, svc ls, svc ssh",
    async () => {
      // `make start` builds the console (make test did already), then runs `node server/main.ts
      // start`, which is what bin/svcd runs; the listen flags only move it off the default ports.
      const makefile = await readFile(join(root, "Makefile"), "utf8");
      expect(makefile).toMatch(/\nstart: deps console\n\tnode server\/main\.ts start\n/);
      expect(await readFile(join(root, "bin", "svcd"), "utf8")).toContain('"$root/server/main.ts" "$@"');
      const starts = all.filter((c) => c.file === "README.md" && c.text.startsWith("make start "));
      expect(starts.length).toBe(2); // "The two commands" and "A first session"
      for (const c of starts) ran.add(key(c.file, c.text));
      platform = spawnDaemon(
        [
          "start",
          "--auth-listen",
          `127.0.0.1:${ports.auth}`,
          "--proxy-listen",
          `127.0.0.1:${ports.proxy}`,
          "--diag-listen",
          `127.0.0.1:${ports.diag}`,
        ],
        { SVC_DATA_DIR: join(dir, "data"), SVC_ADMIN_PASSWORD_FILE: "" },
      );
      const p = platform;
      await waitFor(() => p.output().includes("svc is running") || p.child.exitCode !== null, "svcd start");
      expect(p.child.exitCode, p.output()).toBeNull();
      const token = /--reset-token (\S+)/.exec(p.output())?.[1] ?? "";
      expect(token, p.output()).not.toBe("");

      // The login as written, on a terminal: it asks the new password twice.
      const login = pick("README.md", "bin/svc login");
      let text = login.text;
      for (const [from, to] of [
        ["localhost:3080", `localhost:${ports.proxy}`],
        ["<token>", token],
      ] as const) {
        expect(text).toContain(from);
        text = text.replaceAll(from, to);
      }
      ran.add(key(login.file, login.text));
      const term = pty.spawn("bash", ["-c", text], {
        cwd: dir,
        env: env as Record<string, string>,
        cols: 120,
        rows: 30,
      });
      let screen = "";
      const typed = new Set<string>();
      const code = await new Promise<number>((resolve) => {
        term.onData((d) => {
          screen += d;
          for (const prompt of ["New password", "Repeat the new password"]) {
            if (screen.includes(prompt) && !typed.has(prompt)) {
              typed.add(prompt);
              term.write("doc-commands-password-1\r");
            }
          }
        });
        term.onExit((e) => resolve(e.exitCode));
      });
      expect(code, screen).toBe(0);
      expect(screen).toMatch(/as admin/);

      const add = await sh(pick("README.md", "bin/svcctl tokens add"));
      const agentLine = /^\s*(svcd agent .*)$/m.exec(add)?.[1] ?? "";
      // The proxy's public address from the login, not auth's (svcctl itself went to $SVC_AUTH_ADDR).
      expect(agentLine, add).toContain(`--proxy localhost:${ports.proxy}`);
      expect(agentLine, add).not.toContain("--auth");
      // The printed command, with this repository's svcd, a scratch data folder and a free port.
      const [cmd, ...args] = agentLine.replace("/var/lib/svc-agent", join(dir, "agent")).split(" ");
      expect(cmd).toBe("svcd");
      agent = spawnDaemon([...args, "--listen", `127.0.0.1:${ports.node}`], {});
      const a = agent;
      const ls = pick("README.md", "bin/svc ls");
      let listing = "";
      await waitFor(async () => {
        if (a.child.exitCode !== null) throw new Error(`agent exited: ${a.output()}`);
        listing = await sh(ls);
        return /\bonline\b/.test(listing);
      }, "the node online in svc ls");
      const node = /^(\S+)\s+online\b/m.exec(listing)?.[1] ?? "";
      expect(node, listing).not.toBe("");
      expect(listing).not.toContain("0.0.0.0");

      const ssh = pick("README.md", "bin/svc ssh root@<node> uptime");
      expect(await sh(ssh, [["<node>", node]])).toMatch(/load average/);
      // The comment's browser address answers (the page, or the sign-in it sends to).
      const ca = await readFile(join(dir, "data", "host-ca.pem"), "utf8");
      expect([200, 302, 303]).toContain(await httpsStatus(ports.proxy, ca, `/web/terminal?node=${node}`));
    },
    STEP,
  );

  it(
    "docs/agent.md: svcd agentless registers a plain sshd with a token from svcctl tokens add",
    async () => {
      const add = JSON.parse(
        await execFileP(join(root, "bin", "svcctl"), ["tokens", "add", "--labels", "env=prod", "--json"], {
          cwd: dir,
          env,
        }).then((r) => r.stdout),
      ) as { token: string; ca_pin: string };
      expect(add.ca_pin).toBe(caPin(await readFile(join(dir, "data", "host-ca.pem"), "utf8")));
      await mkdir(join(dir, "sshd"));
      await execFileP("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "sshd", "host")]);
      const out = await sh(pick("docs/agent.md", "svcd agentless"), [
        ["svcd agentless", "bin/svcd agentless"],
        ["svc.example:443", `127.0.0.1:${ports.proxy}`],
        ["sha256:<hex>", add.ca_pin],
        ["<name.secret>", add.token],
        ["/etc/ssh/ssh_host_ed25519_key.pub", join(dir, "sshd", "host.pub")],
        ["/etc/svc", join(dir, "agentless")],
      ]);
      expect(out).toContain(`HostCertificate ${join(dir, "agentless", "ssh_host_cert.pub")}`);
      for (const f of ["ssh_host_cert.pub", "user_ca.pub", "sshd_config.svc"])
        expect(existsSync(join(dir, "agentless", f)), f).toBe(true);
      const ls = await execFileP(join(root, "bin", "svc"), ["ls"], { cwd: dir, env });
      expect(ls.stdout).toMatch(/^db-1\s/m);
    },
    STEP,
  );

  it(
    "inline `svc`, `svcctl` and `svcd` commands in the prose name real subcommands and flags",
    async () => {
      const problems: string[] = [];
      const helps = new Map<string, Promise<string>>();
      // At most four --help processes at a time: dozens of Node starts at once on a loaded
      // 2-core machine ran past their timeout and read as "not a command".
      let running = 0;
      const waiting: Array<() => void> = [];
      const slot = async (): Promise<() => void> => {
        if (running >= 4) await new Promise<void>((r) => waiting.push(r));
        running++;
        return () => {
          running--;
          waiting.shift()?.();
        };
      };
      const help = (prog: string, words: string[]) => {
        const k = [prog, ...words].join(" ");
        if (!helps.has(k))
          helps.set(
            k,
            slot().then((release) =>
              execFileP(join(root, "bin", prog), [...words, "--help"], { env, timeout: 60_000 })
                .then(
                  (r) => r.stdout,
                  (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ""}${err.stderr ?? ""}`,
                )
                .finally(release),
            ),
          );
        return helps.get(k) ?? Promise.resolve("");
      };
      // Spans are checked concurrently (the help cache shares each command's --help run).
      const checks: Array<Promise<void>> = [];
      for (const f of files) {
        const md = await readFile(join(root, f), "utf8");
        for (const m of md.matchAll(/`(?:bin\/)?(svc|svcctl|svcd)\s([^`]+)`/g)) {
          checks.push(
            (async () => {
              const prog = m[1] ?? "";
              const rest = (m[2] ?? "").trim().split(/\s+/);
              const line = md.slice(0, m.index).split("\n").length;
              // Subcommand words come first, each one its parent's help lists; --help never runs a
              // command with arguments (`svc ssh node cmd --help` would dial the node).
              const words: string[] = [];
              let text = await help(prog, words);
              for (const w of rest) {
                const commands = text.split(/^Commands:$/m)[1];
                if (commands === undefined || !/^[a-z][a-z-]*$/.test(w)) break;
                if (!new RegExp(`^  ${w}[ |]`, "m").test(commands)) {
                  problems.push(`${f}:${line}: \`${prog} ${[...words, w].join(" ")}\` is not a command`);
                  break;
                }
                words.push(w);
                text = await help(prog, words);
              }
              for (const flag of (m[2] ?? "").match(/--[a-z][a-z-]*/g) ?? [])
                if (!new RegExp(`${flag}(?![a-z-])`).test(text))
                  problems.push(`${f}:${line}: \`${prog} ${words.join(" ")}\` has no ${flag}`);
            })(),
          );
        }
      }
      await Promise.all(checks);
      problems.sort();
      expect(problems).toEqual([]);
      expect(helps.size).toBeGreaterThan(10);
    },
    4 * STEP, // one --help per command, four at a time, under the load of a full suite run
  );

  it("every other command is listed with the test that runs it, and that test really does", async () => {
    const problems: string[] = [];
    const sources = new Map<string, string>();
    const source = async (f: string) => {
      if (!sources.has(f))
        sources.set(f, existsSync(join(root, f)) ? await readFile(join(root, f), "utf8") : "");
      return sources.get(f) ?? "";
    };
    const guides = new Map<string, string[]>();
    for (const c of all) {
      if (ran.has(key(c.file, c.text))) continue;
      const rows = ELSEWHERE.filter(
        (e) => e.file === c.file && (e.command === undefined || e.command === c.text),
      );
      if (rows.length === 0) {
        problems.push(`${c.file}:${c.line}: no test runs ${JSON.stringify(c.text)}`);
        continue;
      }
      for (const e of rows) {
        for (const by of e.by) {
          const src = await source(by);
          if (!src) problems.push(`${c.file}:${c.line}: ${by} (said to run it) does not exist`);
          else if (e.reads && !(src.includes(e.reads) && src.includes("docCommands")))
            problems.push(`${c.file}:${c.line}: ${by} does not read ${e.reads}`);
        }
        if (e.sameAs) {
          if (!guides.has(e.sameAs))
            guides.set(
              e.sameAs,
              docCommands(await readFile(join(root, e.sameAs), "utf8")).map((g) => g.text),
            );
          if (!guides.get(e.sameAs)?.includes(c.text))
            problems.push(`${c.file}:${c.line}: ${JSON.stringify(c.text)} is not in ${e.sameAs} any more`);
        }
        const texts = await Promise.all(e.by.map(source));
        for (const ev of e.evidence ?? [])
          if (!texts.some((t) => t.includes(ev)))
            problems.push(`${c.file}:${c.line}: none of ${e.by.join(", ")} contains ${JSON.stringify(ev)}`);
      }
    }
    // A row whose command left the docs is stale.
    for (const e of ELSEWHERE)
      if (e.command !== undefined && !all.some((c) => c.file === e.file && c.text === e.command))
        problems.push(`ELSEWHERE lists ${JSON.stringify(e.command)} but ${e.file} no longer has it`);
    expect(problems).toEqual([]);
    expect(all.length).toBeGreaterThan(40);
  });
});
