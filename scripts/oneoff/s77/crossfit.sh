#!/usr/bin/env bash
# Issue 38, stop 77: a cross-fit of the texts check. For each PROFILE and k in 1..K: fit the profile without
# the k-th of K folds of its questions (`sim fit-episodes --fold k/K`), then 500 simulated debates on it in
# the source's protocol (as stop 73's texts.sh: git show 574197b:scripts/oneoff/s73/texts.sh). The texts
# checks (`transcripts texts --held-out --fold k/K`) and `transcripts pool` come after.
# Usage: WT=<worktree> OUT=<dir> crossfit.sh SEED K PROFILE...
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT TOMACS_PROFILES=$OUT/profiles
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
D=$TOMACS_DATA/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
S=$1; K=$2; shift 2
for P in "$@"; do
  case $P in
    mad-qwen3-8b) M=qwen3-8b; SRC=$D/mad-follower; PROTO="agents=5 rounds=3 attack=mad"; REP=18;;
    mad-qwen-max) M=qwen-max; SRC=$D/mad-follower; PROTO="agents=5 rounds=3 attack=mad"; REP=24;;
    maa-gpt35) M=gpt-3.5-turbo; SRC=$MAA-$M-$M; PROTO="agents=3 rounds=3 attack=maa";;
    maa-qwen14) M=Qwen1.5-14B-Chat; SRC=$MAA-$M-$M; PROTO="agents=3 rounds=3 attack=maa";;
    maa-gpt4o) M=gpt-4o; SRC=$MAA-$M-$M; PROTO="agents=3 rounds=3 attack=maa";;
  esac
  case $P in
    mad-qwen-max) BENCH="benchmark=debates benchmark.model=$M benchmark.repeats=$REP attack.target_letters=[B,A] attack.ordered_onsets=true";;
    *) BENCH="benchmark=mmlu benchmark.test_subset=null";;
  esac
  for k in $(seq 1 $K); do
    N=$P-f${k}of$K
    [ -s $OUT/profiles/$N.yaml ] || eval $TOM sim fit-episodes $SRC --model $M --name $N --fold $k/$K "> $OUT/$N.fit.txt 2>&1"
    EXTRA=""; [ $P = mad-qwen-max ] && EXTRA="benchmark.fold=$k/$K"
    R=$OUT/t500_${N}_s$S
    [ -s $R/results.json ] || eval $TOM evaluate method=debate $BENCH $EXTRA eval.size=500 $PROTO \
      backbone.profile=$N seed=$S hydra.run.dir=$R "> $R.log 2>&1"
    echo "$(date +%T) done $N"
  done
done
