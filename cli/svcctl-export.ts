// `svcctl export --type app-jwt|user-ca|host-ca`: public CA material, OFFLINE. Reads the CA store
// directly (the embedded data folder's ca/, or the CA Secrets in Kubernetes) without creating
// anything: a store without the CA is an error, never a fresh CA. The app-jwt output is the JWKS
// that the proxy serves at /workload-identity/app-jwt-jwks.json (same keys, same fields).
// `--type krl` is the exception: the revocation list lives in auth (locks, issued certificates),
// so it is asked for with the admin's session (ExportKrl) and written as-is (binary).
import { access } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { writeFileAtomic } from "../core/atomic-file.ts";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { type CaKeyStore, FileCaKeyStore } from "../core/ca/key-store.ts";
import { FileRotationStateStore, type RotationStateStore } from "../core/ca/rotation-store.ts";
import { knownHostsCertAuthority } from "../core/certs/key-ids.ts";
import { systemClock } from "../core/clock.ts";
import { NotFoundError } from "../core/errors.ts";
import { loadConfigFile } from "../server/config.ts";
import { type AdminConnectionOptions, withAdmin } from "./auth-grpc.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { printJson } from "./output.ts";

export const EXPORT_TYPES = ["app-jwt", "user-ca", "host-ca", "krl"] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];

/** A store that can only read: loading must never mint a CA on an admin's laptop. */
class ReadOnlyCaStore implements CaKeyStore {
  readonly #inner: CaKeyStore;
  readonly #where: string;
  constructor(inner: CaKeyStore, where: string) {
    this.#inner = inner;
    this.#where = where;
  }
  get(name: string): Promise<Uint8Array | undefined> {
    return this.#inner.get(name);
  }
  async createOnce(name: string): Promise<"created" | "exists"> {
    throw new NotFoundError(`no CA "${name}" in ${this.#where}: has the platform been started with it?`);
  }
}

export interface ExportOptions extends AdminConnectionOptions {
  type?: string;
  /** krl: write the file here (atomically, mode 0644) instead of stdout */
  out?: string;
  dataDir?: string;
  kubeconfig?: string;
  namespace?: string;
  secretPrefix?: string;
  /** Names the keys in comments ("<cluster>_user_CA"); read from svc.yaml in embedded mode. */
  clusterName?: string;
  json?: boolean;
}

async function fileStore(
  dataDir: string | undefined,
): Promise<{ store: CaKeyStore; rotation: RotationStateStore; where: string; cluster?: string }> {
  const root = resolve(dataDir ?? (process.env.SVC_DATA_DIR || "data"));
  const configPath = join(root, "svc.yaml");
  let caDir = join(root, "ca");
  let cluster: string | undefined;
  const hasConfig = await access(configPath).then(
    () => true,
    () => false,
  );
  if (hasConfig) {
    const config = await loadConfigFile(configPath);
    cluster = config.cluster_name;
    if (config.ca_store.type !== "files") {
      throw new CliError(
        `${configPath} keeps its CAs in ${config.ca_store.type}: use --kubeconfig/--namespace`,
        EXIT.usage,
      );
    }
    caDir = isAbsolute(config.ca_store.path) ? config.ca_store.path : join(root, config.ca_store.path);
  }
  const exists = await access(caDir).then(
    () => true,
    () => false,
  );
  if (!exists) throw new NotFoundError(`no CA folder at ${caDir} (pass --data-dir, or set $SVC_DATA_DIR)`);
  return {
    store: new FileCaKeyStore(caDir),
    rotation: new FileRotationStateStore(caDir),
    where: caDir,
    ...(cluster ? { cluster } : {}),
  };
}

async function secretStore(
  o: ExportOptions,
): Promise<{ store: CaKeyStore; rotation: RotationStateStore; where: string }> {
  if (!o.namespace)
    throw new CliError("--kubeconfig needs --namespace (where auth's CA Secrets live)", EXIT.usage);
  // Loaded only here: the Kubernetes client is large and the file case does not need it.
  const [{ KubeConfig }, { SecretCaKeyStore }, { SecretRotationStateStore }] = await Promise.all([
    import("@kubernetes/client-node"),
    import("../core/ca/secret-store.ts"),
    import("../core/ca/rotation-secret-store.ts"),
  ]);
  const kc = new KubeConfig();
  kc.loadFromFile(o.kubeconfig ?? "");
  return {
    store: new SecretCaKeyStore({
      kubeConfig: kc,
      namespace: o.namespace,
      ...(o.secretPrefix ? { prefix: o.secretPrefix } : {}),
    }),
    rotation: new SecretRotationStateStore({
      kubeConfig: kc,
      namespace: o.namespace,
      ...(o.secretPrefix ? { prefix: o.secretPrefix } : {}),
    }),
    where: `Secrets in namespace ${o.namespace}`,
  };
}

/**
 * The KRL auth builds from the locks in force (docs/locks.md "Agentless nodes (KRL)"). With --out
 * the file is replaced atomically, so an sshd reading it through RevokedKeys never sees half of it.
 */
async function exportKrl(o: ExportOptions): Promise<void> {
  const res = await withAdmin(o, (c) => c.call("ExportKrl", {}));
  const krl = Buffer.from(res.krl);
  if (o.out) {
    await writeFileAtomic(o.out, krl, 0o644);
    if (o.json) printJson({ type: "krl", out: o.out, bytes: krl.length, digest: res.digest });
    return;
  }
  if (o.json) throw new CliError("--type krl --json needs --out (the KRL itself is binary)", EXIT.usage);
  if (process.stdout.isTTY)
    throw new CliError("the KRL is binary: redirect stdout to a file, or pass --out <file>", EXIT.usage);
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(krl, (err) => (err ? reject(err) : resolve())),
  );
}

export async function exportCa(o: ExportOptions): Promise<void> {
  const type = o.type as ExportType;
  if (!EXPORT_TYPES.includes(type)) {
    throw new CliError(`--type must be one of ${EXPORT_TYPES.join(", ")}`, EXIT.usage);
  }
  if (type === "krl") return exportKrl(o);
  if (o.out) throw new CliError("--out is for --type krl", EXIT.usage);
  const { store, rotation, where, cluster } = o.kubeconfig
    ? { ...(await secretStore(o)), cluster: undefined }
    : await fileStore(o.dataDir);
  // Names are only used when a CA is created, which the read-only store refuses.
  const name = o.clusterName ?? cluster ?? "svc";
  const cas = await CertificateAuthorities.loadOrCreate(new ReadOnlyCaStore(store, where), {
    clusterName: name,
    trustDomain: name,
    clock: systemClock,
    // Only read: every key a CA rotation trusts now is exported (docs/ca-rotation.md).
    rotationStore: rotation,
  });
  if (type === "app-jwt") {
    process.stdout.write(`${JSON.stringify(cas.appJwks())}\n`);
    return;
  }
  const key = type === "user-ca" ? cas.sshUserCaPublicKey.trim() : cas.sshHostCaPublicKey.trim();
  // Every trusted key, the signing one first: two during a rotation.
  const keys = (type === "user-ca" ? cas.trustedUserCaKeys() : cas.trustedHostCaKeys()).map((k) => k.trim());
  const lines = type === "user-ca" ? keys : keys.map((k) => knownHostsCertAuthority("*", k));
  if (o.json) {
    printJson({
      type,
      public_key: key,
      public_keys: keys,
      ...(type === "host-ca"
        ? { known_hosts: lines.join("\n"), tls_ca_pem: cas.trustedHostCaPems().join("") }
        : { trusted_user_ca_keys: lines.join("\n") }),
    });
    return;
  }
  // user-ca: lines for sshd's TrustedUserCAKeys; host-ca: known_hosts @cert-authority lines.
  process.stdout.write(`${lines.join("\n")}\n`);
}
