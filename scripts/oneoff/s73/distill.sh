#!/usr/bin/env bash
# Issue 38, stop 73: stop 63's method.round_distill retried on stop 72's texts (gpt-3.5, multi-agent-attack protocol).
# The worktree /work/wt73 was bcb877e with `git show 3f82bea:scripts/oneoff/s63/round_distill.patch` applied;
# trains TodyComm (method.comm=debate, MiniLM) with method.round_distill=W at seed SEED and replays it with --probe
# on the held-out real debates. Outputs under outputs/s73/dist. Usage: distill.sh W SEED
set -u
cd /work/main
export HF_HUB_OFFLINE=1 TOMACS_DATA=/work/shared/data PYTHONPATH=/work/wt73
OUT=/work/main/outputs/s73/dist
PY="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
SRC=$TOMACS_DATA/debates/multi-agent-attack/mmlu/adv_100_3_3_1-gpt-3.5-turbo-gpt-3.5-turbo
R=$OUT/ds$1_s$2
[ -s $R/results.json ] || eval $PY train method=todycomm method.comm=debate method.round_distill=$1 \
  benchmark=mmlu attack=maa agents=3 rounds=3 backbone.profile=maa-gpt35 seed=$2 hydra.run.dir=$R > $R.log 2>&1
eval $PY replay $R $SRC --model gpt-3.5-turbo --held-out --probe -o $R.replay.json > $R.replay.txt 2>&1
echo done $1 $2
