#!/usr/bin/env bash
# The system tools some test suites start (etcd, prometheus/promtool, Go with sprig for the chart renderer,
# the official Kubernetes Python client for the client-compatibility suite, jq for docs/audit.md's queries,
# perl for the getsockopt that Node lacks in the TLS fronts' suite).
# Installs what is missing with apt when this is root on Debian; otherwise says in one line what to install.
# With CI set, a tool that is still missing is a failure, never a silent skip.
set -euo pipefail
gocode=/usr/share/gocode/src
# command-or-path:debian-package
needs=(
  "etcd:etcd-server"
  "etcdctl:etcd-client"
  "prometheus:prometheus"
  "promtool:prometheus"
  "go:golang-go"
  "$gocode/github.com/Masterminds/sprig:golang-github-masterminds-sprig-dev"
  "$gocode/sigs.k8s.io/yaml:golang-k8s-sigs-yaml-dev"
  "/usr/lib/python3/dist-packages/kubernetes:python3-kubernetes"
  "jq:jq"
  "perl:perl-base"
)
present() { if [[ $1 == /* ]]; then [[ -e $1 ]]; else command -v "$1" >/dev/null 2>&1; fi; }
missing() { local n; for n in "${needs[@]}"; do present "${n%%:*}" || echo "${n##*:}"; done | sort -u; }

pkgs=$(missing | tr '\n' ' ')
[[ -z $pkgs ]] && exit 0
if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "installing test tools: $pkgs"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  # shellcheck disable=SC2086
  apt-get install -y -qq $pkgs >/dev/null
  pkgs=$(missing | tr '\n' ' ')
  [[ -z $pkgs ]] && exit 0
fi
echo "some test suites need system tools: apt-get install -y $pkgs" >&2
[[ -n ${CI:-} ]] && exit 1
exit 0
