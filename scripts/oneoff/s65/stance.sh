#!/usr/bin/env bash
# Issue 38, stop 65: qwen-max's texts check (as big.sh: 500 MMLU questions, seed 0, held-out real debates, MiniLM)
# with the simulator's target never the question's lure (attack.target_lure=0; MAD-Follower's target is a point
# that honest agents almost never pick before any exposure) and MAD-Follower's onsets (attack.ordered_onsets=true).
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=/work/wt65
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
R=/work/main/outputs/s65/stance500_mad-qwen-max_s0
[ -s $R/results.json ] || eval $TOM evaluate method=debate benchmark=mmlu agents=5 rounds=3 attack=mad \
  attack.target_lure=0 attack.ordered_onsets=true benchmark.test_subset=null eval.size=500 \
  backbone.profile=mad-qwen-max seed=0 hydra.run.dir=$R "> $R.log 2>&1"
eval $TOM transcripts texts --sim $R --real $TOMACS_DATA/debates/mad-follower --model qwen-max --held-out \
  --embedder minilm -o $R.texts.json "> $R.texts.txt 2>&1"
echo done
