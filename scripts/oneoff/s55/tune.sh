#!/bin/bash
# tuning grid: hashing, ARC-C/synthetic x eq50/gt50 x seeds 0-1, decision_replay in R
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
for r in $R; do for b in arc_c synthetic; do for a in eq50 gt50; do for s in 0 1; do
 d=outputs/s55/h_${b}_${a}_s${s}_r${r}
 [ -f $d/results.json ] || echo "$d|method=todycomm embedder=hashing benchmark=$b attack=$a seed=$s method.decision_replay=$r hydra.run.dir=$d"
done; done; done; done | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; .venv/bin/tomacs train $args > $d.log 2>&1'
