#!/bin/bash
# MiniLM tuning cells at the defaults (ARC-C, synthetic x eq50, gt50 x seeds 0-1), for best.pt against the last
# epoch; the eq50 seed-0 runs are m_*_eq50_s0_r0 (revision d999627, decision_replay=0: today's code path)
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
for s in 0 1; do for b in arc_c synthetic; do for a in gt50 eq50; do
  [ $s = 0 ] && [ $a = eq50 ] && continue
  d=outputs/s55/u_${b}_${a}_s${s}
  [ -f $d/results.json ] || echo "$d|method=todycomm benchmark=$b attack=$a seed=$s hydra.run.dir=$d"
done; done; done | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; PYTHONPATH=/work/wt55 .venv/bin/python -P -c "from tomacs.cli import main; main()" train $args > $d.log 2>&1'
