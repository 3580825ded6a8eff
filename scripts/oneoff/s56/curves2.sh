#!/bin/bash
# the per-round curves of the shipped profiles as refitted by `make profiles` (after the faster likelihood)
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
D=../shared/data/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
MAAP="agents=3 rounds=3 attack=maa eval.size=150"; MADP="agents=5 rounds=3 attack=mad attack.target_lure=profile eval.size=150"
run() { n=$1; real=$2; model=$3; shift 3; d=outputs/s56/c_${n}_shipped
  [ -f $d/results.json ] || .venv/bin/tomacs evaluate method=debate benchmark=mmlu backbone.profile=$n "$@" hydra.run.dir=$d > $d.log 2>&1
  .venv/bin/tomacs transcripts curves --sim $d --real $real --model $model --held-out -o $d.curves.json > $d.curves.txt 2>&1; }
run maa-gpt4o $MAA-gpt-4o-gpt-4o gpt-4o $MAAP
run maa-gpt35 $MAA-gpt-3.5-turbo-gpt-3.5-turbo gpt-3.5-turbo $MAAP
run maa-qwen14 $MAA-Qwen1.5-14B-Chat-Qwen1.5-14B-Chat Qwen1.5-14B-Chat $MAAP
run mad-qwen3-8b $D/mad-follower qwen3-8b $MADP
