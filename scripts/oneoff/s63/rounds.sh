#!/usr/bin/env bash
# Issue 38's per-round replay target: TodyComm (method.comm=debate, defaults, MiniLM) trained on each shipped profile
# in its source's protocol with method.round_decisions=W (0 = today's decision-only loss), seed S, from the frozen
# worktree /work/wt63, then replayed on the real debates of the questions held out from the profile's fit.
# Usage: rounds.sh PROFILE MODEL W S
set -u
WT=/work/wt63; OUT=/work/main/outputs/s63; D=/work/shared/data/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
PROFILE=$1; MODEL=$2; W=$3; S=$4
case $PROFILE in
  mad-*) PROTO="attack=mad agents=5 rounds=3"; SRC=$D/mad-follower ;;
  *) PROTO="attack=maa agents=3 rounds=3"; SRC=$MAA-$MODEL-$MODEL ;;
esac
R=$OUT/rd${W}_${PROFILE}_s$S
cd /work/main
export PYTHONPATH=$WT TOMACS_DATA=/work/shared/data
PY=(/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()')
[ -s "$R/results.json" ] || "${PY[@]}" train method=todycomm method.comm=debate method.round_decisions="$W" \
  benchmark=mmlu $PROTO backbone.profile="$PROFILE" seed="$S" hydra.run.dir="$R" > "$R.log" 2>&1
"${PY[@]}" replay "$R" "$SRC" --model "$MODEL" --held-out -o "$R.replay.json" > "$R.replay.txt" 2>&1
echo "done $R"
