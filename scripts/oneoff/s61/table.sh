#!/usr/bin/env bash
# Stop 61: TodyComm's defaults (MiniLM, train=paper, gamma 0.1) on the three benchmarks of Table 2 that the
# MiniLM table has not covered at these defaults (ARC-C, GSM8K, MedQA), lt50/eq50/gt50, seeds 0-2, two jobs at a
# time, from the frozen worktree /work/wt61. Each job's summary runs Complete on its own test episodes.
set -u
OUT=/work/main/outputs/s61
cd /work/main
job() {  # bench attack seed
  local R=$OUT/tb_$1_$2_s$3
  [ -s $R/results.json ] && return 0
  PYTHONPATH=/work/wt61 TOMACS_DATA=/work/shared/data /work/main/.venv/bin/python -P \
    -c 'from tomacs.cli import main; main()' train method=todycomm benchmark=$1 attack=$2 seed=$3 \
    hydra.run.dir=$R > $R.log 2>&1
}
export -f job; export OUT
for s in 0 1 2; do for a in gt50 eq50 lt50; do for b in gsm8k medqa arc_c; do echo "$b $a $s"; done; done; done \
  | xargs -P 2 -L 1 bash -c 'job $0 $1 $2'
echo done
