#!/usr/bin/env bash
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=/work/wt76 TOMACS_PROFILES=/tmp/s76/profiles
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
for h in A B; do
  R=/tmp/s76/half/$h
  [ -s $R/results.json ] || eval $TOM evaluate method=debate benchmark=mmlu benchmark.test_subset=null eval.size=500 agents=3 rounds=3 attack=maa backbone.profile=maa-qwen14-$h seed=0 hydra.run.dir=$R "> /tmp/s76/half/$h.log 2>&1"
done
echo SIMDONE >> /tmp/s76/half/q.log
