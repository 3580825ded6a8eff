#!/usr/bin/env bash
# Stop 62: each MMLU/OpenBookQA eq50/gt50 TodyComm policy (seeds 0-5) and Complete, scored on the run's own
# test episodes (its seed's plans, no eval.seed) with eval.draws=4, two at a time, from /work/wt62b (d3fcb6d).
set -u
cd /work/main
while ! grep -q done outputs/s62/draws.out; do sleep 20; done
ev() {  # method bench attack seed
  local src=/work/main/outputs/s59 ck=""
  [ "$4" -ge 3 ] && src=/work/main/outputs/s60
  [ "$1" = todycomm ] && ck="checkpoint=$src/tg01_$2_$3_s$4/checkpoint.pt"
  local o=/work/main/outputs/s62/pool_$1_$2_$3_s$4
  [ -s $o/results.json ] && return 0
  PYTHONPATH=/work/wt62b TOMACS_DATA=/work/shared/data /work/main/.venv/bin/python -P \
    -c 'from tomacs.cli import main; main()' evaluate method=$1 benchmark=$2 attack=$3 seed=$4 eval.draws=4 \
    $ck hydra.run.dir=$o > $o.log 2>&1
}
export -f ev
for cell in "mmlu gt50" "openbookqa gt50" "openbookqa eq50" "mmlu eq50"; do
  for s in 0 1 2 3 4 5; do echo "todycomm $cell $s"; echo "complete $cell $s"; done
done | xargs -P 2 -L 1 bash -c 'ev $0 $1 $2 $3'
echo done
