#!/usr/bin/env bash
# Stop 61: every seed-1 and seed-2 policy of table.sh scored on evaluation seed 0's test episodes (seed 0's own),
# so that the seed std can be read with the evaluation's draw held fixed (paired), from /work/wt61.
set -u
cd /work/main
while pgrep -f "scripts/oneoff/s61/table.sh" > /dev/null; do sleep 20; done
ev() {  # bench attack seed
  local o=/work/main/outputs/s61/pe_$1_$2_s$3
  [ -s $o/results.json ] && return 0
  PYTHONPATH=/work/wt61 TOMACS_DATA=/work/shared/data /work/main/.venv/bin/python -P \
    -c 'from tomacs.cli import main; main()' evaluate method=todycomm benchmark=$1 attack=$2 seed=$3 eval.seed=0 \
    checkpoint=/work/main/outputs/s61/tb_$1_$2_s$3/checkpoint.pt hydra.run.dir=$o > $o.log 2>&1
}
export -f ev
for s in 1 2; do for a in gt50 eq50 lt50; do for b in gsm8k medqa arc_c; do echo "$b $a $s"; done; done; done \
  | xargs -P 2 -L 1 bash -c 'ev $0 $1 $2'
echo done
