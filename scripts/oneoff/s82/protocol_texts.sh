#!/usr/bin/env bash
# Issue 38, stop 82 (stop 81's, renamed): the cross-fitted texts check of qwen3-8b in MAD-Follower's protocol as the source ran
# it: per fold k of K, one simulated run per round count the source has (benchmark.rounds=R with rounds=R),
# each question copied REP times per source debate of that many rounds (benchmark.per_debate=true), on the
# fold profile PROFILE-s82-f{k}of{K} in $OUT/profiles (texts.sh fits it); the texts check reads both runs as
# one simulated side; then the pool.
# Usage: WT=<worktree> OUT=<dir> protocol_texts.sh SEED K REP
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT TOMACS_PROFILES=$OUT/profiles
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
S=$1; K=$2; REP=$3; P=mad-qwen3-8b; M=qwen3-8b; SRC=$TOMACS_DATA/debates/mad-follower
files=""
for k in $(seq 1 $K); do
  N=$P-s82-f${k}of$K
  runs=""
  for R in 3 5; do
    X=$OUT/proto_${N}_r${R}_s$S
    [ -s $X/results.json ] || eval $TOM evaluate method=debate benchmark=debates benchmark.model=$M \
      benchmark.repeats=$REP benchmark.per_debate=true benchmark.rounds=$R benchmark.fold=$k/$K attack=mad \
      attack.target_letters=[B,A] attack.ordered_onsets=true agents=5 rounds=$R eval.size=100000 \
      backbone.profile=$N seed=$S hydra.run.dir=$X "> $X.log 2>&1"
    runs="$runs --sim $X"
  done
  T=$OUT/proto_${N}_s$S
  [ -s $T.texts.json ] || eval $TOM transcripts texts $runs --real $SRC --model $M --fold $k/$K \
    --embedder minilm -o $T.texts.json "> $T.texts.txt 2>&1"
  files="$files $T.texts.json"
  echo "$(date +%T) done $N"
done
eval $TOM transcripts pool $files -o $OUT/proto_pool_$P-s82_s$S.json "> $OUT/proto_pool_$P-s82_s$S.txt 2>&1"
