#!/usr/bin/env bash
# Issue 38's policy check on the texts after the length change: TodyComm (method.comm=debate, TodyComm's default
# budget, MiniLM) trained on each shipped profile in its source's protocol, seed 0, from the frozen worktree
# /work/wt57 (ad2c4f1), then replayed on the real debates of the questions held out from the profile's fit.
set -u
WT=/work/wt57; OUT=/work/main/outputs/s57; D=/work/shared/data/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
PY="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
cd $WT
for pm in "maa-qwen14 Qwen1.5-14B-Chat" "maa-gpt35 gpt-3.5-turbo" "maa-gpt4o gpt-4o" "mad-qwen3-8b qwen3-8b" "mad-qwen-max qwen-max"; do
  set -- $pm
  case $1 in
    mad-*) PROTO="attack=mad agents=5 rounds=3"; SRC=$D/mad-follower ;;
    *) PROTO="attack=maa agents=3 rounds=3"; SRC=$MAA-$2-$2 ;;
  esac
  R=$OUT/pol_$1_s0
  [ -s $R/results.json ] || PYTHONPATH=$WT TOMACS_DATA=/work/shared/data eval $PY train method=todycomm method.comm=debate \
    benchmark=mmlu $PROTO backbone.profile=$1 seed=0 hydra.run.dir=$R > $R.log 2>&1
  PYTHONPATH=$WT TOMACS_DATA=/work/shared/data eval $PY replay $R $SRC --model $2 --held-out -o $R.replay.json > $R.replay.txt 2>&1
done
echo done
