// The one source of truth for what each svc component may do in Kubernetes. The Helm chart's RBAC
// templates and operator/rbac.yaml (the plain copy the tests apply) are generated from here by
// operator/gen-manifests.ts; a test fails when they are stale. Everything is namespaced (a Role,
// not a ClusterRole): the platform reads and writes only its own namespace.
import { API_GROUP, kindInfo, RESOURCE_KINDS } from "../core/resources/index.ts";

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const plurals = RESOURCE_KINDS.map((k) => kindInfo[k].plural);

/**
 * The operator: read every kind (informers list + watch, reconcilers get), set finalizers (patch),
 * write status (patch on the status subresource); check and create CA Secrets and check Connector
 * Secrets (get + create; never list or watch, so it never reads Secrets it was not pointed at);
 * record Events; hold its Lease (create, and get/update on that one name only).
 */
export function operatorRules(leaseName: string): PolicyRule[] {
  return [
    { apiGroups: [API_GROUP], resources: plurals, verbs: ["get", "list", "watch", "patch"] },
    { apiGroups: [API_GROUP], resources: plurals.map((p) => `${p}/status`), verbs: ["patch"] },
    { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create"] },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
    {
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      verbs: ["get", "update"],
      resourceNames: [leaseName],
    },
  ];
}

/**
 * auth: decides from informer caches of every kind, reads the CA Secrets and Connector client
 * secrets, and records bot renewals and token redemptions in status. As the only CA holder it also
 * issues the proxy's TLS identity into the Secret `proxyIdentitySecret` and renews it
 * (docs/kubernetes-mode.md): `create` cannot be limited to a name, get/update are. With
 * auth.first_admin it keeps the first admin's reset link in the Secret `firstAdminSecret`.
 */
export function authRules(
  proxyIdentitySecret: string,
  firstAdminSecret: string,
  caRotationSecret: string,
): PolicyRule[] {
  return [
    { apiGroups: [API_GROUP], resources: plurals, verbs: ["get", "list", "watch"] },
    // The admin RPCs (svcctl users/tokens/agent-identities/lock) write these kinds for the caller
    // after auth's own access decision, and auth deletes expired Locks; Roles and Connectors stay
    // GitOps-only (kubectl).
    {
      apiGroups: [API_GROUP],
      resources: ["users", "jointokens", "agentidentities", "locks"],
      verbs: ["create", "update", "delete"],
    },
    {
      apiGroups: [API_GROUP],
      resources: ["agentidentities/status", "jointokens/status"],
      verbs: ["patch"],
    },
    // get: the CA Secrets and, at each single sign-on login, the Secret a Connector's
    // client_secret_ref names (never list/watch: docs/sso-security.md "Connector secrets").
    { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create"] },
    {
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["get", "update"],
      resourceNames: [proxyIdentitySecret],
    },
    // CA rotation (docs/ca-rotation.md): the one mutable state Secret beside the immutable key
    // Secrets, created through the rule above and then changed by compare-and-swap.
    {
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["get", "update"],
      resourceNames: [caRotationSecret],
    },
    // auth.first_admin: the reset link Secret (created through the rule above), replaced when the
    // link expired unused, deleted once the user has a credential.
    {
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["get", "update", "delete"],
      resourceNames: [firstAdminSecret],
    },
  ];
}

/** proxy: informer caches (public connector views, role lookups for the UI) and its own identity Secret. */
export function proxyRules(proxyIdentitySecret: string): PolicyRule[] {
  return [
    { apiGroups: [API_GROUP], resources: plurals, verbs: ["get", "list", "watch"] },
    // Its own identity, read through the API until the kubelet has mounted it (proxy.identity_secret).
    { apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: [proxyIdentitySecret] },
  ];
}

export interface ComponentRbac {
  /** ServiceAccount, Role and RoleBinding name. */
  name: string;
  namespace: string;
  rules: PolicyRule[];
  labels: Record<string, string>;
}

/** ServiceAccount + Role + RoleBinding for one component, as plain objects. */
export function rbacObjects(c: ComponentRbac): Record<string, unknown>[] {
  const metadata = { name: c.name, namespace: c.namespace, labels: c.labels };
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata, rules: c.rules },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: c.name },
      subjects: [{ kind: "ServiceAccount", name: c.name, namespace: c.namespace }],
    },
  ];
}
