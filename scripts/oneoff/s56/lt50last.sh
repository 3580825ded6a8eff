#!/bin/bash
# the lt50 runs of 2026-11-29 (outputs/s54) whose best.pt is not the last epoch: their last epoch on the test
# questions (checkpoint.pt, own episodes). Frozen code /work/wt56.
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
for r in mmlu_lt50_s0 mmlu_lt50_s2 openbookqa_lt50_s1 openbookqa_lt50_s2; do
  b=${r%%_*}; s=${r##*_s}; d=outputs/s56/e_${r}_last
  [ -f $d/results.json ] && continue
  PYTHONPATH=/work/wt56 .venv/bin/python -P -c "from tomacs.cli import main; main()" evaluate method=todycomm \
    benchmark=$b attack=lt50 seed=$s checkpoint=outputs/s54/t_${r}/checkpoint.pt hydra.run.dir=$d > $d.log 2>&1
done
