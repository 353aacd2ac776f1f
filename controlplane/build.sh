#!/usr/bin/env bash
# Build the control plane of the live tests: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kubectl, from the Go module proxy, at the Kubernetes release oracle/go.mod
# pins (the one pin; the kube binaries are `tool`s of that module) and the etcd release
# controlplane/etcd/go.mod requires (a test keeps it equal to what that Kubernetes pins).
#
# Output: ${TOPOSPREAD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/topospread}/controlplane/
#         k8s-<version>-etcd-<version>/   (printed on the last line of stdout)
# Nothing is built when the binaries there already report the pinned versions.
#
#   bash controlplane/build.sh           build if needed
#   bash controlplane/build.sh --force   rebuild
#   bash controlplane/build.sh --dir     print the output directory only
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
oracle="$here/../oracle"
force=0
case "${1:-}" in
  --force) force=1 ;;
  --dir | "") ;;
  *) echo "usage: $0 [--force | --dir]" >&2; exit 2 ;;
esac

# Read the versions from the go.mod files with sed rather than `go list`, so that `--dir`
# and the up-to-date check work without Go. The Kubernetes line is a plain requirement
# (`k8s.io/kubernetes vX`); the etcd one is in controlplane/etcd/go.mod.
k8s_version="$(sed -n 's/^[[:space:]]*k8s\.io\/kubernetes \(v[^[:space:]]*\)$/\1/p' "$oracle/go.mod")"
etcd_version="$(sed -n 's/^\(require\)\{0,1\}[[:space:]]*go\.etcd\.io\/etcd\/server\/v3 \(v[^[:space:]]*\)$/\2/p' "$here/etcd/go.mod")"
# kubectl's module is k8s.io/kubectl v0.X.Y for Kubernetes v1.X.Y; its go.mod must follow
# the pin in oracle/go.mod.
kubectl_version="$(sed -n 's/^[[:space:]]*k8s\.io\/kubectl \(v[^[:space:]]*\)$/\1/p' "$here/kubectl/go.mod")"
if [ -n "$k8s_version" ] && [ "$kubectl_version" != "v0.${k8s_version#v1.}" ]; then
  echo "controlplane/build.sh: controlplane/kubectl/go.mod requires k8s.io/kubectl $kubectl_version; Kubernetes $k8s_version needs v0.${k8s_version#v1.}" >&2
  exit 1
fi
if [ -z "$k8s_version" ] || [ -z "$etcd_version" ]; then
  echo "controlplane/build.sh: cannot read the pinned versions from oracle/go.mod and controlplane/etcd/go.mod" >&2
  exit 1
fi
cache_root="${TOPOSPREAD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/topospread}"
out="$cache_root/controlplane/k8s-$k8s_version-etcd-$etcd_version"
if [ "${1:-}" = "--dir" ]; then
  echo "$out"
  exit 0
fi

kube_binaries=(kube-apiserver kube-controller-manager kube-scheduler)

# reports COMMAND... LINE: the command succeeds and prints LINE. Its output is captured
# first: `cmd | grep -q` under pipefail fails when grep closes the pipe before cmd is done.
reports() {
  local reported
  reported="$("${@:1:$#-1}" 2>/dev/null)" || return 1
  grep -qxF -- "${!#}" <<<"$reported"
}

core_up_to_date() {
  local b
  for b in "${kube_binaries[@]}"; do
    [ -x "$out/$b" ] || return 1
    [ "$("$out/$b" --version 2>/dev/null)" = "Kubernetes $k8s_version" ] || return 1
  done
  [ -x "$out/etcd" ] || return 1
  reports "$out/etcd" --version "etcd Version: ${etcd_version#v}"
}

kubectl_up_to_date() {
  [ -x "$out/kubectl" ] || return 1
  reports "$out/kubectl" version --client "Client Version: $k8s_version"
}

up_to_date() {
  core_up_to_date && kubectl_up_to_date
}

if [ "$force" = 0 ] && up_to_date; then
  echo "$out"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "controlplane/build.sh: go not found; cannot build the control plane" >&2
  exit 1
fi

mkdir -p "$cache_root/controlplane"
# One build at a time per cache (setup.sh and a developer may start one together).
exec 9>"$cache_root/controlplane/.build.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
  if [ "$force" = 0 ] && up_to_date; then
    echo "$out"
    exit 0
  fi
fi

# A throw-away build cache: compiling these reaches several GB, which should not stay in
# the user's GOCACHE. The binaries go to a fresh directory that replaces $out only when
# all four are built, so an interrupted build never leaves a half-updated directory.
work="$(mktemp -d "$cache_root/controlplane/.build.XXXXXX")"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOCACHE="$work/gocache"
export CGO_ENABLED=0

# The version variables upstream's hack/lib/version.sh sets. The build date is the time the
# release was tagged (the module proxy's record of it), so that rebuilds are identical.
# No git commit is set: the module zip carries none.
build_date="$(cd "$oracle" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)"
minor="${k8s_version#v1.}"
minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=archive -X $pkg.buildDate=$build_date"
done

started=$SECONDS
echo "controlplane/build.sh: building Kubernetes $k8s_version and etcd $etcd_version into $out (minutes on a cold cache)" >&2
mkdir -p "$work/bin"
(cd "$here/kubectl" && go build -mod=readonly -trimpath -ldflags "$ldflags" -o "$work/bin/kubectl" .)
if core_up_to_date; then
  mv "$work/bin/kubectl" "$out/kubectl"
  kubectl_up_to_date || { echo "controlplane/build.sh: the built kubectl does not report $k8s_version" >&2; exit 1; }
  echo "controlplane/build.sh: built kubectl in $((SECONDS - started)) s" >&2
  echo "$out"
  exit 0
fi
(cd "$oracle" && go build -mod=readonly -trimpath -ldflags "$ldflags" -o "$work/bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler)
(cd "$here/etcd" && go build -mod=readonly -trimpath -ldflags "-s -w" -o "$work/bin/etcd" .)

rm -rf "$out.old"
[ -d "$out" ] && mv "$out" "$out.old"
mv "$work/bin" "$out"
rm -rf "$out.old"
if ! up_to_date; then
  echo "controlplane/build.sh: the built binaries do not report Kubernetes $k8s_version / etcd $etcd_version" >&2
  exit 1
fi
echo "controlplane/build.sh: built in $((SECONDS - started)) s" >&2
echo "$out"
