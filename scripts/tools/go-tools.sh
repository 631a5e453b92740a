#!/usr/bin/env bash
# Builds grpcurl, helm, containerd, CoreDNS and go-httpbin from the Go module proxy at the versions pinned in versions.env into
# ${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}/<tool>-<version>/bin, once.
# Idempotent and safe to run in parallel (flock).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"

# shellcheck source=lib/go-build.sh
. "$here/lib/go-build.sh"

build_tool grpcurl "$GRPCURL_VERSION" github.com/fullstorydev/grpcurl/cmd/grpcurl \
  "-X main.version=$GRPCURL_VERSION"
build_tool helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm \
  "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
# The single-node cluster (test/harness/cluster.ts): containerd 2 with its shim and ctr, and
# CoreDNS, the DNS a real cluster runs, so Service names resolve inside Pods.
build_tool containerd "$CONTAINERD_VERSION" "github.com/containerd/containerd/v2/cmd/..." \
  "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
  "no_btrfs no_devmapper no_zfs" ctr containerd-shim-runc-v2
build_tool coredns "$COREDNS_VERSION" github.com/coredns/coredns ""
# The upstream web application behind the proxy in the app-access tests (docs/apps.md).
build_tool go-httpbin "$GO_HTTPBIN_VERSION" github.com/mccutchen/go-httpbin/v2/cmd/go-httpbin ""
