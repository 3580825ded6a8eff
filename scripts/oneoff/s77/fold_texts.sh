#!/usr/bin/env bash
# Issue 38, stop 77: the texts check of each fold of crossfit.sh's runs against that fold's held-out real
# debates (`transcripts texts --fold k/K`), then `transcripts pool` per profile. Re-runnable: skips a fold
# whose .texts.json exists, and a run not finished yet.
# Usage: WT=<worktree> OUT=<dir> fold_texts.sh SEED K PROFILE...
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT TOMACS_PROFILES=$OUT/profiles
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
D=$TOMACS_DATA/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
S=$1; K=$2; shift 2
for P in "$@"; do
  case $P in
    mad-qwen3-8b) M=qwen3-8b; SRC=$D/mad-follower;;
    mad-qwen-max) M=qwen-max; SRC=$D/mad-follower;;
    maa-gpt35) M=gpt-3.5-turbo; SRC=$MAA-$M-$M;;
    maa-qwen14) M=Qwen1.5-14B-Chat; SRC=$MAA-$M-$M;;
    maa-gpt4o) M=gpt-4o; SRC=$MAA-$M-$M;;
  esac
  files=""
  for k in $(seq 1 $K); do
    R=$OUT/t500_$P-f${k}of${K}_s$S
    [ -s $R/results.json ] || continue
    [ -s $R.texts.json ] || eval $TOM transcripts texts --sim $R --real $SRC --model $M --fold $k/$K \
      --embedder minilm -o $R.texts.json "> $R.texts.txt 2>&1"
    files="$files $R.texts.json"
    echo "$(date +%T) texts $P fold $k/$K"
  done
  [ -n "$files" ] && eval $TOM transcripts pool $files -o $OUT/pool_${P}_s$S.json "> $OUT/pool_${P}_s$S.txt 2>&1"
done
