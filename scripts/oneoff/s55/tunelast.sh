#!/bin/bash
# last epoch (checkpoint.pt) on test for the MiniLM tuning-cell runs
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
for b in arc_c synthetic; do for a in eq50 gt50; do for s in 0 1; do
  t=outputs/s55/u_${b}_${a}_s${s}; [ $s = 0 ] && [ $a = eq50 ] && t=outputs/s55/m_${b}_eq50_s0_r0
  d=outputs/s55/v_${b}_${a}_s${s}_last
  [ -f $d/results.json ] || echo "$d|seed=$s checkpoint=$t/checkpoint.pt benchmark=$b attack=$a"
done; done; done | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; PYTHONPATH=/work/wt55 .venv/bin/python -P -c "from tomacs.cli import main; main()" evaluate method=todycomm $args hydra.run.dir=$d > $d.log 2>&1'
