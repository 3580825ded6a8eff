#!/bin/bash
# MiniLM tuning check, seed 0: ARC-C and synthetic eq50; r0 / r3 / lr 1e-3 (frozen code /work/wt55)
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
for spec in "r0|method.decision_replay=0" "r3|method.decision_replay=3" "lr1e3|train.lr=1e-3"; do
 IFS="|" read tag ov <<< "$spec"
 for b in arc_c synthetic; do for a in eq50; do for s in 0; do
  d=outputs/s55/m_${b}_${a}_s${s}_${tag}
  [ -f $d/results.json ] || echo "$d|method=todycomm benchmark=$b attack=$a seed=$s $ov hydra.run.dir=$d"
 done; done; done
done | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; PYTHONPATH=/work/wt55 .venv/bin/python -P -c "from tomacs.cli import main; main()" train $args > $d.log 2>&1'
