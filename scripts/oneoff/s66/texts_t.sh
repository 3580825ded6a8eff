#!/usr/bin/env bash
# Issue 38, stop 66: the texts check (as texts.sh / stop 65's big.sh) on a profile FILE whose text model was
# refitted with the count of other options a reply names (PhaseText.others_named), before `make profiles`.
# Usage: OUT=<dir> texts_t.sh <profile file> <model> <bench: own|mmlu> <seed>
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1
TOM=/work/main/.venv/bin/tomacs
F=$1; M=$2; B=$3; S=$4; P=$(basename $F .yaml)
case $M in qwen-max) REP=24;; qwen3-8b) REP=18;; esac
case $B in
  own) BENCH="benchmark=debates benchmark.model=$M benchmark.repeats=$REP attack.target_letters=[B,A] attack.ordered_onsets=true";;
  mmlu) BENCH="benchmark=mmlu benchmark.test_subset=null";;
esac
R=$OUT/t500_${P}_${B}_s$S
[ -s $R/results.json ] || $TOM evaluate method=debate $BENCH eval.size=500 attack=mad agents=5 rounds=3 \
  backbone.profile=$F seed=$S hydra.run.dir=$R > $R.log 2>&1
$TOM transcripts texts --sim $R --real $TOMACS_DATA/debates/mad-follower --model $M --held-out \
  --embedder minilm -o $R.texts.json > $R.texts.txt 2>&1
echo done $P $B $S
