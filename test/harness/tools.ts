// Finds the Go-built test tools that scripts/tools/*.sh put into a cache outside the repository.
// Versions come from scripts/tools/versions.env, so the lookup and the build never disagree.
import { accessSync, constants, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export type ToolName = "kube-apiserver" | "etcd" | "grpcurl" | "helm" | "go-httpbin";

const versionsFile = join(import.meta.dirname, "..", "..", "scripts", "tools", "versions.env");

/** The pinned versions (K8S_VERSION, ETCD_VERSION, GRPCURL_VERSION, HELM_VERSION). */
export function toolVersions(): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(versionsFile, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(\S+)\s*$/.exec(line.trim());
    if (m?.[1] && m[2]) out[m[1]] = m[2];
  }
  return out;
}

/** Root of the tool cache, computed like the scripts do. */
export function toolCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env["SVC_CACHE_DIR"]) return env["SVC_CACHE_DIR"];
  const xdg = env["XDG_CACHE_HOME"] || join(env["HOME"] || homedir(), ".cache");
  return join(xdg, "svc-platform");
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function required(versions: Readonly<Record<string, string>>, key: string): string {
  const v = versions[key];
  if (!v) throw new Error(`${key} is missing from scripts/tools/versions.env`);
  return v;
}

/** Where the cache keeps `name` for the pinned version (it may not exist yet). */
export function cachedToolPath(name: ToolName, env: NodeJS.ProcessEnv = process.env): string {
  const versions = toolVersions();
  const cache = toolCacheDir(env);
  switch (name) {
    case "kube-apiserver":
    case "etcd":
      return join(cache, `k8s-${required(versions, "K8S_VERSION")}`, "bin", name);
    case "grpcurl":
      return join(cache, `grpcurl-${required(versions, "GRPCURL_VERSION")}`, "bin", name);
    case "helm":
      return join(cache, `helm-${required(versions, "HELM_VERSION")}`, "bin", name);
    case "go-httpbin":
      return join(cache, `go-httpbin-${required(versions, "GO_HTTPBIN_VERSION")}`, "bin", name);
  }
}

/**
 * Absolute path of an executable test tool. kube-apiserver and etcd come from KUBEBUILDER_ASSETS
 * when it holds them (the envtest convention), else from the cache. Throws, saying how to fix it,
 * when the tool is not there.
 */
export function toolPath(name: ToolName, env: NodeJS.ProcessEnv = process.env): string {
  const assets = env["KUBEBUILDER_ASSETS"];
  if (assets && (name === "kube-apiserver" || name === "etcd")) {
    const fromAssets = join(assets, name);
    if (isExecutable(fromAssets)) return fromAssets;
  }
  const cached = cachedToolPath(name, env);
  if (isExecutable(cached)) return cached;
  const where = assets && (name === "kube-apiserver" || name === "etcd") ? ` or in KUBEBUILDER_ASSETS` : "";
  throw new Error(
    `${name} not found at ${cached}${where}: run \`make provision\` (builds the pinned Go tools once, ` +
      `into the cache) or set KUBEBUILDER_ASSETS to a folder holding kube-apiserver and etcd`,
  );
}
