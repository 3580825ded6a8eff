#!/usr/bin/env bash
# Simulated debates in each source's protocol, seeds 0-2, with the code of worktree $1 (label $2).
# Run from /work/main: bash scripts/oneoff/s57/gen.sh /work/wt57 after
set -u
WT=$1; LABEL=$2; OUT=/work/main/outputs/s57
PY="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
cd "$WT"
for s in 0 1 2; do
  for p in maa-gpt35 maa-qwen14 maa-gpt4o; do
    PYTHONPATH=$WT TOMACS_DATA=/work/shared/data eval $PY evaluate method=debate benchmark=mmlu agents=3 rounds=3 \
      attack=maa eval.size=150 backbone.profile=$p seed=$s hydra.run.dir=$OUT/${LABEL}_${p}_s$s > $OUT/${LABEL}_${p}_s$s.log 2>&1
  done
  for p in mad-qwen3-8b mad-qwen-max; do
    PYTHONPATH=$WT TOMACS_DATA=/work/shared/data eval $PY evaluate method=debate benchmark=mmlu agents=5 rounds=3 \
      attack=mad eval.size=100 backbone.profile=$p seed=$s hydra.run.dir=$OUT/${LABEL}_${p}_s$s > $OUT/${LABEL}_${p}_s$s.log 2>&1
  done
done
echo done $LABEL
