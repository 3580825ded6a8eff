#!/bin/bash
# One-off (stop 59, issue 40): gamma where `auto` falls back to the paper's sampled decision term (an LLM or CrS
# decision, N > 12): that estimator is `method.decision_credit=episode method.updates=4`, run here on the MiniLM
# tuning cells (ARC-C, synthetic x eq50, gt50 x seeds 0-1) with gamma 0.9 and 0.1 (frozen code in /work/wt59).
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
for g in 0.1 0.9; do for s in 0 1; do for b in arc_c synthetic; do for a in eq50 gt50; do
  d=outputs/s59/fb${g/./}_${b}_${a}_s${s}
  [ -f $d/results.json ] || echo "$d|method=todycomm benchmark=$b attack=$a seed=$s method.decision_credit=episode method.updates=4 method.gamma=$g hydra.run.dir=$d"
done; done; done; done | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; PYTHONPATH=/work/wt59 .venv/bin/python -P -c "from tomacs.cli import main; main()" train $args > $d.log 2>&1'
