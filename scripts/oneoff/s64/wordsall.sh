#!/usr/bin/env bash
# Issue 38, stop 64: words-only transfer (words.py) for the five profiles, seeds 0-2, 500 questions, with the code
# and profiles of the worktree $1 (label $2). Sim runs in $OUT/<label>_<profile>_s<seed>.
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1
D=$TOMACS_DATA/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
WT=$1; L=$2
for s in ${SEEDS:-0 1 2}; do for p in maa-gpt35 maa-qwen14 maa-gpt4o mad-qwen3-8b mad-qwen-max; do
  case $p in
    mad-qwen3-8b) set -- $WT $L qwen3-8b $D/mad-follower 5 mad;;
    mad-qwen-max) set -- $WT $L qwen-max $D/mad-follower 5 mad;;
    maa-gpt35) set -- $WT $L gpt-3.5-turbo $MAA-gpt-3.5-turbo-gpt-3.5-turbo 3 maa;;
    maa-qwen14) set -- $WT $L Qwen1.5-14B-Chat $MAA-Qwen1.5-14B-Chat-Qwen1.5-14B-Chat 3 maa;;
    maa-gpt4o) set -- $WT $L gpt-4o $MAA-gpt-4o-gpt-4o 3 maa;;
  esac
  R=$OUT/${L}_${p}_s$s
  [ -s $R/results.json ] || (cd $WT && PYTHONPATH=$WT /work/main/.venv/bin/python -P -c "from tomacs.cli import main; main()" \
    evaluate method=debate benchmark=mmlu agents=$5 rounds=3 attack=$6 benchmark.test_subset=null eval.size=500 \
    backbone.profile=$p seed=$s embedder=hashing hydra.run.dir=$R > /dev/null 2>&1)
  echo "$L $p s$s $(PYTHONPATH=/work/main /work/main/.venv/bin/python -P scripts/oneoff/s64/words.py $R $4 $3 | cut -d: -f2)"
done; done
