#!/usr/bin/env bash
# Issue 38, stop 66: TodyComm (method.comm=debate, defaults, MiniLM) trained in MAD-Follower's own protocol:
# the source's FITTING questions (benchmark=debates, about 290 copies per split), its fixed target
# (attack.target_letters=[B,A]) and its onsets (attack.ordered_onsets=true), at seed S; then replayed with
# --probe on the model's HELD-OUT real debates (stop 65's replay_seeds.sh trained on MMLU, targets uniform).
# Usage: WT=<frozen worktree> OUT=<dir> policy.sh PROFILE SEED
set -u
cd /work/main
export HF_HUB_OFFLINE=1 TOMACS_DATA=/work/shared/data PYTHONPATH=$WT
PY="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
case $1 in
  mad-qwen-max) M=qwen-max; REP=14;;
  mad-qwen3-8b) M=qwen3-8b; REP=10;;
esac
R=$OUT/own_pol_$1_s$2
[ -s $R/results.json ] || eval $PY train method=todycomm method.comm=debate benchmark=debates \
  benchmark.model=$M benchmark.repeats=$REP attack=mad "attack.target_letters=[B,A]" attack.ordered_onsets=true \
  agents=5 rounds=3 backbone.profile=$1 seed=$2 hydra.run.dir=$R > $R.log 2>&1
eval $PY replay $R $TOMACS_DATA/debates/mad-follower --model $M --held-out --probe -o $R.replay.json > $R.replay.txt 2>&1
echo done $1 $2
