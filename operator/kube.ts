// What the reconcilers need from the apiserver, and nothing more: read one custom resource, set its
// finalizers (with the resourceVersion as a precondition, so a concurrent edit is never
// overwritten), patch its status, and check that a Secret key exists without reading its value
// into anything that could be logged.
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import type { ResourceKind, ResourceOf } from "../core/resources/index.ts";
import { crCoordinates, kubeError, kubeStatusCode } from "../core/sources/kube-api.ts";
import { patchResourceStatus } from "../core/sources/kubernetes.ts";

/** A custom resource as the apiserver returns it (not yet validated). */
export interface RawObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    deletionTimestamp?: string | Date;
    finalizers?: string[];
    managedFields?: unknown;
    [key: string]: unknown;
  };
  spec?: unknown;
  status?: unknown;
  [key: string]: unknown;
}

export type SecretKeyCheck = "present" | "secret-missing" | "key-missing";

export interface ObjectClient {
  readonly namespace: string;
  /** The object, or undefined when it does not exist. */
  get(kind: ResourceKind, name: string): Promise<RawObject | undefined>;
  /** Replaces metadata.finalizers; fails with CompareFailedError when `resourceVersion` is stale. */
  setFinalizers(
    kind: ResourceKind,
    name: string,
    finalizers: string[],
    resourceVersion: string,
  ): Promise<void>;
  patchStatus<K extends ResourceKind>(
    kind: K,
    name: string,
    status: NonNullable<ResourceOf<K>["status"]>,
  ): Promise<void>;
  /** Whether Secret `name` in the namespace has `key` (the value is never returned). */
  secretHasKey(name: string, key: string): Promise<SecretKeyCheck>;
}

export class KubeObjectClient implements ObjectClient {
  readonly namespace: string;
  readonly #kubeConfig: KubeConfig;
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;

  constructor(kubeConfig: KubeConfig, namespace: string) {
    this.namespace = namespace;
    this.#kubeConfig = kubeConfig;
    this.#custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
  }

  async get(kind: ResourceKind, name: string): Promise<RawObject | undefined> {
    try {
      return (await this.#custom.getNamespacedCustomObject({
        ...crCoordinates(kind),
        namespace: this.namespace,
        name,
      })) as RawObject;
    } catch (err) {
      if (kubeStatusCode(err) === 404) return undefined;
      throw kubeError(err, `${kind} "${name}"`);
    }
  }

  async setFinalizers(
    kind: ResourceKind,
    name: string,
    finalizers: string[],
    resourceVersion: string,
  ): Promise<void> {
    try {
      await this.#custom.patchNamespacedCustomObject(
        {
          ...crCoordinates(kind),
          namespace: this.namespace,
          name,
          body: { metadata: { finalizers, resourceVersion } },
        },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    } catch (err) {
      throw kubeError(err, `${kind} "${name}" finalizers`);
    }
  }

  async patchStatus<K extends ResourceKind>(
    kind: K,
    name: string,
    status: NonNullable<ResourceOf<K>["status"]>,
  ): Promise<void> {
    await patchResourceStatus(this.#kubeConfig, this.namespace, kind, name, status, this.#custom);
  }

  async secretHasKey(name: string, key: string): Promise<SecretKeyCheck> {
    try {
      const secret = await this.#core.readNamespacedSecret({ name, namespace: this.namespace });
      const has = Object.hasOwn(secret.data ?? {}, key) || Object.hasOwn(secret.stringData ?? {}, key);
      return has ? "present" : "key-missing";
    } catch (err) {
      if (kubeStatusCode(err) === 404) return "secret-missing";
      throw kubeError(err, `Secret "${name}"`);
    }
  }
}
