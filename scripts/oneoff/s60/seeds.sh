#!/bin/bash
# One-off (stop 60, issue 40): issue 40's target cells (MMLU, OpenBookQA x eq50, gt50) at TodyComm's defaults
# for seeds 3-5, beside stop 59's seeds 0-2 (outputs/s59/tg01_*), then every seed's last epoch scored on
# evaluation seed 0's episodes (paired), from a frozen copy of the code in /work/wt60.
cd "$(git rev-parse --show-toplevel)" || exit 1
export TOMACS_DATA=/work/shared/data
run() { xargs -P 2 -I{} bash -c 'IFS="|" read d cmd args <<< "{}"; PYTHONPATH=/work/wt60 .venv/bin/python -P -c "from tomacs.cli import main; main()" $cmd $args > $d.log 2>&1'; }
for s in 3 4 5; do for b in mmlu openbookqa; do for a in eq50 gt50; do
  d=outputs/s60/tg01_${b}_${a}_s${s}
  [ -f "$d/results.json" ] || echo "$d|train|method=todycomm benchmark=$b attack=$a seed=$s hydra.run.dir=$d"
done; done; done | run
for s in 3 4 5; do for b in mmlu openbookqa; do for a in eq50 gt50; do
  o=outputs/s60/pe_${b}_${a}_s${s}
  [ -f "$o/results.json" ] || echo "$o|evaluate|method=todycomm benchmark=$b attack=$a seed=$s eval.seed=0 checkpoint=outputs/s60/tg01_${b}_${a}_s${s}/checkpoint.pt hydra.run.dir=$o"
done; done; done | run
