#!/usr/bin/env bash
# Issue 38, stop 65: TodyComm (method.comm=debate, defaults, MiniLM) trained on a shipped profile in its source's
# protocol at seed S, from the frozen worktree /work/wt65, then replayed on the held-out real debates.
# Usage: replay_seeds.sh PROFILE MODEL SEED
set -u
WT=/work/wt65; OUT=/work/main/outputs/s65; D=/work/shared/data/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
PY="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
cd /work/main
export HF_HUB_OFFLINE=1 TOMACS_DATA=/work/shared/data PYTHONPATH=$WT
case $1 in
  mad-*) PROTO="attack=mad agents=5 rounds=3"; SRC=$D/mad-follower ;;
  *) PROTO="attack=maa agents=3 rounds=3"; SRC=$MAA-$2-$2 ;;
esac
R=$OUT/pol_$1_s$3
[ -s $R/results.json ] || eval $PY train method=todycomm method.comm=debate \
  benchmark=mmlu $PROTO backbone.profile=$1 seed=$3 hydra.run.dir=$R > $R.log 2>&1
eval $PY replay $R $SRC --model $2 --held-out -o $R.replay.json > $R.replay.txt 2>&1
echo done $1 $3
