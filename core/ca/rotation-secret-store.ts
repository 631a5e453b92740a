// Kubernetes mode: the CA rotation state in one mutable Secret (the keys themselves stay in the
// immutable CA Secrets). The Secret's resourceVersion is the revision, so a replace carrying the
// version read is the compare-and-swap: the apiserver answers 409 when another replica won.
import { CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import { BadParameterError, PreconditionFailedError } from "../errors.ts";
import { kubeError, kubeStatusCode, PART_OF_LABEL, PART_OF_VALUE } from "../sources/kube-api.ts";
import { parseDocument, type RotationDocument } from "./rotation.ts";
import type { RotationStateStore, StoredRotation } from "./rotation-store.ts";
import { DEFAULT_CA_SECRET_PREFIX } from "./secret-store.ts";

export const ROTATION_SECRET_TYPE = "svc.dev/ca-rotation";
export const ROTATION_SECRET_KEY = "state.json";

export class SecretRotationStateStore implements RotationStateStore {
  readonly #api: CoreV1Api;
  readonly #namespace: string;
  readonly #name: string;

  constructor(o: { kubeConfig: KubeConfig; namespace: string; prefix?: string }) {
    this.#api = o.kubeConfig.makeApiClient(CoreV1Api);
    this.#namespace = o.namespace;
    this.#name = `${o.prefix ?? DEFAULT_CA_SECRET_PREFIX}rotation`;
  }

  get secretName(): string {
    return this.#name;
  }

  async read(): Promise<StoredRotation | undefined> {
    let secret: V1Secret;
    try {
      secret = await this.#api.readNamespacedSecret({ name: this.#name, namespace: this.#namespace });
    } catch (err) {
      if (kubeStatusCode(err) === 404) return undefined;
      throw kubeError(err, `Secret "${this.#name}"`);
    }
    if (secret.type !== ROTATION_SECRET_TYPE)
      throw new PreconditionFailedError(
        `Secret "${this.#name}" exists but has type ${JSON.stringify(secret.type ?? "")}, not ${ROTATION_SECRET_TYPE}`,
      );
    const encoded = secret.data?.[ROTATION_SECRET_KEY];
    const revision = secret.metadata?.resourceVersion;
    if (encoded === undefined || !revision)
      throw new PreconditionFailedError(`Secret "${this.#name}" has no ${ROTATION_SECRET_KEY}`);
    let raw: unknown;
    try {
      raw = JSON.parse(Buffer.from(encoded, "base64").toString("utf8"));
    } catch (err) {
      throw new BadParameterError(`Secret "${this.#name}" holds invalid JSON`, { cause: err });
    }
    return { revision, doc: parseDocument(raw) };
  }

  async compareAndSwap(expected: string | undefined, doc: RotationDocument): Promise<"swapped" | "conflict"> {
    const body: V1Secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: this.#name,
        namespace: this.#namespace,
        labels: { [PART_OF_LABEL]: PART_OF_VALUE },
        ...(expected ? { resourceVersion: expected } : {}),
      },
      type: ROTATION_SECRET_TYPE,
      data: { [ROTATION_SECRET_KEY]: Buffer.from(JSON.stringify(doc)).toString("base64") },
    };
    try {
      if (expected === undefined)
        await this.#api.createNamespacedSecret({ namespace: this.#namespace, body });
      else await this.#api.replaceNamespacedSecret({ name: this.#name, namespace: this.#namespace, body });
      return "swapped";
    } catch (err) {
      // 409: created or replaced by someone else since our read.
      // 404 on replace: deleted since our read. Either way the caller re-reads.
      const code = kubeStatusCode(err);
      if (code === 409 || (expected !== undefined && code === 404)) return "conflict";
      throw kubeError(err, `Secret "${this.#name}"`);
    }
  }
}
