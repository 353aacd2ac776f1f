#!/usr/bin/env bash
# Installs topospread with its CLI, test and lint dependencies, and builds the Go oracle
# (upstream kube-scheduler, from the Go module proxy) that the differential tests use.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[cli,test,lint]'
if [ -f oracle/build.sh ]; then
  if command -v go >/dev/null 2>&1; then
    bash oracle/build.sh
  else
    echo "setup: go not found; the differential tests against upstream will be skipped" >&2
  fi
fi
