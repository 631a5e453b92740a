#!/usr/bin/env bash
# Builds step-ca (github.com/smallstep/certificates/cmd/step-ca) at STEP_CA_VERSION from
# versions.env into ${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}/step-ca-<version>/bin,
# once, and prints the binary's path on stdout. Only the peer benchmark needs it
# (`npm run bench -- certs-peer`), so scripts/provision.sh does not run this and tests never wait
# for its build: it sits outside scripts/tools/*.sh, which provisioning runs one by one.
# Idempotent and safe to run in parallel (flock).
set -euo pipefail

tools="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=../versions.env
. "$tools/versions.env"
# shellcheck source=../lib/go-build.sh
. "$tools/lib/go-build.sh"

build_tool step-ca "$STEP_CA_VERSION" github.com/smallstep/certificates/cmd/step-ca \
  "-X main.Version=$STEP_CA_VERSION" >&2
echo "$cache/step-ca-$STEP_CA_VERSION/bin/step-ca"
