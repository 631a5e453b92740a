// The daemon configuration file (YAML). One schema gives the type, the defaults and the errors; a
// bad file names the field and the process exits non-zero before it writes anything.
import { readFile } from "node:fs/promises";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { parse, stringify } from "yaml";
import { BadParameterError } from "../core/errors.ts";

const HostPort = Type.String({ pattern: "^[^\\s]+:[0-9]{1,5}$", description: "host:port" });

export const ConfigSchema = Type.Object(
  {
    version: Type.Literal(1, { default: 1 }),
    cluster_name: Type.String({ minLength: 1, maxLength: 63, pattern: "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$" }),
    data_dir: Type.Optional(Type.String({ minLength: 1 })),
    auth: Type.Object(
      {
        listen_addr: HostPort,
        /** Where the proxy, agents and CLIs reach auth. */
        advertise_addr: Type.Optional(HostPort),
        diagnostics_addr: Type.Optional(HostPort),
        session_ttl: Type.String({ default: "12h" }),
        lockout: Type.Object(
          {
            max_failures: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
            duration: Type.String({ default: "15m" }),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false },
    ),
    proxy: Type.Object(
      {
        listen_addr: HostPort,
        /** host:port users type in browsers and CLIs; the WebAuthn RP id and origin come from it. */
        public_addr: HostPort,
        oidc_issuer_url: Type.String({ pattern: "^https://" }),
        diagnostics_addr: Type.Optional(HostPort),
      },
      { additionalProperties: false },
    ),
    client_tools: Type.Object(
      {
        /** Clients below this version are told they are unsupported. */
        min_version: Type.String({ pattern: "^[0-9]+\\.[0-9]+\\.[0-9]+$" }),
        /** Clients below this version are told to upgrade. */
        recommended_version: Type.String({ pattern: "^[0-9]+\\.[0-9]+\\.[0-9]+$" }),
      },
      { additionalProperties: false },
    ),
    backend: Type.Union([
      Type.Object(
        { type: Type.Literal("sqlite"), path: Type.String({ minLength: 1 }) },
        { additionalProperties: false },
      ),
      Type.Object(
        { type: Type.Literal("postgres"), url: Type.String({ pattern: "^postgres(ql)?://" }) },
        { additionalProperties: false },
      ),
    ]),
    source: Type.Union([
      Type.Object(
        { type: Type.Literal("folder"), path: Type.String({ minLength: 1 }) },
        { additionalProperties: false },
      ),
      Type.Object(
        {
          type: Type.Literal("kubernetes"),
          namespace: Type.String({ minLength: 1 }),
          kubeconfig: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
    ]),
    ca_store: Type.Union([
      Type.Object(
        { type: Type.Literal("files"), path: Type.String({ minLength: 1 }) },
        { additionalProperties: false },
      ),
      Type.Object(
        { type: Type.Literal("kubernetes"), namespace: Type.String({ minLength: 1 }) },
        { additionalProperties: false },
      ),
    ]),
    log_level: Type.Union(
      ["fatal", "error", "warn", "info", "debug", "trace"].map((l) => Type.Literal(l)),
      { default: "info" },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;

/** Validates a parsed config object; the error names the first failing field. */
export function checkConfig(raw: unknown, origin = "config"): Config {
  const withDefaults = Value.Default(ConfigSchema, structuredClone(raw ?? {}));
  const first = Value.Errors(ConfigSchema, withDefaults).First();
  if (first) {
    const field = first.path === "" ? "(top level)" : first.path.slice(1).replaceAll("/", ".");
    throw new BadParameterError(`${origin}: field ${field}: ${first.message}`);
  }
  return withDefaults as Config;
}

export async function loadConfigFile(path: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new BadParameterError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new BadParameterError(`${path}: not valid YAML: ${(err as Error).message}`);
  }
  return checkConfig(raw, path);
}

/** The configuration a first start writes: everything on this machine, sensible and explicit. */
export function defaultConfig(opts: { clusterName: string; publicHost: string }): Config {
  return checkConfig({
    version: 1,
    cluster_name: opts.clusterName,
    auth: { listen_addr: "127.0.0.1:3025", diagnostics_addr: "127.0.0.1:3026" },
    proxy: {
      listen_addr: "0.0.0.0:3080",
      public_addr: `${opts.publicHost}:3080`,
      oidc_issuer_url: `https://${opts.publicHost}:3080`,
      diagnostics_addr: "127.0.0.1:3081",
    },
    client_tools: { min_version: "0.1.0", recommended_version: "0.1.0" },
    backend: { type: "sqlite", path: "state.db" },
    source: { type: "folder", path: "manifests" },
    ca_store: { type: "files", path: "ca" },
  });
}

export function configToYaml(config: Config): string {
  return `# svc platform configuration. Relative paths are relative to the data folder.\n${stringify(config)}`;
}

export function splitHostPort(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(":");
  const host = addr.slice(0, i).replace(/^\[|\]$/g, "");
  return { host, port: Number(addr.slice(i + 1)) };
}
