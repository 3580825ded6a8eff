#!/usr/bin/env bash
# Issue 38, stop 78: crossfit_policy.sh's policies replayed again with the code that keeps each row's truth and
# the fold (`replay --fold k/K --probe -o`), then each source's K folds joined (`transcripts pool`).
# Usage: WT=<worktree> OUT=<dir> replay_pool.sh SEED K PROFILE...
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT TOMACS_PROFILES=$OUT/profiles
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
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
    R=$OUT/pol_$P-f${k}of${K}_s$S
    [ -s $R.pool.json ] || eval $TOM replay $R $SRC --model $M --fold $k/$K --probe -o $R.pool.json "> $R.pool.txt 2>&1"
    files="$files $R.pool.json"
  done
  eval $TOM transcripts pool $files -o $OUT/replaypool_${P}_s$S.json "> $OUT/replaypool_${P}_s$S.txt 2>&1"
  echo "$(date +%T) pooled $P"
done
