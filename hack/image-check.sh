#!/usr/bin/env bash
# make image-check: build the Dockerfile without a Docker engine and run `kube-identity version` in the image.
#
# For machines with no Docker engine and no access to Docker Hub or gcr.io (root, apt and a Debian mirror
# suffice): buildah builds the unchanged Dockerfile from a fresh clone of HEAD, with --pull=never and chroot
# isolation, on two local stand-ins for the base images its FROM lines name, tagged with those names:
#   node:<NODE_VERSION>-bookworm-slim           debootstrap's minimal bookworm + the project's Node 24 (hack/ensure-node.sh:
#                                                  node and headers) and this machine's npm
#   gcr.io/distroless/nodejs<V>-debian12:nonroot  only the files of base-files, tzdata, libc6, libgcc-s1, libstdc++6,
#                                                  the CA bundle and Node at /nodejs/bin/node; no shell; user 65532
# Then podman runs the image as a user would and the check compares what `version` prints with HEAD.
# Everything lives under IMAGE_CHECK_DIR (default /var/tmp/kube-identity-image-check) and is removed at the end
# (containers/image still writes its small blob-info cache to /var/lib/containers/cache, as any buildah run does).
set -euo pipefail

cd "$(git rev-parse --show-toplevel)"
WORK=${IMAGE_CHECK_DIR:-/var/tmp/kube-identity-image-check}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
IMAGE=localhost/kube-identity:image-check
STORE=(--root "$WORK/storage" --runroot "$WORK/run" --storage-driver vfs)
say() { echo "image-check: $*"; }
die() { echo "image-check: error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (chroot, debootstrap and image storage)"
missing=()
for tool in buildah podman runc debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "install ${missing[*]}"
  say "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi

NODE_VERSION=$(sed -n 's/^ARG NODE_VERSION=//p' Dockerfile)
# The project's Node (hack/ensure-node.sh: the pinned one unless PATH has a 24.x), with its headers; npm is the
# machine's, which the pinned Node package does not carry.
pinned=$(hack/ensure-node.sh)
if [ -n "$pinned" ]; then export PATH="$pinned/bin:$PATH"; fi
NODE=$(readlink -f "$(command -v node)")
[ "$(node -p 'process.versions.node.split(".")[0]')" = "$NODE_VERSION" ] || die "the Dockerfile wants Node $NODE_VERSION, this machine has $(node -v)"
NODE_PREFIX=$(dirname "$(dirname "$NODE")")
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[ -d "$NODE_PREFIX/include/node" ] || die "no $NODE_PREFIX/include/node (Node's headers go into the builder image)"
[ "$(node -p 'require(process.argv[1]).name' "$NPM_DIR/package.json" 2>/dev/null)" = npm ] || die "no npm at $NPM_DIR (it goes into the builder image)"
COMMIT=$(git rev-parse HEAD)
BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
git diff --quiet HEAD || say "note: uncommitted changes are not in the build (it is from a clone of HEAD $COMMIT)"

cleanup() {
  buildah "${STORE[@]}" rm --all >/dev/null 2>&1 || true
  podman "${STORE[@]}" rm --all --force >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
cleanup
# IMAGE_CHECK_KEEP=1 leaves the storage and image for a look (buildah/podman --root $WORK/storage --storage-driver vfs).
[ -n "${IMAGE_CHECK_KEEP:-}" ] || trap cleanup EXIT
mkdir -p "$WORK"

say "debootstrap bookworm (minbase) from $MIRROR"
debootstrap --variant=minbase bookworm "$WORK/bookworm" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || { tail -5 "$WORK/debootstrap.log"; die "debootstrap failed"; }

# commit_dir NAME DIR CONFIG...: a one-layer image NAME holding DIR, with buildah config flags CONFIG.
commit_dir() {
  local name=$1 dir=$2 ctr mnt
  shift 2
  ctr=$(buildah "${STORE[@]}" from scratch)
  mnt=$(buildah "${STORE[@]}" mount "$ctr")
  cp -a "$dir/." "$mnt/"
  buildah "${STORE[@]}" umount "$ctr" >/dev/null
  buildah "${STORE[@]}" config "$@" "$ctr"
  buildah "${STORE[@]}" commit --quiet "$ctr" "$name" >/dev/null
  buildah "${STORE[@]}" rm "$ctr" >/dev/null
  say "base image $name"
}

# The machine trusts its own CAs (an egress proxy may re-sign TLS): so do both stand-ins, as an operator's
# base images would. Should npm compile an addon, node-gyp uses the headers in the image (nodedir), as on this
# machine, since it cannot fetch them from nodejs.org here.
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
builder=$WORK/node-base
cp -a "$WORK/bookworm" "$builder"
mkdir -p "$builder/usr/local/bin" "$builder/usr/local/lib/node_modules" "$builder/usr/local/include" "$builder/etc/ssl/certs"
cp "$NODE" "$builder/usr/local/bin/node"
cp -a "$NPM_DIR" "$builder/usr/local/lib/node_modules/npm"
cp -a "$NODE_PREFIX/include/node" "$builder/usr/local/include/"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$builder/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$builder/usr/local/bin/npx"
cp "$CA_BUNDLE" "$builder/etc/ssl/certs/"
commit_dir "docker.io/library/node:$NODE_VERSION-bookworm-slim" "$builder" \
  --env NODE_VERSION="$(node -p process.versions.node)" --env NODE_EXTRA_CA_CERTS="$CA_BUNDLE" \
  --env npm_config_nodedir=/usr/local --cmd node

runtime=$WORK/distroless
mkdir -p "$runtime"/{usr/bin,usr/lib,usr/lib64,usr/sbin,etc/ssl/certs,nodejs/bin,home/nonroot,tmp}
for d in bin lib lib64 sbin; do ln -s "usr/$d" "$runtime/$d"; done
chmod 1777 "$runtime/tmp"
# The packages' files, not their directories (dpkg lists /lib/..., which is usr/lib in a merged-/usr tree).
(cd "$WORK/bookworm" && chroot . dpkg -L base-files tzdata libc6 libgcc-s1 libstdc++6 | sort -u \
  | while read -r f; do [ -d ".$f" ] || echo ".$f"; done | tar -cf - --no-recursion -T -) \
  | tar -C "$runtime" -xf - --keep-directory-symlink
cp "$CA_BUNDLE" "$runtime/etc/ssl/certs/"
cp "$NODE" "$runtime/nodejs/bin/node"
printf '%s\n' root:x:0:0:root:/root:/sbin/nologin nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin \
  nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin >"$runtime/etc/passwd"
printf '%s\n' root:x:0: nobody:x:65534: nonroot:x:65532: >"$runtime/etc/group"
chown 65532:65532 "$runtime/home/nonroot"
commit_dir "gcr.io/distroless/nodejs$NODE_VERSION-debian12:nonroot" "$runtime" \
  --user 65532 --workingdir /home/nonroot --entrypoint '["/nodejs/bin/node"]' \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env SSL_CERT_FILE="$CA_BUNDLE"

say "clone HEAD $COMMIT"
git clone --quiet --no-local --no-checkout . "$WORK/src"
git -C "$WORK/src" checkout --quiet "$COMMIT"

say "buildah bud (the unchanged Dockerfile; takes minutes: npm ci, tsc)"
buildah "${STORE[@]}" bud --pull=never --isolation chroot --network host --quiet \
  --build-arg GIT_COMMIT="$COMMIT" --build-arg BUILD_DATE="$BUILD_DATE" -t "$IMAGE" "$WORK/src" >"$WORK/build.log" 2>&1 \
  || { tail -30 "$WORK/build.log"; die "buildah bud failed"; }

user=$(buildah "${STORE[@]}" inspect --type image --format '{{.OCIv1.Config.User}}' "$IMAGE")
say "image: user $user, entrypoint $(buildah "${STORE[@]}" inspect --type image --format '{{.OCIv1.Config.Entrypoint}} cmd {{.OCIv1.Config.Cmd}}' "$IMAGE")"
[ "$user" = 65532:65532 ] || die "the image does not run as 65532:65532"

# runc with cgroupfs (crun refuses this machine's hybrid cgroups); limits no higher than the machine's,
# since raising them (podman's default for root) needs CAP_SYS_RESOURCE, which a sandbox may withhold.
run=(podman "${STORE[@]}" --cgroup-manager cgroupfs run --rm --network none --runtime runc
  --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
say "podman run --rm $IMAGE version"
out=$("${run[@]}" "$IMAGE" version)
echo "$out"
# The native addon compiled in the build stage loads in the runtime stage (same glibc, no compiler there).
sqlite=$("${run[@]}" --entrypoint /nodejs/bin/node "$IMAGE" -e \
  'console.log(new (require("better-sqlite3"))(":memory:").prepare("select sqlite_version() v").get().v)')
say "better-sqlite3 loads in the image: SQLite $sqlite"
grep -qx "  commit  $COMMIT" <<<"$out" || die "version does not report commit $COMMIT"
grep -qx "  built   $BUILD_DATE" <<<"$out" || die "version does not report build date $BUILD_DATE"
say "ok: the image reports commit $COMMIT built $BUILD_DATE"
