#!/bin/sh
# The captures made on a lent GPU machine (one NVIDIA H100, 16 cores, torch 2.11 + CUDA 13), in
# one run, each folder appended to OUT/traces.tar as soon as it is written (a run cut short keeps
# what it finished):
#   1. traces/gpu/h100_w1, _w2, _w4: w1/w2/w4's job (traces/README.md) trained on the GPU,
#      pin_memory on; h100_w2_wide: the same with a CNN of width 1024 (GPU compute comparable to
#      the fetch); tools/train_example.py --device cuda.
#   2. Kineto traces of torch 2.11: cuda_w2 (CPU + CUDA activities), w2_sched and ddp2_w2
#      (tools/make_kineto_fixtures.py) into OUT/kineto.tar.
#   3. issue 20's sleep job (traces/cpushare/capture.sh) at 2, 4 and 8 ranks on 2 of the
#      machine's cores (taskset -c 0,1; folders sleep_ddpR_dev2c_rN) and on all 16
#      (sleep_ddpR_dev16_r1).
#   sh traces/gpu/device.sh OUT
set -u
OUT=$1
cd "$(dirname "$0")/../.."
PY=${PY:-python3}
export PY
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $PY -c 'import torch, numpy, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "numpy", numpy.__version__, "python", sys.version.split()[0])'
  nproc; uname -r; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
keep() { tar -rf "$OUT/traces.tar" "$@"; }
C="--io-ms 3 --cpu-reps 24 --batch-size 16 --batches 60 --epochs 3"
for w in 1 2 4; do
  timeout 90 $PY tools/train_example.py --device cuda --pin-memory --workers $w $C \
    --out traces/gpu/h100_w$w | tail -5 && keep traces/gpu/h100_w$w
done
timeout 90 $PY tools/train_example.py --device cuda --pin-memory --workers 2 --width 1024 $C \
  --out traces/gpu/h100_w2_wide | tail -5 && keep traces/gpu/h100_w2_wide
timeout 90 $PY tools/make_kineto_fixtures.py /tmp/kineto cuda_w2 w2_sched ddp2_w2 | tail -5
tar -cf "$OUT/kineto.tar" -C /tmp kineto
for r in 2 8 4; do
  CPUS=0,1 TAG=dev2c timeout 120 sh traces/cpushare/capture.sh sleep $r 1 && keep traces/cpushare/sleep_ddp${r}_dev2c_r1
done
for r in 2 4 8; do
  TAG=dev16 timeout 90 sh traces/cpushare/capture.sh sleep $r 1 && keep traces/cpushare/sleep_ddp${r}_dev16_r1
done
for r in 2 8 4; do
  CPUS=0,1 TAG=dev2c timeout 120 sh traces/cpushare/capture.sh sleep $r 2 && keep traces/cpushare/sleep_ddp${r}_dev2c_r2
done
echo done
