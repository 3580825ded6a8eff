#!/usr/bin/env bash
# Stop 61: each gt50 seed-0 policy (MMLU, OpenBookQA, ARC-C) scored on eval seed 0's adversary plans with four
# other draws of the simulated agents (simdraws.py, offsets 1-4), two at a time, from /work/wt61.
set -u
cd /work/main
ev() {  # bench run offset
  local o=/work/main/outputs/s61/sd_$1_gt50_o$3
  [ -s $o/results.json ] && return 0
  TOMACS_SIM_OFFSET=$3 PYTHONPATH=/work/wt61 TOMACS_DATA=/work/shared/data /work/main/.venv/bin/python -P \
    /work/main/scripts/oneoff/s61/simdraws.py evaluate method=todycomm benchmark=$1 attack=gt50 seed=0 eval.seed=0 \
    checkpoint=$2/checkpoint.pt hydra.run.dir=$o > $o.log 2>&1
}
export -f ev
for k in 1 2 3 4; do
  echo "mmlu /work/main/outputs/s59/tg01_mmlu_gt50_s0 $k"
  echo "openbookqa /work/main/outputs/s59/tg01_openbookqa_gt50_s0 $k"
  echo "arc_c /work/main/outputs/s61/tb_arc_c_gt50_s0 $k"
done | xargs -P 2 -L 1 bash -c 'ev $0 $1 $2'
echo done
