#!/usr/bin/env bash
# Installs topospread with its CLI, test and lint dependencies, and builds the Go oracle
# (upstream kube-scheduler, from the Go module proxy) that the differential tests use and
# the control plane (upstream etcd and Kubernetes servers, likewise) that the live tests use.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[cli,test,lint,ray]'
# The example plugin from outside the package (examples/plugins/ratio-spread): its entry
# point is what tests/plugins/test_registry.py and the example's own tests load.
python3 -m pip install --quiet --disable-pip-version-check --no-deps -e examples/plugins/ratio-spread
# Headless chromium for the HTML report's browser test (tests/cli/test_simulate_html.py).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null; then
      echo "setup: could not install chromium with apt; the browser test cannot run" >&2
    fi
  else
    echo "setup: chromium not installed (needs root and apt-get); the browser test cannot run" >&2
  fi
fi
if [ -f oracle/build.sh ]; then
  if command -v go >/dev/null 2>&1; then
    bash oracle/build.sh
  else
    echo "setup: go not found; the differential tests against upstream will be skipped" >&2
  fi
fi
# The live tests' control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler at the oracle's Kubernetes release), into a version-keyed cache outside the
# repository; a no-op when the cached binaries already report the pinned versions.
if [ -f controlplane/build.sh ]; then
  if command -v go >/dev/null 2>&1; then
    bash controlplane/build.sh >/dev/null
  else
    echo "setup: go not found; the live tests against a real control plane will be skipped" >&2
  fi
fi
# The autoscaling live tests' autoscaler (KWOK's controller and Karpenter's KWOK provider at
# the releases autoscaler/*/go.mod pin, with their CRDs, instance types and Stages), into
# the same cache; a no-op when the cached binaries report the pinned versions. About 4
# minutes cold on 2 cores, downloads included.
if [ -f autoscaler/build.sh ]; then
  if command -v go >/dev/null 2>&1; then
    bash autoscaler/build.sh >/dev/null
  else
    echo "setup: go not found; the live tests against Karpenter will be skipped" >&2
  fi
fi
