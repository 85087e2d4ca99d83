#!/bin/sh
# Captures the CPU-sharing traces of traces/cpushare/ (docs/model.md 2.3, "CPU time from the
# trace"): DDP over gloo with R ranks on this machine's cores, each run repeated, retried when
# other processes used more than 12% of the machine's CPU during it (meta.json's other_cpu_s).
#   sh traces/cpushare/capture.sh KIND R REPEAT...     KIND = sleep | cpu
#   PIN=1 sh traces/cpushare/capture.sh KIND R REPEAT...  the same pinned to CPU 1 (taskset -c 1):
#        one core, folders KIND_ddpR_1core_rN (the trace's cores column says 1)
#   PIN=ranks sh traces/cpushare/capture.sh KIND R REPEAT...  each rank and its workers on one
#        core, rank % cores (train_example.py --pin-ranks), folders KIND_ddpR_pinned_rN
#   CPUS=LIST TAG=T sh traces/cpushare/capture.sh ...  the same on the cores LIST (taskset -c LIST),
#        folders KIND_ddpR_T_rN (traces/gpu/device.sh: 2 of the GPU machine's 16 cores)
#   PY=PYTHON: the interpreter that has torch (default /usr/bin/python3, Debian's)
#   QUIET=CMD: a command prefix that holds other work off while it runs (the earlier captures
#        used one); train_example.py's --wait-idle waits for an idle machine first either way
# sleep: 2 workers, prefetch 2, 16 samples x 5 ms sleep per batch (80 ms), no transform work,
#        25 ms sleep after each backward (accelerator time); cpu: the same with 1 ms sleep and
#        60 transform repetitions per sample (about 2 ms of worker CPU work). 80 batches x 2 epochs per rank.
set -e
kind=$1; r=$2; shift 2
cd "$(dirname "$0")/../.."
case $kind in
sleep) work="--io-ms 5 --cpu-reps 0" ;;
cpu) work="--io-ms 1 --cpu-reps 60" ;;
*) echo "KIND: sleep or cpu" >&2; exit 2 ;;
esac
pin=; sfx=
[ "${PIN:-}" = 1 ] && pin="taskset -c 1" && sfx=_1core
pinr=
[ "${PIN:-}" = ranks ] && pinr=--pin-ranks && sfx=_pinned
[ -n "${CPUS:-}" ] && pin="taskset -c $CPUS"
[ -n "${TAG:-}" ] && sfx=_$TAG
py=${PY:-/usr/bin/python3}
for rep in "$@"; do
  out=traces/cpushare/${kind}_ddp${r}${sfx}_r$rep
  ddp="--ddp $r"
  [ "$r" = 1 ] && ddp="--ddp 1"
  for try in 1 2 3; do
    ${QUIET:-} $pin $py tools/train_example.py $ddp --workers 2 --prefetch 2 $work $pinr \
      --compute-sleep-ms 25 --batches 80 --epochs 2 --port 29621 --wait-idle 20 --out "$out" \
      | tail -4
    ok=$($py -c "import json,sys; m=json.load(open('$out/meta.json')); \
print(int(m['other_cpu_s'] < 0.12 * m['wall_s'] * m['cpu_cores']))")
    [ "$ok" = 1 ] && break
    echo "$out: polluted (try $try), again"
  done
done
