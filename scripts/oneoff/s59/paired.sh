#!/bin/bash
# One-off (stop 59, issue 40): the gamma-0.1 target runs' last epochs scored on evaluation seed 0's episodes
# (paired: the same test draw for every seed), to separate the training spread from the evaluation's draw.
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
while pgrep -f "s59/tune[.]sh" > /dev/null; do sleep 10; done
for s in 1 2; do for b in mmlu openbookqa; do for a in eq50 gt50; do
  o=outputs/s59/pe_${b}_${a}_s${s}
  [ -f $o/results.json ] || echo "$o|method=todycomm benchmark=$b attack=$a seed=$s eval.seed=0 checkpoint=outputs/s59/tg01_${b}_${a}_s${s}/checkpoint.pt hydra.run.dir=$o"
done; done; done | xargs -P 2 -I{} bash -c 'IFS="|" read o args <<< "{}"; PYTHONPATH=/work/wt59 .venv/bin/python -P -c "from tomacs.cli import main; main()" evaluate $args > $o.log 2>&1'
