#!/usr/bin/env bash
# The full test suite: static checks, then every test (the differential run included).
set -euo pipefail
cd "$(dirname "$0")/.."
ruff check src tests
mypy
lint-imports
python3 -m pytest "$@"
