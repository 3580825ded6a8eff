#!/usr/bin/env bash
# Issue 38's first credit round: TodyComm (method.comm=debate, defaults, MiniLM) trained on each shipped profile in its
# source's protocol with method.round_distill=W (0 = today's loss), seed S, from the frozen worktree /work/wt63; then
# replayed on the real debates of the questions held out from the profile's fit (the test), and on all of its
# model's debates (the fitting questions among them are the validation: sumd.py).
# Usage: dist.sh PROFILE MODEL W S
set -u
WT=/work/wt63; OUT=/work/main/outputs/s63; D=/work/shared/data/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
PROFILE=$1; MODEL=$2; W=$3; S=$4
case $PROFILE in
  mad-*) PROTO="attack=mad agents=5 rounds=3"; SRC=$D/mad-follower ;;
  *) PROTO="attack=maa agents=3 rounds=3"; SRC=$MAA-$MODEL-$MODEL ;;
esac
R=$OUT/ds${W}_${PROFILE}_s$S
[ "$W" = 0 ] && [ -d "$OUT/rd0_${PROFILE}_s$S" ] && R=$OUT/rd0_${PROFILE}_s$S  # seed 0: the same training as W=0
cd /work/main
export PYTHONPATH=$WT TOMACS_DATA=/work/shared/data
PY=(/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()')
[ -s "$R/results.json" ] || "${PY[@]}" train method=todycomm method.comm=debate method.round_distill="$W" \
  benchmark=mmlu $PROTO backbone.profile="$PROFILE" seed="$S" hydra.run.dir="$R" > "$R.log" 2>&1
[ -s "$R.replay.json" ] || "${PY[@]}" replay "$R" "$SRC" --model "$MODEL" --held-out -o "$R.replay.json" > "$R.replay.txt" 2>&1
[ -s "$R.all.json" ] || "${PY[@]}" replay "$R" "$SRC" --model "$MODEL" -o "$R.all.json" > "$R.all.txt" 2>&1
echo "done $R"
