// Shared by the chart tests: helm (the pinned build) against charts/svc, rendered objects as JS.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { V1ObjectMeta, V1PodSpec } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { toolPath } from "./harness/tools.ts";

const run = promisify(execFile);
export const root = join(import.meta.dirname, "..");
export const chart = join(root, "charts", "svc");
/** Values files under charts/svc/ci: the defaults plus the required Secret, evaluation, every option. */
export const ci = (name: "default" | "evaluation" | "all-options") =>
  join(chart, "ci", `${name}-values.yaml`);

/**
 * A rendered object. `spec` is left unknown: tests narrow it with the client-node model of the
 * kind (`as V1Deployment["spec"]`), whose field names are the manifest's.
 */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: unknown;
  data?: Record<string, string>;
}

/** The first rendered object of a kind and name; throws when absent. */
export function find<T = K8sObject>(objects: K8sObject[], kind: string, name: string): K8sObject & T {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind}/${name} rendered`);
  return o as K8sObject & T;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs helm; never throws on a non-zero exit. */
export async function helm(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await run(toolPath("helm"), args, { maxBuffer: 64 * 1024 * 1024, env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

export function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** `helm template svc charts/svc -n <ns> <args>`; throws with helm's message on failure. */
export async function render(args: string[], namespace = "svc-system"): Promise<K8sObject[]> {
  const r = await helm(["template", "svc", chart, "--namespace", namespace, ...args]);
  if (r.code !== 0) throw new Error(r.stderr);
  return parseObjects(r.stdout);
}

/** Every Pod spec the objects would run: Deployment templates and bare Pods (the test hook). */
export function podSpecs(
  objects: K8sObject[],
): Array<{ owner: string; metadata: V1ObjectMeta; spec: V1PodSpec }> {
  return objects.flatMap((o) => {
    if (o.kind === "Deployment") {
      const t = (o.spec as { template: { metadata: V1ObjectMeta; spec: V1PodSpec } }).template;
      return [{ owner: `Deployment/${o.metadata.name}`, metadata: t.metadata, spec: t.spec }];
    }
    if (o.kind === "Pod")
      return [{ owner: `Pod/${o.metadata.name}`, metadata: o.metadata, spec: o.spec as V1PodSpec }];
    return [];
  });
}

/** One command of docs/install-kubernetes.md: continuation lines joined, heredocs kept whole. */
export interface DocCommand {
  /** The `## ` heading it is under, e.g. "3. Install". */
  section: string;
  text: string;
}

/** Every command in the ```sh blocks of a Markdown file, in order. */
export function docCommands(markdown: string): DocCommand[] {
  const out: DocCommand[] = [];
  let section = "";
  let fence: string | undefined; // the fence's indentation while inside a block
  let current: string[] = [];
  let heredoc: string | undefined;
  for (const line of markdown.split("\n")) {
    if (fence === undefined) {
      if (line.startsWith("## ")) section = line.slice(3).trim();
      const open = /^(\s*)```sh\s*$/.exec(line);
      if (open) fence = open[1] ?? "";
      continue;
    }
    if (/^\s*```\s*$/.test(line)) {
      fence = undefined;
      continue;
    }
    // A block inside a list item is indented like its fence; the commands are not.
    const text = line.startsWith(fence) ? line.slice(fence.length) : line;
    current.push(text);
    if (heredoc) {
      if (text.trim() === heredoc) heredoc = undefined;
    } else {
      const m = /<<'?(\w+)'?\s*$/.exec(text);
      if (m?.[1]) heredoc = m[1];
    }
    if (!heredoc && !text.endsWith("\\")) {
      const joined = current.join("\n").trim();
      if (joined) out.push({ section, text: joined });
      current = [];
    }
  }
  return out;
}
