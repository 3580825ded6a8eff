#!/bin/bash
# One-off (stop 60, issue 40): MiniLM tuning cells (ARC-C, synthetic x eq50, gt50 x seeds 0-1) at TodyComm's
# defaults plus the overrides given, from a frozen copy of the code in /work/wt60.
# Usage: scripts/oneoff/s60/tune.sh NAME [override ...]
cd "$(git rev-parse --show-toplevel)" || exit 1
export TOMACS_DATA=/work/shared/data
name=$1
shift
for s in 0 1; do for b in arc_c synthetic; do for a in eq50 gt50; do
  d=outputs/s60/${name}_${b}_${a}_s${s}
  [ -f "$d/results.json" ] || echo "$d|method=todycomm benchmark=$b attack=$a seed=$s hydra.run.dir=$d $*"
done; done; done | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; PYTHONPATH=/work/wt60 .venv/bin/python -P -c "from tomacs.cli import main; main()" train $args > $d.log 2>&1'
