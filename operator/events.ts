// Kubernetes Events on our custom resources, for what a user should see in `kubectl describe` or
// `kubectl get events` (invalid spec, token used or expired, sessions revoked). core/v1 Events,
// because every kubectl shows them. Recording is best effort: a failed Event never fails a
// reconcile, it is only logged (without the message, which may name user input).
import { randomBytes } from "node:crypto";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { Clock } from "../core/clock.ts";
import { API_VERSION, type ResourceKind } from "../core/resources/index.ts";
import { kubeError } from "../core/sources/kube-api.ts";
import type { RawObject } from "./kube.ts";

export type EventType = "Normal" | "Warning";

export interface EventRecorder {
  record(kind: ResourceKind, obj: RawObject, type: EventType, reason: string, message: string): Promise<void>;
}

export const EVENT_COMPONENT = "svc-operator";

export interface KubeEventRecorderOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  clock: Clock;
  /** This process (the leader-election identity), shown as the reporting instance. */
  instance: string;
  onError?: (error: Error) => void;
}

export class KubeEventRecorder implements EventRecorder {
  readonly #api: CoreV1Api;
  readonly #o: KubeEventRecorderOptions;

  constructor(o: KubeEventRecorderOptions) {
    this.#o = o;
    this.#api = o.kubeConfig.makeApiClient(CoreV1Api);
  }

  async record(
    kind: ResourceKind,
    obj: RawObject,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    const name = obj.metadata?.name ?? "";
    const now = this.#o.clock.now();
    try {
      await this.#api.createNamespacedEvent({
        namespace: this.#o.namespace,
        body: {
          metadata: { name: `${name}.${randomBytes(8).toString("hex")}`, namespace: this.#o.namespace },
          involvedObject: {
            apiVersion: API_VERSION,
            kind,
            name,
            namespace: this.#o.namespace,
            ...(obj.metadata?.uid ? { uid: obj.metadata.uid } : {}),
            ...(obj.metadata?.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {}),
          },
          type,
          reason,
          message: message.slice(0, 1024),
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: EVENT_COMPONENT },
          reportingComponent: EVENT_COMPONENT,
          reportingInstance: this.#o.instance.slice(0, 128),
        },
      });
    } catch (err) {
      this.#o.onError?.(kubeError(err, `Event ${reason} for ${kind} "${name}"`));
    }
  }
}
