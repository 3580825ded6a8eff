#!/usr/bin/env bash
# Issue 38, stop 72 (stop 71's, git show 22ba8dc:scripts/oneoff/s71/maa_policy.sh), on stop 72's generator (role frames for the answer):
# TodyComm (method.comm=debate, defaults, MiniLM) trained in multi-agent-attack's protocol (MMLU, 3 agents,
# 3 rounds, attack=maa) on a shipped profile with stop 70's generator (points shared per debate and answer, lengths per
# debate round), at seed S,
# from the frozen worktree $WT; then replayed with --probe on the model's held-out real debates. Outputs under $OUT.
# Usage: WT=<worktree> OUT=<dir> maa_policy.sh PROFILE MODEL SEED
set -u
cd /work/main
export HF_HUB_OFFLINE=1 TOMACS_DATA=/work/shared/data PYTHONPATH=$WT
PY="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
SRC=$TOMACS_DATA/debates/multi-agent-attack/mmlu/adv_100_3_3_1-$2-$2
R=$OUT/pol_$1_s$3
[ -s $R/results.json ] || eval $PY train method=todycomm method.comm=debate \
  benchmark=mmlu attack=maa agents=3 rounds=3 backbone.profile=$1 seed=$3 hydra.run.dir=$R > $R.log 2>&1
eval $PY replay $R $SRC --model $2 --held-out --probe -o $R.replay.json > $R.replay.txt 2>&1
echo done $1 $3
