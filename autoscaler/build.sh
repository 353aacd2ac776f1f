#!/usr/bin/env bash
# Build the autoscaler of the live autoscaling tests: KWOK's controller (fake kubelets) and
# Karpenter with its KWOK cloud provider, from the Go module proxy, at the releases that
# autoscaler/kwok/go.mod and autoscaler/karpenter/go.mod require (the one pin of each; each
# binary is a `tool` of its own scratch module, because both main packages are named kwok).
# Beside the binaries go the files the tests read from the same releases: Karpenter's CRDs
# and the KWOK provider's instance types, and KWOK's node and pod Stages.
#
# Output: ${TOPOSPREAD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/topospread}/autoscaler/
#         kwok-<version>-karpenter-<version>/   (printed on the last line of stdout)
# Nothing is built when the binaries there already report the pinned versions.
#
#   bash autoscaler/build.sh           build if needed
#   bash autoscaler/build.sh --force   rebuild
#   bash autoscaler/build.sh --dir     print the output directory only
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=0
case "${1:-}" in
  --force) force=1 ;;
  --dir | "") ;;
  *) echo "usage: $0 [--force | --dir]" >&2; exit 2 ;;
esac

# Read the versions with sed rather than `go list`, so that `--dir` works without Go. Each
# pin is the requirement line of the upstream module in its scratch module's go.mod.
requirement() { sed -n "s/^[[:space:]]*$1 \(v[^[:space:]]*\)\( \/\/ indirect\)\{0,1\}$/\1/p" "$2"; }
kwok_version="$(requirement 'sigs\.k8s\.io\/kwok' "$here/kwok/go.mod")"
karpenter_version="$(requirement 'sigs\.k8s\.io\/karpenter' "$here/karpenter/go.mod")"
if [ -z "$kwok_version" ] || [ -z "$karpenter_version" ]; then
  echo "autoscaler/build.sh: cannot read the pinned versions from autoscaler/kwok/go.mod and autoscaler/karpenter/go.mod" >&2
  exit 1
fi
cache_root="${TOPOSPREAD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/topospread}"
out="$cache_root/autoscaler/kwok-$kwok_version-karpenter-$karpenter_version"
if [ "${1:-}" = "--dir" ]; then
  echo "$out"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "autoscaler/build.sh: go not found; cannot build KWOK and Karpenter" >&2
  exit 1
fi
# A module whose go line is newer than the local Go (Karpenter v1.15.0 says go 1.26.9) is
# built with that toolchain, which Go fetches through the module proxy; an older go line
# keeps the local Go. GOTOOLCHAIN=local (a common `go env -w`) would refuse instead.
export GOTOOLCHAIN=auto

# The files taken from the module cache, relative to each module's root.
crds=(
  kwok/charts/crds/karpenter.sh_nodepools.yaml
  kwok/charts/crds/karpenter.sh_nodeclaims.yaml
  kwok/charts/crds/karpenter.sh_nodeoverlays.yaml
  kwok/charts/crds/autoscaling.x-k8s.io_capacitybuffers.yaml
  # The KWOKNodeClass CRD is not among the chart's CRDs; it lives beside its Go types.
  kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml
)
instance_types=kwok/cloudprovider/instance_types.json
# KWOK's "fast" Stage set (kustomize/stage/fast): Nodes Ready at once with Lease
# heartbeats, pods Running at once, completed and deleted pods finished.
stages=(
  kustomize/stage/node/fast/node-initialize.yaml
  kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
  kustomize/stage/pod/fast/pod-ready.yaml
  kustomize/stage/pod/fast/pod-complete.yaml
  kustomize/stage/pod/fast/pod-delete.yaml
)

# The version a binary was built from, from its embedded build information (kept by
# -s -w): the module its main package came from.
built_version() { go version -m "$1" 2>/dev/null | awk -v m="$2" '($1 == "mod" || $1 == "dep") && $2 == m { print $3 }'; }

up_to_date() {
  [ -x "$out/kwok" ] && [ -x "$out/karpenter-kwok" ] || return 1
  # kwok reports its release itself; Karpenter has no version flag.
  [[ "$("$out/kwok" --version 2>/dev/null)" == "kwok version $kwok_version "* ]] || return 1
  [ "$(built_version "$out/kwok" sigs.k8s.io/kwok)" = "$kwok_version" ] || return 1
  [ "$(built_version "$out/karpenter-kwok" sigs.k8s.io/karpenter)" = "$karpenter_version" ] || return 1
  local f
  for f in "${crds[@]}"; do [ -s "$out/crds/$(basename "$f")" ] || return 1; done
  for f in "${stages[@]}"; do [ -s "$out/stages/$(basename "$f")" ] || return 1; done
  [ -s "$out/instance_types.json" ]
}

if [ "$force" = 0 ] && up_to_date; then
  echo "$out"
  exit 0
fi

mkdir -p "$cache_root/autoscaler"
# One build at a time per cache (setup.sh and a developer may start one together).
exec 9>"$cache_root/autoscaler/.build.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
  if [ "$force" = 0 ] && up_to_date; then
    echo "$out"
    exit 0
  fi
fi

# A throw-away build cache, deleted afterwards; the output goes to a fresh directory that
# replaces $out only when everything is in it, so an interrupted build leaves no half.
work="$(mktemp -d "$cache_root/autoscaler/.build.XXXXXX")"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOCACHE="$work/gocache"
export CGO_ENABLED=0

started=$SECONDS
echo "autoscaler/build.sh: building KWOK $kwok_version and Karpenter $karpenter_version into $out (minutes on a cold cache)" >&2
mkdir -p "$work/out/crds" "$work/out/stages"
# kwok's version variables are constants of the release (pkg/consts), so no -X is needed.
(cd "$here/kwok" && go build -mod=readonly -trimpath -ldflags "-s -w" -o "$work/out/kwok" \
  sigs.k8s.io/kwok/cmd/kwok)
# Karpenter's release builds set operator.Version; it is logged at start and sent as the
# client's user agent.
(cd "$here/karpenter" && go build -mod=readonly -trimpath \
  -ldflags "-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=$karpenter_version" \
  -o "$work/out/karpenter-kwok" sigs.k8s.io/karpenter/kwok)

# The files, read from the module cache (`go mod download` already fetched the modules the
# builds above needed; it prints where each is).
module_dir() { (cd "$1" && go mod download -json "$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p'); }
karpenter_dir="$(module_dir "$here/karpenter" "sigs.k8s.io/karpenter@$karpenter_version")"
kwok_dir="$(module_dir "$here/kwok" "sigs.k8s.io/kwok@$kwok_version")"
for f in "${crds[@]}"; do cp "$karpenter_dir/$f" "$work/out/crds/"; done
cp "$karpenter_dir/$instance_types" "$work/out/instance_types.json"
for f in "${stages[@]}"; do cp "$kwok_dir/$f" "$work/out/stages/"; done
chmod -R u+w "$work/out"

rm -rf "$out.old"
[ -d "$out" ] && mv "$out" "$out.old"
mv "$work/out" "$out"
rm -rf "$out.old"
if ! up_to_date; then
  echo "autoscaler/build.sh: the built binaries do not report KWOK $kwok_version / Karpenter $karpenter_version" >&2
  exit 1
fi
echo "autoscaler/build.sh: built in $((SECONDS - started)) s" >&2
echo "$out"
