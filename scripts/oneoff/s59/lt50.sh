#!/bin/bash
# One-off (stop 59, issue 40): the lt50 cells (MMLU, OpenBookQA x seeds 0-2) at gamma 0.1, for the six-cell mean.
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
while pgrep -f "s59/after.sh" > /dev/null; do sleep 10; done
for s in 0 1 2; do for b in mmlu openbookqa; do
  d=outputs/s59/tg01_${b}_lt50_s${s}
  [ -f $d/results.json ] || echo "$d|method=todycomm benchmark=$b attack=lt50 seed=$s hydra.run.dir=$d method.gamma=0.1"
done; done | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; PYTHONPATH=/work/wt59 .venv/bin/python -P -c "from tomacs.cli import main; main()" train $args > $d.log 2>&1'
