#!/usr/bin/env bash
# Build the Go oracle (the real upstream kube-scheduler, see go.mod) into bin/oracle.
# Needs only Go and the module proxy; the first build downloads the modules and
# compiles a large part of k8s.io/kubernetes, so it takes minutes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
go build -o bin/oracle .
