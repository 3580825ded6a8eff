#!/usr/bin/env bash
# Issue 38, stop 73: stop 67's own-protocol training (git show 2e3a13f:scripts/oneoff/s67/own_policy.sh), then the
# replay with --probe on the held-out real debates (from $WT too), to compare stop 72's texts with stop 73's frames.
# TodyComm (method.comm=debate, defaults, MiniLM) on MAD-Follower's fitting questions (benchmark=debates), its
# target rule [B,A] and onsets, seed S, code from the frozen worktree $WT, outputs under $OUT.
# Usage: WT=<worktree> OUT=<dir> own_policy.sh PROFILE SEED
set -u
cd /work/main
export HF_HUB_OFFLINE=1 TOMACS_DATA=/work/shared/data PYTHONPATH=$WT
PY="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
case $1 in
  mad-qwen-max) M=qwen-max; REP=14;;
  mad-qwen3-8b) M=qwen3-8b; REP=10;;
esac
R=$OUT/own/pol_$1_s$2
mkdir -p $OUT/own
[ -s $R/results.json ] || eval $PY train method=todycomm method.comm=debate benchmark=debates \
  benchmark.model=$M benchmark.repeats=$REP attack=mad "attack.target_letters=[B,A]" attack.ordered_onsets=true \
  agents=5 rounds=3 backbone.profile=$1 seed=$2 hydra.run.dir=$R > $R.log 2>&1
[ -s $R.replay.json ] || eval $PY replay $R $TOMACS_DATA/debates/mad-follower --model $M --held-out --probe \
  -o $R.replay.json > $R.replay.txt 2>&1
echo replayed $1 $2
