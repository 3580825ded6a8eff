#!/bin/bash
# One-off (stop 60, issue 40): issue 40's target cells, seeds 0-2, at TodyComm's defaults with 256 validation
# questions instead of 64: the same training (validation never steps the weights or draws from training's
# seeds; the test results must equal outputs/s59/tg01_*), its curve measured on 4x the questions.
cd "$(git rev-parse --show-toplevel)" || exit 1
export TOMACS_DATA=/work/shared/data
while pgrep -f "s60/seeds[.]sh" > /dev/null; do sleep 10; done
for s in 0 1 2; do for b in mmlu openbookqa; do for a in eq50 gt50; do
  d=outputs/s60/v256_${b}_${a}_s${s}
  [ -f "$d/results.json" ] || echo "$d|method=todycomm benchmark=$b attack=$a seed=$s train.val_size=256 hydra.run.dir=$d"
done; done; done | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; PYTHONPATH=/work/wt60 .venv/bin/python -P -c "from tomacs.cli import main; main()" train $args > $d.log 2>&1'
