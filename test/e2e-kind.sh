#!/usr/bin/env bash
# `make e2e-kind`: the operator tests against a kind cluster instead of the local apiserver harness,
# then the `helm install` end-to-end test (test/helm-e2e.test.ts, the same file `make test` runs on
# the single-node harness) with the image `make image` builds, loaded by `kind load image-archive`.
# Needs a Docker engine, `kind` (https://kind.sigs.k8s.io; `go install sigs.k8s.io/kind@latest`),
# kubectl, and helm (the cached build from scripts/tools/go-tools.sh, or one on PATH).
# It creates (or reuses) the cluster, installs the chart's CRDs and the operator's RBAC, mints a
# token for the operator's ServiceAccount so the operator runs with exactly those rights, renders
# the chart and dry-runs its Deployments server-side, then runs test/operator-reconcile.test.ts and
# test/operator-leader.test.ts with the cluster's kubeconfigs. KEEP_CLUSTER=1 keeps the cluster.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cluster="${KIND_CLUSTER_NAME:-svc-e2e}"
ns=svc-system

need() { command -v "$1" >/dev/null 2>&1 || { echo "e2e-kind: $1 is required ($2)" >&2; exit 1; }; }
need docker "a Docker engine runs kind's nodes"
need kind "go install sigs.k8s.io/kind@latest"
need kubectl "https://kubernetes.io/docs/tasks/tools/"
docker info >/dev/null 2>&1 || { echo "e2e-kind: no Docker engine is reachable" >&2; exit 1; }

. "$repo/scripts/tools/versions.env"
cache="${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}"
helm_bin="$cache/helm-$HELM_VERSION/bin/helm"
[ -x "$helm_bin" ] || helm_bin="$(command -v helm || true)"
[ -n "$helm_bin" ] || { echo "e2e-kind: helm not found: run scripts/tools/go-tools.sh" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/svc-e2e-kind.XXXXXX")"
cleanup() {
  rm -rf "$work"
  if [ "${KEEP_CLUSTER:-0}" != 1 ] && [ "${created:-0}" = 1 ]; then kind delete cluster --name "$cluster" || true; fi
}
trap cleanup EXIT

created=0
if ! kind get clusters 2>/dev/null | grep -qx "$cluster"; then
  kind create cluster --name "$cluster" --wait 180s
  created=1
fi
admin="$work/admin.kubeconfig"
kind get kubeconfig --name "$cluster" >"$admin"
k() { kubectl --kubeconfig "$admin" "$@"; }

# The operator's identity: its ServiceAccount, bound by operator/rbac.yaml, through a short-lived token.
reset_namespace() {
  k delete namespace "$ns" --ignore-not-found --wait=true --timeout=180s
  k create namespace "$ns"
  k apply --server-side -f "$repo/charts/svc/crds/"
  for f in "$repo"/charts/svc/crds/*.yaml; do
    k wait --for=condition=Established --timeout=120s "crd/$(basename "$f" .yaml)"
  done
  k apply -f "$repo/operator/rbac.yaml"
  local token server ca
  token="$(k -n "$ns" create token svc-operator --duration=2h)"
  server="$(k config view --raw -o jsonpath='{.clusters[0].cluster.server}')"
  ca="$(k config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')"
  cat >"$work/operator.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{ name: kind, cluster: { server: "$server", certificate-authority-data: "$ca" } }]
users: [{ name: svc-operator, user: { token: "$token" } }]
contexts: [{ name: kind, context: { cluster: kind, user: svc-operator, namespace: $ns } }]
current-context: kind
KC
}

reset_namespace
# The chart renders and its Deployments are accepted by this cluster's apiserver.
"$helm_bin" lint --strict -f "$repo/charts/svc/ci/default-values.yaml" "$repo/charts/svc"
"$helm_bin" template svc "$repo/charts/svc" -f "$repo/charts/svc/ci/default-values.yaml" --namespace "$ns" | k apply --dry-run=server -f -

cd "$repo"
export SVC_E2E_ADMIN_KUBECONFIG="$admin" SVC_E2E_OPERATOR_KUBECONFIG="$work/operator.kubeconfig"
# One file at a time, each on a fresh namespace: both use the same Lease and CA Secret names.
npx vitest run test/operator-reconcile.test.ts
reset_namespace
npx vitest run test/operator-leader.test.ts

# helm install end to end: the image into the kind node, then the same test file as `make test`.
k delete namespace svc --ignore-not-found --wait=true --timeout=180s
make -C "$repo" image
kind load image-archive "$repo/dist/svc-image.tar" --name "$cluster"
node_ip="$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$cluster-control-plane")"
gateway="$(docker network inspect kind -f '{{range .IPAM.Config}}{{if .Gateway}}{{.Gateway}} {{end}}{{end}}' | awk '{print $1}')"
export SVC_E2E_KUBECONFIG="$admin" SVC_E2E_NODE_ADDRESS="$node_ip" SVC_E2E_HOST_ADDRESS="$gateway"
# kind's default Pod subnet; Pods reach the host from it or masqueraded as the node.
export SVC_E2E_POD_CIDRS="10.244.0.0/16,$node_ip/32"
npx vitest run test/helm-e2e.test.ts
