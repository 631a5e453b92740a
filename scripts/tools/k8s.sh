#!/usr/bin/env bash
# Provides kube-apiserver and etcd for the Kubernetes tests (test/harness/kube.ts), and the node
# components of the single-node cluster (test/harness/cluster.ts): kube-controller-manager,
# kube-scheduler, kubelet and kube-proxy, all from one module build of k8s.io/kubernetes.
# - KUBEBUILDER_ASSETS (the envtest convention) wins when it holds both binaries: nothing is built.
# - Otherwise both are built from the Go module proxy at the versions pinned in versions.env into
#   ${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}/k8s-<version>/bin, once.
# Idempotent and safe to run in parallel (flock). Takes ~15-25 minutes the first time on 2 cores.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ] && [ -x "$KUBEBUILDER_ASSETS/etcd" ]; then
  echo "k8s: using KUBEBUILDER_ASSETS ($KUBEBUILDER_ASSETS)" >&2
  exit 0
fi

cache="${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}"
root="$cache/k8s-$K8S_VERSION"
bin="$root/bin"
mkdir -p "$root"

report() {
  local api etcd
  # First lines taken in the shell, not with `| head -n1`: head exits after one line, and etcd,
  # still writing its next lines, then dies of SIGPIPE, which pipefail turns into exit 141.
  api="$("$bin/kube-apiserver" --version 2>/dev/null || true)"
  etcd="$("$bin/etcd" --version 2>/dev/null || true)"
  api="${api%%$'\n'*}"
  etcd="${etcd%%$'\n'*}"
  echo "k8s: $api, $etcd, with ${node_components[*]} ($bin)" >&2
}

node_components=(kube-controller-manager kube-scheduler kubelet kube-proxy)
have_all() {
  [ -x "$bin/kube-apiserver" ] && [ -x "$bin/etcd" ] || return 1
  local c
  for c in "${node_components[@]}"; do [ -x "$bin/$c" ] || return 1; done
}

if have_all; then report; exit 0; fi

exec 9>"$root/.lock"
flock 9
# Another run may have finished the build while this one waited for the lock.
if have_all; then report; exit 0; fi

command -v go >/dev/null 2>&1 || { echo "k8s: Go is needed to build kube-apiserver and etcd (or set KUBEBUILDER_ASSETS)" >&2; exit 1; }

minor="${K8S_VERSION#v1.}"           # 37.2
staging_version="v0.${minor}"        # v0.37.2: the published tag of every staging module
src="$root/src"
rm -rf "$src"
mkdir -p "$src"
cd "$src"

# k8s.io/kubernetes maps its staging modules to ./staging/...; a consumer module must map them
# from v0.0.0 to their published versions. Take the list from the release's own go.mod.
kube_gomod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
[ -f "$kube_gomod" ] || { echo "k8s: could not download k8s.io/kubernetes@$K8S_VERSION" >&2; exit 1; }
staging_modules="$(sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\1#p' "$kube_gomod")"
[ -n "$staging_modules" ] || { echo "k8s: no staging replace lines found in $kube_gomod" >&2; exit 1; }

{
  echo "module svc-platform/k8s-tools"
  echo
  echo "go 1.26.0"
  echo
  echo "require ("
  echo "	k8s.io/kubernetes $K8S_VERSION"
  echo "	go.etcd.io/etcd/server/v3 $ETCD_VERSION"
  echo ")"
  echo
  echo "replace ("
  for m in $staging_modules; do echo "	$m => $m $staging_version"; done
  echo ")"
} >go.mod
# Blank imports of the two main packages let `go mod tidy` compute the module graph; the build
# tag keeps this file out of every real build.
cat >tools.go <<'EOF'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
EOF

start=$(date +%s)
echo "k8s: building Kubernetes $K8S_VERSION and etcd $ETCD_VERSION into $bin (log: $root/build.log)" >&2
{
  go mod tidy
  # Same version stamps the release build sets, so /version and --version tell the truth.
  vpkg_cb="k8s.io/component-base/version"
  vpkg_cg="k8s.io/client-go/pkg/version"
  kube_ldflags="-s -w"
  for p in "$vpkg_cb" "$vpkg_cg"; do
    kube_ldflags="$kube_ldflags -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=${minor%%.*} -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  tmp="$root/bin.tmp"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  export GOFLAGS="-trimpath -buildvcs=false -mod=mod"
  export CGO_ENABLED=0
  # A machine that cached kube-apiserver and etcd before the node components existed builds only
  # what it lacks.
  mkdir -p "$bin"
  for c in kube-apiserver "${node_components[@]}"; do
    [ -x "$bin/$c" ] && continue
    nice -n 10 go build -ldflags="$kube_ldflags" -o "$tmp/$c" "k8s.io/kubernetes/cmd/$c"
    mv "$tmp/$c" "$bin/"
  done
  if [ ! -x "$bin/etcd" ]; then
    nice -n 10 go build -ldflags="-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
    mv "$tmp/etcd" "$bin/"
  fi
  rmdir "$tmp"
} >"$root/build.log" 2>&1 || { echo "k8s: build failed, see $root/build.log" >&2; tail -n 30 "$root/build.log" >&2; exit 1; }
echo "k8s: built in $(( $(date +%s) - start ))s" >&2
report
