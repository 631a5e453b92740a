// Objects auth writes for the admin RPCs (what `svcctl users add`, `svcctl tokens add` and
// `svcctl agent-identities add` create) carry `app.kubernetes.io/managed-by: svcctl`, so people
// and GitOps tools can tell them from what they applied themselves: Argo CD and Flux prune only
// what they track, and the label makes clear these objects are not theirs to own or prune.
import type { ResourceWriter } from "../../core/sources/source.ts";

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY_SVCCTL = "svcctl";

/** `writer` with the managed-by label added to every object it applies. */
export function managedBySvcctl(writer: ResourceWriter): ResourceWriter {
  return {
    apply: (resource) =>
      writer.apply({
        ...resource,
        metadata: {
          ...resource.metadata,
          labels: { ...resource.metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY_SVCCTL },
        },
      }),
    remove: (kind, name) => writer.remove(kind, name),
  };
}
