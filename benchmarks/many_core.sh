#!/usr/bin/env bash
# Issue 24's many-core measurements in one command, for a host lent for a few minutes:
# the loop beside Go at parallelism 16 (GOMAXPROCS = the host's cores), then end to end at
# 5,000 Nodes with 5,000 pods (both schedulers twice, then topospread with 0 and 2 write
# processes once each, and once with --cpu-affinity off) and with 50,000 pods (once each).
# About 10 minutes on 16 cores.
#
#   benchmarks/many_core.sh OUTDIR [LARGE_TIMEOUT_SECONDS]
#
# The oracle is $TOPOSPREAD_ORACLE or oracle/bin/oracle; the control plane's binaries are
# $TOPOSPREAD_CONTROLPLANE_BIN or the version-keyed build cache. Each step writes its
# output to OUTDIR as it goes, so a run cut short keeps what it measured. SMALL, LARGE
# (NODESxPODS) and POD_SCALE change the sizes, for a quick try on a small machine.
set -u
out=${1:?usage: benchmarks/many_core.sh OUTDIR [LARGE_TIMEOUT_SECONDS]}
large_timeout=${2:-300}
small=${SMALL:-5000x5000}
large=${LARGE:-5000x50000}
pod_scale=${POD_SCALE:-0.2}
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONUNBUFFERED=1
began=$(date +%s)
step() { echo "== $1 after $(($(date +%s) - began)) s"; }
{
  echo "host: $(nproc) cores; $(lscpu | sed -n 's/^Model name: *//p' | head -1); $(python3 --version)"
  git describe --always --dirty 2>/dev/null || echo "code: not a git checkout"
} | tee "$out/host.txt"
step "loop"
python3 benchmarks/run.py --pod-scale "$pod_scale" --parallelism 16 --output "$out/loop-p16.md" \
  > "$out/loop-p16.log" 2>&1
step "$small"
python3 benchmarks/scheduler_e2e.py --sizes "$small" --write-processes 1 --repeat 2 \
  --timeout 60 --no-write 2>&1 | tee "$out/e2e-small.log"
step "$large, topospread"
python3 benchmarks/scheduler_e2e.py --sizes "$large" --only topospread --write-processes 1 \
  --timeout "$large_timeout" --no-write 2>&1 | tee "$out/e2e-large-topospread.log"
step "$large, kube-scheduler"
python3 benchmarks/scheduler_e2e.py --sizes "$large" --only kube-scheduler \
  --timeout "$large_timeout" --no-write 2>&1 | tee "$out/e2e-large-kube-scheduler.log"
step "$small, 0 and 2 write processes"
python3 benchmarks/scheduler_e2e.py --sizes "$small" --only topospread --write-processes 0 2 \
  --timeout 60 --no-write 2>&1 | tee "$out/e2e-small-write-processes.log"
step "$small, cpu affinity off (the kernel places every thread)"
python3 benchmarks/scheduler_e2e.py --sizes "$small" --only topospread --cpu-affinity off \
  --timeout 60 --no-write 2>&1 | tee "$out/e2e-small-affinity-off.log"
step "done"
