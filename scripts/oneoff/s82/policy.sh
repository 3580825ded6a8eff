#!/usr/bin/env bash
# Issue 38, stop 80: stop 79's policy replay (git show 8ece727:scripts/oneoff/s79/letters_policy.sh) on the fold
# profiles of texts.sh (PROFILE-s82-f{k}of{K}: letters the fit reads, styles off the scale): TodyComm
# (method.comm=debate, defaults, MiniLM) trained at seed S in the source's protocol, replayed with --probe on the
# fold's held-out real debates, then the K folds joined (`transcripts pool`). One training at a time, one thread.
# Usage: WT=<worktree> OUT=<dir> policy.sh SEED K PROFILE...
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT TOMACS_PROFILES=$OUT/profiles
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
D=$TOMACS_DATA/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
S=$1; K=$2; shift 2
for P in "$@"; do
  case $P in
    mad-qwen3-8b) M=qwen3-8b; SRC=$D/mad-follower; REP=10;;
    mad-qwen-max) M=qwen-max; SRC=$D/mad-follower; REP=14;;
    maa-gpt35) M=gpt-3.5-turbo; SRC=$MAA-$M-$M;;
    maa-qwen14) M=Qwen1.5-14B-Chat; SRC=$MAA-$M-$M;;
    maa-gpt4o) M=gpt-4o; SRC=$MAA-$M-$M;;
  esac
  files=""
  for k in $(seq 1 $K); do
    N=$P-s82-f${k}of$K
    case $P in
      mad-*) PROTO="benchmark=debates benchmark.model=$M benchmark.repeats=$REP benchmark.fold=$k/$K attack=mad \
attack.target_letters=[B,A] attack.ordered_onsets=true agents=5 rounds=3";;
      *) PROTO="benchmark=mmlu attack=maa agents=3 rounds=3";;
    esac
    R=$OUT/pol_${N}_s$S
    [ -s $R/results.json ] || eval $TOM train method=todycomm method.comm=debate $PROTO backbone.profile=$N \
      seed=$S hydra.run.dir=$R "> $R.log 2>&1"
    [ -s $R.replay.json ] || eval $TOM replay $R $SRC --model $M --fold $k/$K --probe -o $R.replay.json \
      "> $R.replay.txt 2>&1"
    files="$files $R.replay.json"
    echo "$(date +%T) done $N"
  done
  eval $TOM transcripts pool $files -o $OUT/replaypool_${P}-s82_s$S.json "> $OUT/replaypool_${P}-s82_s$S.txt 2>&1"
done
