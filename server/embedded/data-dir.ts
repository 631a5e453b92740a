// The embedded default's data folder: config, CA keys, SQLite state and the manifests folder.
// A first start creates it; later starts only read it. Nothing is written until the inputs
// (config file, admin password file) have been checked, so a bad input leaves no trace.
import { access, mkdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { stringify } from "yaml";
import { BadParameterError } from "../../core/errors.ts";
import { presets } from "../../core/resources/index.ts";
import { type Config, configToYaml, defaultConfig, loadConfigFile } from "../config.ts";

export const CONFIG_FILE = "svc.yaml";
export const FIRST_ADMIN = "admin";

export interface DataDir {
  root: string;
  configPath: string;
  config: Config;
  /** Absolute paths derived from the config (relative entries resolve against root). */
  paths: { ca: string; manifests: string; sqlite: string | undefined };
  firstStart: boolean;
  /**
   * Only on the first start: the first admin, with the password from SVC_ADMIN_PASSWORD_FILE, or
   * none (the start then issues a one-time reset token: there is never a default password).
   */
  firstAdmin?: { name: string; password?: string };
}

export function resolveDataRoot(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  return resolve(cwd, env.SVC_DATA_DIR && env.SVC_DATA_DIR.length > 0 ? env.SVC_DATA_DIR : "data");
}

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

function paths(root: string, config: Config): DataDir["paths"] {
  const abs = (p: string): string => (isAbsolute(p) ? p : join(root, p));
  return {
    ca: config.ca_store.type === "files" ? abs(config.ca_store.path) : "",
    manifests: config.source.type === "folder" ? abs(config.source.path) : "",
    sqlite: config.backend.type === "sqlite" ? abs(config.backend.path) : undefined,
  };
}

/**
 * Opens the data folder, creating it on the first start. `configPath` overrides the config
 * location; `adminPasswordFile` (SVC_ADMIN_PASSWORD_FILE) is read on the first start only.
 */
export async function openDataDir(opts: {
  root: string;
  configPath?: string;
  adminPasswordFile?: string;
}): Promise<DataDir> {
  const root = opts.root;
  const configPath = opts.configPath ?? join(root, CONFIG_FILE);
  if (await exists(configPath)) {
    const config = await loadConfigFile(configPath);
    return { root, configPath, config, paths: paths(root, config), firstStart: false };
  }
  if (opts.configPath) throw new BadParameterError(`config file ${opts.configPath} does not exist`);

  // First start: read every input before writing anything. An interrupted first start left no
  // config file, so it is simply done again.
  let password: string | undefined;
  if (opts.adminPasswordFile) {
    try {
      password = (await readFile(opts.adminPasswordFile, "utf8")).replace(/\r?\n$/, "");
    } catch (err) {
      throw new BadParameterError(
        `SVC_ADMIN_PASSWORD_FILE: cannot read ${opts.adminPasswordFile}: ${(err as Error).message}`,
      );
    }
    if (password.length < 12)
      throw new BadParameterError("SVC_ADMIN_PASSWORD_FILE: the password must have at least 12 characters");
  }
  const clusterName = sanitizeClusterName(hostname());
  const config = defaultConfig({ clusterName, publicHost: "localhost" });
  const p = paths(root, config);

  await mkdir(root, { recursive: true, mode: 0o700 });
  await mkdir(p.manifests, { recursive: true, mode: 0o700 });
  await mkdir(join(p.manifests, "managed"), { recursive: true, mode: 0o700 });
  await writeFile(
    join(p.manifests, "presets.yaml"),
    `# Preset roles shipped with the platform. Edit freely: this folder is the source of truth.\n${presets()
      .map((r) => stringify(r))
      .join("---\n")}`,
    { mode: 0o600 },
  );
  await writeFile(
    join(p.manifests, "managed", `user-${FIRST_ADMIN}.yaml`),
    stringify({
      apiVersion: "svc.dev/v1",
      kind: "User",
      metadata: { name: FIRST_ADMIN },
      spec: { roles: ["admin"], traits: { logins: ["root"] } },
    }),
    { mode: 0o600 },
  );
  // The config is written last: its presence is what marks the first start as done.
  await writeFile(configPath, configToYaml(config), { mode: 0o600, flag: "wx" });
  return {
    root,
    configPath,
    config,
    paths: p,
    firstStart: true,
    firstAdmin: password === undefined ? { name: FIRST_ADMIN } : { name: FIRST_ADMIN, password },
  };
}

function sanitizeClusterName(host: string): string {
  const s = host
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 63);
  return s.length > 0 ? s : "svc-cluster";
}
