#!/usr/bin/env bash
# Stop 61: the paper's step at the same budget (method.decision_credit=episode: 1 step per batch, gamma 0.9,
# train=paper, MiniLM) on GSM8K and MedQA, eq50/gt50, seeds 0-1, beside table.sh's default runs: the
# estimator's choices on two benchmarks none of them was tuned or checked on. Runs after paired.sh, from /work/wt61.
set -u
cd /work/main
while pgrep -f "scripts/oneoff/s61/(table|paired).sh" > /dev/null; do sleep 20; done
job() {  # bench attack seed
  local R=/work/main/outputs/s61/ps_$1_$2_s$3
  [ -s $R/results.json ] && return 0
  PYTHONPATH=/work/wt61 TOMACS_DATA=/work/shared/data /work/main/.venv/bin/python -P \
    -c 'from tomacs.cli import main; main()' train method=todycomm method.decision_credit=episode benchmark=$1 \
    attack=$2 seed=$3 hydra.run.dir=$R > $R.log 2>&1
}
export -f job
for s in 0 1; do for a in gt50 eq50; do for b in gsm8k medqa; do echo "$b $a $s"; done; done; done \
  | xargs -P 2 -L 1 bash -c 'job $0 $1 $2'
echo done
