#!/bin/sh
# Issue 20's CPU-bound job (capture.sh cpu) at 2, 8 and 4 ranks on 2 of a lent GPU machine's 16
# cores (taskset -c 0,1; folders cpu_ddpR_dev2c_rN), ROUNDS rounds, each folder appended to
# OUT/traces.tar as soon as it is written (a run cut short keeps what it finished). Session 20:
# the sleep-like job's quiet-machine captures (device.sh, session 15) have no CPU-bound peer.
#   sh traces/cpushare/device_cpu.sh OUT ROUNDS
set -u
OUT=$1
rounds=${2:-2}
cd "$(dirname "$0")/../.."
PY=${PY:-python3}
export PY
{ $PY -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])'
  nproc; uname -r; lscpu | grep -i "model name"; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
keep() { tar -rf "$OUT/traces.tar" "$@"; }
rep=1
while [ $rep -le "$rounds" ]; do
  for r in 2 8 4; do
    start=$(date +%s)
    CPUS=0,1 TAG=dev2c timeout 170 sh traces/cpushare/capture.sh cpu $r $rep \
      && keep traces/cpushare/cpu_ddp${r}_dev2c_r$rep
    echo "cpu_ddp${r}_dev2c_r$rep: $(( $(date +%s) - start )) s"
  done
  rep=$((rep + 1))
done
echo done
