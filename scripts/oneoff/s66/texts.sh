#!/usr/bin/env bash
# Issue 38, stop 66: the texts check in the source's own protocol. 500 simulated debates on the source's
# FITTING questions (benchmark=debates, 24 or 18 copies of each), MAD-Follower's onsets and, with rule
# "letters", its fixed target (attack.target_letters=[B,A]); "uniform" draws the target as before.
# Judged against the model's HELD-OUT real debates with MiniLM, as stop 65's big.sh. Usage:
#   WT=<frozen worktree> OUT=<dir> texts.sh <profile> <rule: letters|uniform> <seed>
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
P=$1; RULE=$2; S=$3
case $P in
  mad-qwen-max) M=qwen-max; REP=24;;
  mad-qwen3-8b) M=qwen3-8b; REP=18;;
esac
case $RULE in
  letters) T="attack.target_letters=[B,A]";;
  uniform) T="";;
esac
R=$OUT/own500_${P}_${RULE}_s$S
[ -s $R.texts.json ] && exit 0
[ -s $R/results.json ] || eval $TOM evaluate method=debate benchmark=debates benchmark.model=$M \
  benchmark.repeats=$REP eval.size=500 attack=mad attack.ordered_onsets=true $T agents=5 rounds=3 \
  backbone.profile=$P seed=$S hydra.run.dir=$R "> $R.log 2>&1"
eval $TOM transcripts texts --sim $R --real $TOMACS_DATA/debates/mad-follower --model $M --held-out \
  --embedder minilm -o $R.texts.json "> $R.texts.txt 2>&1"
echo done $P $RULE $S
