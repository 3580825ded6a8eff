#!/bin/bash
# One-off (stop 59, issue 40): after the tuning sets, best.pt on test where validation peaked early, the
# flagship's seed 2 at gamma 0.1, and the gradient measurement at gamma 0.1 (frozen code in /work/wt59).
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
while pgrep -f "s59/tune.sh" > /dev/null; do sleep 10; done
scripts/oneoff/s59/evalbest.sh tg01
scripts/oneoff/s59/evalbest.sh g01
run() { PYTHONPATH=/work/wt59 .venv/bin/python -P "$@"; }
run -c "from tomacs.cli import main; main()" train method=todycomm attack=gt50 seed=2 method.gamma=0.1 hydra.run.dir=outputs/s59/g01_flag_s2 > outputs/s59/g01_flag_s2.log 2>&1 &
for b in synthetic arc_c; do
  run scripts/oneoff/s59/gradmix.py outputs/s59/grad01_${b}_eq50_s0.jsonl train method=todycomm benchmark=$b attack=eq50 seed=0 method.gamma=0.1 hydra.run.dir=outputs/s59/grad01_${b}_eq50_s0 > outputs/s59/grad01_${b}_eq50_s0.log 2>&1
done
wait
