#!/usr/bin/env bash
# Installs, idempotently, the real peers the tests talk to. Debian packages through apt;
# Go-built tools (kube-apiserver, etcd, grpcurl, helm) at pinned versions into a cache outside
# the repository (see scripts/tools/). When everything is already there it only prints one
# line per Go-built tool, naming its version.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

need_apt=()
[ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
# The image build (scripts/image/) and the single-node cluster (scripts/tools/k8s-node.sh):
# mmdebstrap makes the root filesystem, umoci writes the OCI layout, podman and skopeo run and
# copy it; runc, the CNI plugins and iptables serve containerd and kube-proxy.
command -v mmdebstrap >/dev/null 2>&1 || need_apt+=(mmdebstrap)
command -v umoci >/dev/null 2>&1 || need_apt+=(umoci)
command -v skopeo >/dev/null 2>&1 || need_apt+=(skopeo)
command -v podman >/dev/null 2>&1 || need_apt+=(podman)
command -v runc >/dev/null 2>&1 || need_apt+=(runc)
[ -x /usr/lib/cni/bridge ] || need_apt+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
command -v conntrack >/dev/null 2>&1 || need_apt+=(conntrack)
command -v strip >/dev/null 2>&1 || need_apt+=(binutils)
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "provision: missing Debian packages ${need_apt[*]}; install them as root (apt-get install ${need_apt[*]})" >&2
    exit 1
  fi
  echo "provision: installing ${need_apt[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  # The package enables a system sshd; the tests run their own and never touch it.
  if command -v systemctl >/dev/null 2>&1; then systemctl disable --now ssh >/dev/null 2>&1 || true; fi
fi

for tool in "$here"/tools/*.sh; do
  [ -e "$tool" ] || continue
  bash "$tool"
done
