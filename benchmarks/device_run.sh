#!/usr/bin/env bash
# Issue 24's runs on a lent many-core host with no network, from what
# benchmarks/device_pack.sh packed into .devbundle/ (the call carries it; see there):
#   benchmarks/device_run.sh e2e    scheduler_e2e.py at 5,000 x 5,000 (both schedulers,
#                                   twice, and topospread twice without its watch
#                                   process), then 5,000 x 50,000 (each once)
#   benchmarks/device_run.sh small  the 5,000 x 5,000 part of e2e alone
#   benchmarks/device_run.sh large  the 5,000 x 50,000 part of e2e alone
#   benchmarks/device_run.sh loop   run.py --parallelism 16 (Go's 16 workers beside the loop)
# Each step writes to $OUT as it goes; BUDGET (seconds, default 570) bounds the whole run,
# so a run cut short keeps what it measured. SMALL, LARGE (NODESxPODS) and POD_SCALE change
# the sizes, SITE_TAR the packed dependencies (a try on this machine needs its own).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=${1:?usage: benchmarks/device_run.sh e2e|small|large|loop}
began=$(date +%s)
log=${OUT:?set OUT to the folder the results go to (the device tool sets it)}/log.txt
deadline=$((began + ${BUDGET:-570}))
# left N: N seconds, or what is left before the deadline less a margin, whichever is less.
left() { local rest=$((deadline - $(date +%s) - 5)); [ "$rest" -lt "$1" ] && echo $((rest > 1 ? rest : 1)) || echo "$1"; }
step() { echo "== $1 after $(($(date +%s) - began)) s" | tee -a "$log"; }
mkdir -p /tmp/site "$OUT"
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall("/tmp/site")' "${SITE_TAR:-.devbundle/site.tar.xz}" >>"$log" 2>&1 || { echo unpack failed; cat "$log"; exit 3; }
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 TOPOSPREAD_CONTROLPLANE_BIN=/tmp/bin
mkdir -p /tmp/bin
python3 - <<'PY' >>"$log" 2>&1 &
import lzma, os, pathlib, shutil
for p in pathlib.Path(".devbundle").glob("*/*.xz"):
    dst = pathlib.Path("/tmp/bin") / p.stem
    with lzma.open(p) as s, open(dst, "wb") as d:
        shutil.copyfileobj(s, d, 1 << 22)
    os.chmod(dst, 0o755)
PY
python3 -m compileall -q -j 0 /tmp/site src >/dev/null 2>&1
wait
# ControlPlane requires every pinned binary, but these runs start no controller manager and
# use no kubectl: stand-ins that fail keep them out of the 64 MiB a call may carry.
for stub in kube-controller-manager kubectl; do printf '#!/bin/sh\nexit 1\n' >/tmp/bin/$stub; chmod +x /tmp/bin/$stub; done
python3 -c "import topospread.cli, topospread.scheduler.app, pycurl, orjson, kubernetes.client" >>"$log" 2>&1 || { echo import failed; cat "$log"; exit 4; }
{
  echo "host: $(nproc) cores; $(lscpu | sed -n 's/^Model name: *//p' | head -1); $(python3 --version); $(free -g | awk '/Mem:/{print $2}') GiB"
  cat .devbundle/commit.txt
  ls -la /tmp/bin
} >>"$log" 2>&1
step "setup done"
if [ "$mode" = loop ]; then
timeout $(left 150) python3 benchmarks/run.py --pod-scale ${POD_SCALE:-0.2} --parallelism 16 --oracle /tmp/bin/oracle \
  --output "$OUT/loop-p16.md" >"$OUT/loop.log" 2>&1; echo "loop rc=$?" >>"$log"
step "loop done"
exit 0
fi
if [ "$mode" != large ]; then
timeout $(left 240) python3 benchmarks/scheduler_e2e.py --sizes ${SMALL:-5000x5000} --repeat 2 --timeout 60 --no-write --no-watch-process \
  >"$OUT/e2e-small.log" 2>&1; echo "small rc=$?" >>"$log"
step "5000x5000 done"
[ "$mode" = small ] && exit 0
fi
timeout $(left 170) python3 benchmarks/scheduler_e2e.py --sizes ${LARGE:-5000x50000} --only topospread --timeout 120 --no-write \
  >"$OUT/e2e-large-topospread.log" 2>&1; echo "large topospread rc=$?" >>"$log"
step "5000x50000 topospread done"
timeout $(left 250) python3 benchmarks/scheduler_e2e.py --sizes ${LARGE:-5000x50000} --only kube-scheduler --timeout 200 --no-write \
  >"$OUT/e2e-large-kube-scheduler.log" 2>&1; echo "large kube-scheduler rc=$?" >>"$log"
step "all done"
