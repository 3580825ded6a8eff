#!/usr/bin/env bash
# Stop 62: the rest of the five-benchmark MiniLM table (stop 61's tb_* runs; MMLU/OpenBookQA lt50 of stop 59),
# TodyComm and Complete, seeds 0-2, re-scored on each run's own test episodes with eval.draws=4, two at a time,
# from /work/wt62b (d3fcb6d). Starts when pooled.sh is done.
set -u
cd /work/main
while ! grep -q done outputs/s62/pooled.out; do sleep 20; done
ev() {  # method bench attack seed
  local ck=""
  if [ "$1" = todycomm ]; then
    case $2 in mmlu|openbookqa) ck=/work/main/outputs/s59/tg01_$2_$3_s$4 ;; *) ck=/work/main/outputs/s61/tb_$2_$3_s$4 ;; esac
    ck="checkpoint=$ck/checkpoint.pt"
  fi
  local o=/work/main/outputs/s62/pool_$1_$2_$3_s$4
  [ -s $o/results.json ] && return 0
  PYTHONPATH=/work/wt62b TOMACS_DATA=/work/shared/data /work/main/.venv/bin/python -P \
    -c 'from tomacs.cli import main; main()' evaluate method=$1 benchmark=$2 attack=$3 seed=$4 eval.draws=4 \
    $ck hydra.run.dir=$o > $o.log 2>&1
}
export -f ev
for cell in "mmlu lt50" "openbookqa lt50" "arc_c lt50" "arc_c eq50" "arc_c gt50" "gsm8k lt50" "gsm8k eq50" \
  "gsm8k gt50" "medqa lt50" "medqa eq50" "medqa gt50"; do
  for s in 0 1 2; do echo "todycomm $cell $s"; echo "complete $cell $s"; done
done | xargs -P 2 -L 1 bash -c 'ev $0 $1 $2 $3'
echo done
