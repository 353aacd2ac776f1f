#!/usr/bin/env bash
# The full test suite: static checks, then every test (the differential run included).
set -euo pipefail
cd "$(dirname "$0")/.."
ruff check src tests
mypy
lint-imports
if command -v go >/dev/null 2>&1; then
  (cd oracle && go vet ./... && go test ./...)
fi
python3 -m pytest "$@"
