#!/bin/bash
# method=debate in each source's protocol on the shipped profile (old) and on its --lapse auto refit (new,
# outputs/s56/prof), against the source's held-out real debates (`tomacs transcripts curves --held-out`)
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data TOMACS_PROFILES=outputs/s56/prof
D=../shared/data/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
MAAP="agents=3 rounds=3 attack=maa eval.size=150"; MADP="agents=5 rounds=3 attack=mad attack.target_lure=profile eval.size=150"
run() { n=$1; real=$2; model=$3; shift 3
  for v in old new; do p=$n; [ $v = new ] && p=t-$n; d=outputs/s56/c_${n}_$v
    [ -f $d/results.json ] || .venv/bin/tomacs evaluate method=debate benchmark=mmlu backbone.profile=$p "$@" hydra.run.dir=$d > $d.log 2>&1
    .venv/bin/tomacs transcripts curves --sim $d --real $real --model $model --held-out -o $d.curves.json > $d.curves.txt 2>&1
  done; }
run maa-gpt4o $MAA-gpt-4o-gpt-4o gpt-4o $MAAP
run maa-gpt35 $MAA-gpt-3.5-turbo-gpt-3.5-turbo gpt-3.5-turbo $MAAP
run maa-qwen14 $MAA-Qwen1.5-14B-Chat-Qwen1.5-14B-Chat Qwen1.5-14B-Chat $MAAP
run mad-qwen3-8b $D/mad-follower qwen3-8b $MADP
