#!/usr/bin/env bash
# Stop 62: every MMLU/OpenBookQA eq50/gt50 TodyComm policy (seeds 0-5, stops 59-60) scored on eval seed 0's
# adversary plans with draws 1-3 of the simulated agents (backbone.draw), two at a time, from /work/wt62.
# Draw 0 is the paired evaluation already on disk (pe_* runs; the seed-0 training run itself).
set -u
cd /work/main
ev() {  # bench attack seed draw
  local src=/work/main/outputs/s59
  [ "$3" -ge 3 ] && src=/work/main/outputs/s60
  local o=/work/main/outputs/s62/dw_$1_$2_s$3_d$4
  [ -s $o/results.json ] && return 0
  PYTHONPATH=/work/wt62 TOMACS_DATA=/work/shared/data /work/main/.venv/bin/python -P \
    -c 'from tomacs.cli import main; main()' evaluate method=todycomm benchmark=$1 attack=$2 seed=$3 eval.seed=0 \
    backbone.draw=$4 checkpoint=$src/tg01_$1_$2_s$3/checkpoint.pt hydra.run.dir=$o > $o.log 2>&1
}
export -f ev
for cell in "mmlu gt50" "openbookqa gt50" "openbookqa eq50" "mmlu eq50"; do
  for d in 1 2 3; do
    for s in 0 1 2 3 4 5; do echo "$cell $s $d"; done
  done
done | xargs -P 2 -L 1 bash -c 'ev $0 $1 $2 $3'
echo done
