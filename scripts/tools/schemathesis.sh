#!/usr/bin/env bash
# Installs schemathesis (PyPI) at SCHEMATHESIS_VERSION from versions.env into its own virtualenv
# under ${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}/schemathesis-<version>, once,
# and prints the path of its `schemathesis` command on stdout. Idempotent and safe to run in
# parallel (flock). test/schemathesis.test.ts runs it against a real `svcd start`.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"

cache="${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}"
root="$cache/schemathesis-$SCHEMATHESIS_VERSION"
venv="$root/venv"
bin="$venv/bin/schemathesis"
# Written last: its presence says the install finished (an interrupted one is redone from scratch).
stamp="$root/.installed"

if [ ! -e "$stamp" ]; then
  mkdir -p "$root"
  (
    flock 9
    # Another run may have finished while this one waited for the lock.
    if [ -e "$stamp" ]; then exit 0; fi
    command -v python3 >/dev/null 2>&1 || { echo "schemathesis: python3 (3.9 or newer) is needed" >&2; exit 1; }
    start=$(date +%s)
    rm -rf "$venv"
    echo "schemathesis: installing $SCHEMATHESIS_VERSION (log: $root/install.log)" >&2
    if ! { python3 -m venv "$venv" &&
      "$venv/bin/python" -m pip install --disable-pip-version-check --no-input \
        "schemathesis==$SCHEMATHESIS_VERSION" &&
      "$bin" --version; } >"$root/install.log" 2>&1; then
      echo "schemathesis: install failed, see $root/install.log" >&2
      tail -n 20 "$root/install.log" >&2
      exit 1
    fi
    touch "$stamp"
    echo "schemathesis: installed $SCHEMATHESIS_VERSION in $(($(date +%s) - start))s" >&2
  ) 9>"$root/.lock"
fi
echo "schemathesis: $SCHEMATHESIS_VERSION ($bin)" >&2
echo "$bin"
