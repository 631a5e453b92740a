// The daemon configuration file (YAML). One schema gives the type, the defaults and the errors; a
// bad file names the field and the process exits non-zero before it writes anything.
import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { parse, stringify } from "yaml";
import { DURATION_PATTERN, parseDuration } from "../core/duration.ts";
import { BadParameterError } from "../core/errors.ts";

const HostPort = Type.String({ pattern: "^[^\\s]+:[0-9]{1,5}$", description: "host:port" });

export const ConfigSchema = Type.Object(
  {
    version: Type.Literal(1, { default: 1 }),
    cluster_name: Type.String({ minLength: 1, maxLength: 63, pattern: "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$" }),
    /**
     * SPIFFE trust domain auth issues and checks workload identities in (default: cluster_name).
     * In Kubernetes the chart's trustDomain sets it and the operator's --trust-domain alike.
     */
    trust_domain: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: "^[a-z0-9._-]+$" })),
    data_dir: Type.Optional(Type.String({ minLength: 1 })),
    auth: Type.Object(
      {
        listen_addr: HostPort,
        /** Where the proxy, agents and CLIs reach auth. */
        advertise_addr: Type.Optional(HostPort),
        diagnostics_addr: Type.Optional(HostPort),
        /** Extra names (DNS or IP) on auth's TLS certificate, besides the advertise and listen hosts. */
        tls_names: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 32 })),
        /**
         * `svcd auth` in Kubernetes: auth issues the proxy's TLS identity (server + client
         * certificate) into this Secret and renews it (docs/kubernetes-mode.md).
         */
        proxy_identity: Type.Optional(
          Type.Object(
            {
              secret_name: Type.String({ minLength: 1, maxLength: 253 }),
              /** Names on the proxy's server certificate besides the host of proxy.public_addr. */
              dns_names: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
                maxItems: 32,
                default: [],
              }),
              /** Lifetime of both certificates; re-issued when less than half remains. */
              ttl: Type.String({ default: "24h" }),
            },
            { additionalProperties: false },
          ),
        ),
        /**
         * Kubernetes mode: while the User `user` has no password and no WebAuthn device, auth keeps
         * one one-time reset link for it in the Secret `secret_name` (docs/kubernetes-mode.md).
         */
        first_admin: Type.Optional(
          Type.Object(
            {
              user: Type.String({
                minLength: 1,
                maxLength: 64,
                pattern: "^[a-z0-9]([a-z0-9.-]{0,62}[a-z0-9])?$",
              }),
              secret_name: Type.String({ minLength: 1, maxLength: 253 }),
            },
            { additionalProperties: false },
          ),
        ),
        /**
         * Lifetime of a joined agent's host SSH and TLS client certificates; agents renew at about
         * 2/3 of it (RenewNodeCredentials, docs/agent.md "Renewal"). 5m..90d.
         */
        node_cert_ttl: Type.String({ pattern: DURATION_PATTERN, default: "24h" }),
        /**
         * How long an automatic CA rotation holds each phase when `svcctl ca rotate --auto` names
         * no --grace (docs/ca-rotation.md); 1m..30d.
         */
        ca_rotation_grace: Type.String({ pattern: DURATION_PATTERN, default: "1h" }),
        /**
         * The longest auth waits between two WatchTrust snapshots when nothing changes, so nodes
         * and proxies can tell a quiet stream from a dead one (docs/locks.md); 1s..5m, default 15s.
         */
        lock_keepalive: Type.Optional(Type.String({ pattern: DURATION_PATTERN })),
        /** Web session lifetime (and its cookies'); 5m..30d. */
        session_ttl: Type.String({ pattern: DURATION_PATTERN, default: "12h" }),
        lockout: Type.Object(
          {
            max_failures: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
            duration: Type.String({ pattern: DURATION_PATTERN, default: "15m" }),
          },
          { additionalProperties: false, default: {} },
        ),
        /**
         * Password logins (AuthenticateLocal). false: only single sign-on, except for the user of
         * auth.first_admin (its reset link, and a way in when the identity provider fails); the
         * sign-in page and `svc login` then offer the connectors.
         */
        local_login: Type.Boolean({ default: true }),
        /** The Connector `svc login` uses without --auth when local_login is false. */
        default_connector: Type.Optional(
          Type.String({ minLength: 1, maxLength: 253, pattern: "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$" }),
        ),
        /** Single sign-on: extra trust anchors (PEM file) for reaching identity providers. */
        sso: Type.Optional(
          Type.Object(
            { ca_file: Type.Optional(Type.String({ minLength: 1 })) },
            { additionalProperties: false },
          ),
        ),
        /** Node join by cloud identity: the STS endpoints auth may forward proofs to (host or host:port). */
        iam: Type.Optional(
          Type.Object(
            { sts_endpoints: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })) },
            { additionalProperties: false },
          ),
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
        /**
         * `svcd proxy`: where auth's gRPC listens (the embedded start dials its own auth). Several
         * replicas: "ip:port,ip:port" (IP literals), or one DNS name resolving to all of them;
         * calls are spread round-robin and move off a replica that restarts (docs/auth.md
         * "High availability").
         */
        auth_addr: Type.Optional(HostPort),
        /** TLS name expected on auth's certificate (default: the host of auth_addr). */
        auth_server_name: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
        /** `svcd proxy`: folder holding the identity auth issued (the mounted Secret). */
        identity_dir: Type.Optional(Type.String({ minLength: 1 })),
        /**
         * host:port other proxy replicas dial to relay into the reverse tunnels this replica holds
         * (ALPN svc-peer on the public port, docs/tunnels.md "Several proxies"). Default: the
         * listen address (its host when it is not 0.0.0.0/::, else this machine's name). In the
         * chart: the Pod IP, from the downward API.
         */
        peer_addr: Type.Optional(HostPort),
        /**
         * `svcd proxy` with a Kubernetes source: the Secret identity_dir is mounted from. Until the
         * kubelet mounts it (it refreshes Secret volumes only every minute or so), the proxy reads
         * it through the API, so a fresh install serves as soon as auth has written it.
         */
        identity_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
        /**
         * Load balancers / ingress controllers (IP addresses or CIDRs) whose X-Forwarded-For the
         * proxy believes for the client address (rate limits, audit). Empty: the socket's peer.
         */
        trusted_proxies: Type.Optional(
          Type.Array(Type.String({ minLength: 2, maxLength: 64 }), { maxItems: 64 }),
        ),
        /**
         * `svcd proxy`: a browser-trusted certificate (PEM chain) and key for the public names,
         * e.g. a mounted cert-manager Secret. Served to clients whose SNI is one of its names;
         * the identity from identity_dir serves all others. Reloaded when the files change.
         */
        public_tls: Type.Optional(
          Type.Object(
            { cert_file: Type.String({ minLength: 1 }), key_file: Type.String({ minLength: 1 }) },
            { additionalProperties: false },
          ),
        ),
        /** Limits that protect the platform, per proxy replica (docs/web-api.md "Limits"). */
        limits: Type.Object(
          {
            /** Browser terminals one user may have open on this proxy at once. */
            terminals_per_user: Type.Integer({ minimum: 1, maximum: 100_000, default: 32 }),
            /** Browser terminals this proxy holds open at once, all users together. */
            terminals_per_proxy: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000 }),
            /** Largest WebSocket message a browser terminal may send (closed with 1009 above). */
            ws_message_bytes: Type.Integer({
              minimum: 1024,
              maximum: 64 * 1024 * 1024,
              default: 1024 * 1024,
            }),
            /** Requests per session: token bucket refilled at this rate... */
            session_requests_per_second: Type.Number({
              exclusiveMinimum: 0,
              maximum: 1_000_000,
              default: 20,
            }),
            /** ...holding at most this many (a burst). */
            session_request_burst: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 100 }),
          },
          { additionalProperties: false, default: {} },
        ),
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
      // Exactly one of url, url_file (a mounted Secret) or url_env: see postgresUrl().
      Type.Object(
        {
          type: Type.Literal("postgres"),
          url: Type.Optional(Type.String({ pattern: "^postgres(ql)?://" })),
          url_file: Type.Optional(Type.String({ minLength: 1 })),
          url_env: Type.Optional(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" })),
          /** Schema holding the tables (default "svc"). */
          schema: Type.Optional(Type.String({ pattern: "^[a-z_][a-z0-9_]{0,62}$" })),
        },
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
          /**
           * The preset Roles (admin, access) exist even without their custom resources; a Role of
           * the same name replaces one. Must match the operator's --preset-roles (default true).
           */
          preset_roles: Type.Boolean({ default: true }),
          /** /readyz fails once a kind has not been known current this long (apiserver unreachable). */
          stale_after: Type.String({ pattern: DURATION_PATTERN, default: "60s" }),
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
        {
          type: Type.Literal("kubernetes"),
          namespace: Type.String({ minLength: 1 }),
          /** Prefix of the CA Secret names (the operator's --ca-secret-prefix; default "svc-ca-"). */
          secret_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        },
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
  const config = withDefaults as Config;
  for (const entry of config.proxy.trusted_proxies ?? []) {
    const [addr = "", bits, extra] = entry.split("/");
    const family = isIP(addr);
    const max = family === 6 ? 128 : 32;
    if (
      family === 0 ||
      extra !== undefined ||
      (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= max))
    ) {
      throw new BadParameterError(
        `${origin}: field proxy.trusted_proxies: ${JSON.stringify(entry)} is not an IP address or CIDR`,
      );
    }
  }
  const ttl = parseDuration(config.auth.session_ttl);
  if (ttl < 5 * 60_000 || ttl > 30 * 86_400_000) {
    throw new BadParameterError(`${origin}: field auth.session_ttl: must be between 5m and 30d`);
  }
  const nodeTtl = parseDuration(config.auth.node_cert_ttl);
  if (nodeTtl < 5 * 60_000 || nodeTtl > 90 * 86_400_000) {
    throw new BadParameterError(`${origin}: field auth.node_cert_ttl: must be between 5m and 90d`);
  }
  if (config.auth.lock_keepalive !== undefined) {
    const keepalive = parseDuration(config.auth.lock_keepalive);
    if (keepalive < 1000 || keepalive > 5 * 60_000)
      throw new BadParameterError(`${origin}: field auth.lock_keepalive: must be between 1s and 5m`);
  }
  const grace = parseDuration(config.auth.ca_rotation_grace);
  if (grace < 60_000 || grace > 30 * 86_400_000) {
    throw new BadParameterError(`${origin}: field auth.ca_rotation_grace: must be between 1m and 30d`);
  }
  if (config.backend.type === "postgres") {
    const { url, url_file, url_env } = config.backend;
    const given = [url, url_file, url_env].filter((v) => v !== undefined).length;
    if (given !== 1) {
      throw new BadParameterError(`${origin}: field backend: give exactly one of url, url_file, url_env`);
    }
  }
  return config;
}

/**
 * The PostgreSQL URL of a postgres backend: inline, from a file (a mounted Secret; surrounding
 * whitespace dropped) or from an environment variable. The URL itself never enters an error.
 */
export async function postgresUrl(
  backend: { url?: string; url_file?: string; url_env?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  let url: string | undefined = backend.url;
  let from = "backend.url";
  if (backend.url_file !== undefined) {
    from = `backend.url_file ${backend.url_file}`;
    try {
      url = (await readFile(backend.url_file, "utf8")).trim();
    } catch (err) {
      throw new BadParameterError(`cannot read ${from}: ${(err as NodeJS.ErrnoException).code ?? "error"}`);
    }
  } else if (backend.url_env !== undefined) {
    from = `backend.url_env $${backend.url_env}`;
    url = env[backend.url_env]?.trim();
  }
  if (!url || !/^postgres(ql)?:\/\//.test(url)) {
    throw new BadParameterError(`${from}: not a postgres:// URL`);
  }
  return url;
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
