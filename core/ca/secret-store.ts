// CaKeyStore backed by Kubernetes Secrets (Kubernetes mode). One Secret per CA, named
// `<prefix><name>`, type `svc.dev/ca`, labelled as ours, and `immutable: true`, so even a client
// that tries cannot overwrite a CA: creation is the only write, and a 409 means "exists".
// Errors carry the apiserver's Status message only; the key material never reaches an error or log.
import { CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import { PreconditionFailedError } from "../errors.ts";
import { kubeError, kubeStatusCode, PART_OF_LABEL, PART_OF_VALUE } from "../sources/kube-api.ts";
import { type CaKeyStore, checkCaName } from "./key-store.ts";

export const CA_SECRET_TYPE = "svc.dev/ca";
/** The data key holding the CA document (the same bytes the file store keeps in <name>.json). */
export const CA_SECRET_KEY = "ca.json";
/** Label naming which CA a Secret holds. */
export const CA_NAME_LABEL = "svc.dev/ca";
export const DEFAULT_CA_SECRET_PREFIX = "svc-ca-";

export interface SecretCaKeyStoreOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** Secret name prefix (default "svc-ca-"): CA "ssh-user" lives in Secret "svc-ca-ssh-user". */
  prefix?: string;
}

export class SecretCaKeyStore implements CaKeyStore {
  readonly #api: CoreV1Api;
  readonly #namespace: string;
  readonly #prefix: string;

  constructor(opts: SecretCaKeyStoreOptions) {
    this.#api = opts.kubeConfig.makeApiClient(CoreV1Api);
    this.#namespace = opts.namespace;
    this.#prefix = opts.prefix ?? DEFAULT_CA_SECRET_PREFIX;
  }

  /** The Secret name that holds CA `name`. */
  secretName(name: string): string {
    return `${this.#prefix}${checkCaName(name)}`;
  }

  async get(name: string): Promise<Uint8Array | undefined> {
    const secretName = this.secretName(name);
    let secret: V1Secret;
    try {
      secret = await this.#api.readNamespacedSecret({ name: secretName, namespace: this.#namespace });
    } catch (err) {
      if (kubeStatusCode(err) === 404) return undefined;
      throw kubeError(err, `CA Secret "${secretName}"`);
    }
    // A Secret of that name that is not ours is refused rather than trusted as a CA.
    if (secret.type !== CA_SECRET_TYPE) {
      throw new PreconditionFailedError(
        `Secret "${secretName}" exists but has type ${JSON.stringify(secret.type ?? "")}, not ${CA_SECRET_TYPE}`,
      );
    }
    const encoded = secret.data?.[CA_SECRET_KEY];
    if (encoded === undefined) {
      throw new PreconditionFailedError(`CA Secret "${secretName}" has no ${CA_SECRET_KEY} key`);
    }
    return new Uint8Array(Buffer.from(encoded, "base64"));
  }

  async createOnce(name: string, data: Uint8Array): Promise<"created" | "exists"> {
    const secretName = this.secretName(name);
    const body: V1Secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: secretName,
        namespace: this.#namespace,
        labels: { [PART_OF_LABEL]: PART_OF_VALUE, [CA_NAME_LABEL]: name },
      },
      type: CA_SECRET_TYPE,
      immutable: true,
      data: { [CA_SECRET_KEY]: Buffer.from(data).toString("base64") },
    };
    try {
      await this.#api.createNamespacedSecret({ namespace: this.#namespace, body });
      return "created";
    } catch (err) {
      if (kubeStatusCode(err) === 409) return "exists";
      throw kubeError(err, `CA Secret "${secretName}"`);
    }
  }
}
