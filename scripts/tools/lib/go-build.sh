# Sourced by scripts/tools/go-tools.sh and bench/step-ca.sh (not run; outside tools/*.sh, which
# scripts/provision.sh runs one by one): build_tool builds one Go tool at
# a pinned version into ${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}/<tool>-<version>/bin,
# once, with CGO off. Idempotent and safe to run in parallel (flock).

cache="${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}"

# build_tool <name> <version> <package> <ldflags> [<tags> [<more binaries the package pattern makes>...]]
build_tool() {
  local name="$1" version="$2" pkg="$3" ldflags="$4" tags="${5:-}"
  local extra=("${@:6}")
  local root="$cache/$name-$version"
  local bin="$root/bin"
  if [ -x "$bin/$name" ]; then
    echo "go-tools: $name $version ($bin)" >&2
    return 0
  fi
  mkdir -p "$root"
  (
    flock 9
    # Another run may have finished while this one waited for the lock.
    if [ -x "$bin/$name" ]; then echo "go-tools: $name $version ($bin)" >&2; exit 0; fi
    command -v go >/dev/null 2>&1 || { echo "go-tools: Go is needed to build $name" >&2; exit 1; }
    local start tmp
    start=$(date +%s)
    tmp="$root/bin.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    echo "go-tools: building $name $version (log: $root/build.log)" >&2
    if ! GOBIN="$tmp" GOFLAGS="-trimpath -buildvcs=false" CGO_ENABLED=0 \
      nice -n 10 go install -tags="$tags" -ldflags="-s -w $ldflags" "$pkg@$version" >"$root/build.log" 2>&1; then
      echo "go-tools: building $name failed, see $root/build.log" >&2
      tail -n 20 "$root/build.log" >&2
      exit 1
    fi
    mkdir -p "$bin"
    local b
    for b in "${extra[@]}"; do mv "$tmp/$b" "$bin/$b"; done
    # The named binary last: its presence says the whole set is there.
    mv "$tmp/$name" "$bin/$name"
    rm -rf "$tmp"
    echo "go-tools: built $name $version in $(($(date +%s) - start))s" >&2
  ) 9>"$root/.lock"
}

