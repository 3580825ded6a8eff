#!/usr/bin/env bash
# Issue 38, stop 81: per shipped profile, 100 simulated debates in its source's protocol with the tree before
# (WT=a worktree of a959149) and after, and per side the topic density, the share of words in sentences
# generic_like counts, and the words by the density band of their sentence (shares.py), real beside both.
# Usage: WT=<worktree before> AFTER=<worktree after> OUT=<dir> shares.sh
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1
D=$TOMACS_DATA/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
for P in mad-qwen-max mad-qwen3-8b maa-gpt35 maa-qwen14 maa-gpt4o; do
  case $P in
    mad-qwen3-8b) M=qwen3-8b; SRC=$D/mad-follower;;
    mad-qwen-max) M=qwen-max; SRC=$D/mad-follower;;
    maa-gpt35) M=gpt-3.5-turbo; SRC=$MAA-$M-$M;;
    maa-qwen14) M=Qwen1.5-14B-Chat; SRC=$MAA-$M-$M;;
    maa-gpt4o) M=gpt-4o; SRC=$MAA-$M-$M;;
  esac
  case $P in
    mad-*) RUN="benchmark=debates benchmark.model=$M benchmark.repeats=3 attack=mad attack.target_letters=[B,A]
      attack.ordered_onsets=true agents=5 rounds=3";;
    *) RUN="benchmark=mmlu benchmark.test_subset=null agents=3 rounds=3 attack=maa";;
  esac
  for side in before:$WT after:$AFTER; do
    R=$OUT/${side%%:*}_$P
    PYTHONPATH=${side#*:} /work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()' evaluate \
      method=debate $RUN eval.size=100 backbone.profile=$P seed=0 hydra.run.dir=$R > $R.log 2>&1
  done
  echo "== $P"
  PYTHONPATH=$AFTER /work/main/.venv/bin/python -P scripts/oneoff/s81/shares.py $M $SRC $OUT/before_$P $OUT/after_$P
done
