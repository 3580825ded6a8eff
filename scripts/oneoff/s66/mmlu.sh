#!/usr/bin/env bash
# Issue 38, stop 66 (stop 65's big.sh, git show 5c1c045:scripts/oneoff/s65/big.sh): the texts check on 500 simulated
# questions (MMLU's full test split), seed S, the given profiles, with the code and profiles of the checkout at $WT
# (a frozen worktree: here the profiles refitted with `others_named`). Outputs under $OUT.
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT
D=$TOMACS_DATA/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
N=$1; S=$2; shift 2
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
for p in "$@"; do
  case $p in
    mad-qwen3-8b) set -- qwen3-8b $D/mad-follower 5 mad;;
    mad-qwen-max) set -- qwen-max $D/mad-follower 5 mad;;
    maa-gpt35) set -- gpt-3.5-turbo $MAA-gpt-3.5-turbo-gpt-3.5-turbo 3 maa;;
    maa-qwen14) set -- Qwen1.5-14B-Chat $MAA-Qwen1.5-14B-Chat-Qwen1.5-14B-Chat 3 maa;;
    maa-gpt4o) set -- gpt-4o $MAA-gpt-4o-gpt-4o 3 maa;;
  esac
  R=$OUT/big${N}_${p}_s$S
  [ -s $R.texts.json ] && continue
  [ -s $R/results.json ] || eval $TOM evaluate method=debate benchmark=mmlu agents=$3 rounds=3 attack=$4 \
    benchmark.test_subset=null eval.size=$N backbone.profile=$p seed=$S hydra.run.dir=$R "> $R.log 2>&1"
  eval $TOM transcripts texts --sim $R --real $2 --model $1 --held-out --embedder minilm -o $R.texts.json "> $R.texts.txt 2>&1"
done
echo done $N $S
