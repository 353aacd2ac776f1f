#!/usr/bin/env bash
# Build the real descheduler (sigs.k8s.io/descheduler, the release go.mod here requires) for
# benchmarks/rebalance_vs_descheduler.py. Its own go.mod has a replace directive, so
# `go install` refuses; go.mod here requires it as a `tool` and repeats that replace line.
#
# Output: ${TOPOSPREAD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/topospread}/descheduler/
#         <version>/descheduler   (the binary's path on the last line of stdout)
# Nothing is built when the binary there already reports the pinned version.
#
#   bash benchmarks/descheduler/build.sh          build if needed
#   bash benchmarks/descheduler/build.sh --force  rebuild
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=0
case "${1:-}" in
  --force) force=1 ;;
  "") ;;
  *) echo "usage: $0 [--force]" >&2; exit 2 ;;
esac
version="$(sed -n 's/^require sigs\.k8s\.io\/descheduler \(v[^[:space:]]*\).*$/\1/p' "$here/go.mod")"
if [ -z "$version" ]; then
  echo "benchmarks/descheduler/build.sh: cannot read the descheduler version from go.mod" >&2
  exit 1
fi
cache_root="${TOPOSPREAD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/topospread}"
out="$cache_root/descheduler/$version"

up_to_date() {
  [ -x "$out/descheduler" ] && "$out/descheduler" version 2>/dev/null | grep -q "GitVersion:v[0-9]\{8\}-$version "
}
if [ "$force" = 0 ] && up_to_date; then
  echo "$out/descheduler"
  exit 0
fi
command -v go >/dev/null 2>&1 || { echo "benchmarks/descheduler/build.sh: go not found" >&2; exit 1; }
mkdir -p "$cache_root/descheduler"
# A throw-away build cache (the descheduler links client-go and the scheduler framework:
# a few GB of objects that should not stay in the user's GOCACHE).
work="$(mktemp -d "$cache_root/descheduler/.build.XXXXXX")"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOCACHE="$work/gocache" CGO_ENABLED=0
# The version the binary reports (`descheduler version`) in the form the project's Makefile
# gives it, v<date>-<tag> (its version check parses the minor release out of that form;
# a bare tag leaves it empty), dated when the release was published on the module proxy.
date_stamp="$(cd "$here" && go list -m -f '{{.Time.UTC.Format "20060102"}}' sigs.k8s.io/descheduler)"
ldflags="-s -w -X sigs.k8s.io/descheduler/pkg/version.version=v$date_stamp-$version"
started=$SECONDS
echo "benchmarks/descheduler/build.sh: building descheduler $version into $out" >&2
(cd "$here" && go build -mod=readonly -trimpath -ldflags "$ldflags" -o "$work/descheduler" \
  sigs.k8s.io/descheduler/cmd/descheduler)
mkdir -p "$out"
mv "$work/descheduler" "$out/descheduler"
if ! up_to_date; then
  echo "benchmarks/descheduler/build.sh: the binary does not report $version" >&2
  exit 1
fi
echo "benchmarks/descheduler/build.sh: built in $((SECONDS - started)) s" >&2
echo "$out/descheduler"
