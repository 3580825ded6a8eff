#!/bin/bash
# One-off (stop 59, issue 40): test figures of best.pt for the runs of a set (NAME: a prefix under outputs/s59)
# whose validation best is not the last epoch, to tell a real fall after the peak from the 64 questions' noise.
# Usage: scripts/oneoff/s59/evalbest.sh NAME
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
for d in outputs/s59/$1_*_s?; do
  n=$(basename $d); rest=${n#$1_}; s=${rest##*_s}; rest=${rest%_s*}; a=${rest##*_}; b=${rest%_*}
  best=$(python3 -c "import json; v=json.load(open('$d/results.json'))['train']['validation']; print(int(v['best']['epoch'] != v['last']['epoch']))")
  [ "$best" = 1 ] || continue
  o=outputs/s59/eb_${n}
  [ -f $o/results.json ] || echo "$o|method=todycomm benchmark=$b attack=$a seed=$s checkpoint=$d/best.pt hydra.run.dir=$o"
done | xargs -P 2 -I{} bash -c 'IFS="|" read o args <<< "{}"; PYTHONPATH=/work/wt59 .venv/bin/python -P -c "from tomacs.cli import main; main()" evaluate $args > $o.log 2>&1'
