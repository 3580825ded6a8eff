#!/usr/bin/env bash
# Issue 38, stop 77: qwen3-8b's cross-fit on MAD-Follower's own questions (benchmark=debates, each fold's fitting
# questions, its onsets and target rule [B,A]), on crossfit.sh's fold profiles mad-qwen3-8b-f{k}of{K}; then the
# texts check of each fold and the pool. Usage: WT=<worktree> OUT=<dir> own.sh SEED K
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT TOMACS_PROFILES=$OUT/profiles
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
S=$1; K=$2; M=qwen3-8b; SRC=$TOMACS_DATA/debates/mad-follower
BENCH="benchmark=debates benchmark.model=$M benchmark.repeats=18 attack.target_letters=[B,A] attack.ordered_onsets=true"
files=""
for k in $(seq 1 $K); do
  R=$OUT/t500_mad-qwen3-8b-own-f${k}of${K}_s$S
  [ -s $R/results.json ] || eval $TOM evaluate method=debate $BENCH benchmark.fold=$k/$K eval.size=500 agents=5 \
    rounds=3 attack=mad backbone.profile=mad-qwen3-8b-f${k}of$K seed=$S hydra.run.dir=$R "> $R.log 2>&1"
  echo "$(date +%T) sim own fold $k/$K"
done
while pgrep -f "fold_texts.sh 0 3 mad-qwen-max" > /dev/null; do sleep 20; done
for k in $(seq 1 $K); do
  R=$OUT/t500_mad-qwen3-8b-own-f${k}of${K}_s$S
  [ -s $R.texts.json ] || eval $TOM transcripts texts --sim $R --real $SRC --model $M --fold $k/$K \
    --embedder minilm -o $R.texts.json "> $R.texts.txt 2>&1"
  files="$files $R.texts.json"
  echo "$(date +%T) texts own fold $k/$K"
done
eval $TOM transcripts pool $files -o $OUT/pool_mad-qwen3-8b-own_s$S.json "> $OUT/pool_mad-qwen3-8b-own_s$S.txt 2>&1"
