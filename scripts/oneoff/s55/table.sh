#!/bin/bash
# issue 40 target cells at the defaults (MiniLM, train=paper), seeds 0-2, frozen code /work/wt55 (f9a36c3)
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
for s in 0 1 2; do for b in mmlu openbookqa; do for a in eq50 gt50; do
  d=outputs/s55/t_${b}_${a}_s${s}
  [ -f $d/results.json ] || echo "$d|method=todycomm benchmark=$b attack=$a seed=$s hydra.run.dir=$d"
done; done; done | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; PYTHONPATH=/work/wt55 .venv/bin/python -P -c "from tomacs.cli import main; main()" train $args > $d.log 2>&1'
