#!/usr/bin/env bash
# Provides the CRDs of the third-party kinds the chart can render (prometheus-operator's
# ServiceMonitor, cert-manager's Certificate, Gateway API's HTTPRoute, TLSRoute and
# BackendTLSPolicy), so test/chart-*.test.ts applies those objects with server-side validation
# against the real schemas. Each project publishes its CRD YAML inside its Go module, so the files
# come from the Go module proxy (checksummed by sum.golang.org) at the versions pinned in
# versions.env, into ${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}/third-party-crds/<versions>/.
# Idempotent and safe to run in parallel (flock). Prints the folder on stdout.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"

cache="${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}"
key="prometheus-operator-$PROMETHEUS_OPERATOR_VERSION.gateway-api-$GATEWAY_API_VERSION.cert-manager-$CERT_MANAGER_VERSION"
root="$cache/third-party-crds"
out="$root/$key"

# module@version, then the CRD files inside its zip.
files=(
  "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION"
  "example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"
  "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION"
  "config/crd/standard/gateway.networking.k8s.io_httproutes.yaml config/crd/standard/gateway.networking.k8s.io_tlsroutes.yaml config/crd/standard/gateway.networking.k8s.io_backendtlspolicies.yaml"
  "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION"
  "deploy/crds/cert-manager.io_certificates.yaml"
)

if [ -f "$out/.complete" ]; then
  echo "third-party-crds: $key ($out)" >&2
  echo "$out"
  exit 0
fi

mkdir -p "$root"
exec 9>"$root/.lock"
flock 9
if [ ! -f "$out/.complete" ]; then
  command -v go >/dev/null 2>&1 || { echo "third-party-crds: Go is needed to fetch the CRDs" >&2; exit 1; }
  tmp="$out.tmp"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  # A private module cache in the tool cache: nothing lands in the user's GOPATH. Read-only dirs
  # are Go's default; -modcacherw lets a later `rm -rf` of the cache work.
  modcache="$root/gomodcache"
  for ((i = 0; i < ${#files[@]}; i += 2)); do
    module="${files[i]}"
    # `go mod download` outside a module; GOTOOLCHAIN=local: the CRD files need no newer Go.
    dir="$(cd "$tmp" && GOMODCACHE="$modcache" GOFLAGS=-modcacherw GOTOOLCHAIN=local \
      go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [ -d "$dir" ] || { echo "third-party-crds: could not download $module" >&2; exit 1; }
    for f in ${files[i + 1]}; do
      [ -f "$dir/$f" ] || { echo "third-party-crds: $module has no $f" >&2; exit 1; }
      cp "$dir/$f" "$tmp/$(basename "$f")"
    done
  done
  touch "$tmp/.complete"
  rm -rf "$out"
  mv "$tmp" "$out"
  echo "third-party-crds: fetched $key" >&2
fi
echo "third-party-crds: $key ($out)" >&2
echo "$out"
