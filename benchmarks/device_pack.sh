#!/usr/bin/env bash
# Packs what benchmarks/device_run.sh needs on a lent many-core host that has no network
# into .devbundle/ (ignored through .git/info/exclude), built from this machine's caches:
#   site.tar.xz        the runtime dependencies the host's CPython 3.12 lacks, from cp312
#                      wheels at the versions installed here, unpacked (kubernetes' unused
#                      asyncio client left out: 41 of its 75 MB)
#   e2e/*.xz           etcd, kube-apiserver, kube-scheduler (controlplane/build.sh's cache)
#   loop/oracle.xz     the oracle, stripped
# One call may carry 64 MiB with the working tree, so the two modes carry apart:
#   e2e:  [".devbundle/e2e", ".devbundle/site.tar.xz", ".devbundle/commit.txt"]
#   loop: [".devbundle/loop", ".devbundle/site.tar.xz", ".devbundle/commit.txt"]
# About 5 minutes on 2 cores (xz -9). Needs the oracle and control plane built.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=.devbundle
exclude=$(git rev-parse --git-path info/exclude)
grep -qxF /.devbundle/ "$exclude" 2>/dev/null || echo /.devbundle/ >>"$exclude"
binaries=$(bash controlplane/build.sh --dir)
for b in etcd kube-apiserver kube-scheduler; do
  [ -x "$binaries/$b" ] || { echo "device_pack.sh: no $binaries/$b; run controlplane/build.sh" >&2; exit 1; }
done
[ -x oracle/bin/oracle ] || { echo "device_pack.sh: no oracle/bin/oracle; run oracle/build.sh" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out" && mkdir -p "$out/e2e" "$out/loop" "$work/wheels" "$work/site"
# What the host's image lacks (its numpy, PyYAML, click, rich, prometheus-client, requests,
# urllib3, aiohttp and typing-extensions serve).
packages="kubernetes pydantic pydantic-core annotated-types typing-inspection durationpy oauthlib
  requests-oauthlib websocket-client blinker aiohttp-retry orjson pycurl"
pins=()
for p in $packages; do
  version=$(python3 -m pip show "$p" 2>/dev/null | sed -n 's/^Version: //p')
  [ -n "$version" ] || { echo "device_pack.sh: $p is not installed here" >&2; exit 1; }
  pins+=("$p==$version")
done
platforms=()
for p in manylinux_2_34 manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014 manylinux1; do
  platforms+=(--platform "${p}_x86_64")
done
python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation cp "${platforms[@]}" -d "$work/wheels" "${pins[@]}"
for wheel in "$work"/wheels/*.whl; do
  python3 -m zipfile -e "$wheel" "$work/site"
done
rm -rf "$work/site/kubernetes/aio"
tar -C "$work/site" -cf - . | xz -T0 -9 >"$out/site.tar.xz"
for b in etcd kube-apiserver kube-scheduler; do
  xz -T0 -9 -c "$binaries/$b" >"$out/e2e/$b.xz"
done
strip -o "$work/oracle" oracle/bin/oracle
xz -T0 -9 -c "$work/oracle" >"$out/loop/oracle.xz"
git describe --always --dirty >"$out/commit.txt"
du -sh "$out"/* "$out"/*/*
