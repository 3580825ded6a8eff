#!/bin/bash
# the five shipped sources refitted with `--lapse auto` (make profiles' arguments) into outputs/s56/prof, timed
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
D=../shared/data/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
fit() { n=$1; shift; /usr/bin/time -f "$n %e s" env TOMACS_PROFILES=outputs/s56/prof .venv/bin/tomacs sim fit-episodes "$@" \
  --name t-$n --json -o outputs/s56/fit_$n.json > /dev/null 2>> outputs/s56/fit_times.txt; }
fit mad-qwen3-8b $D/mad-follower --model qwen3-8b
fit mad-qwen-max $D/mad-follower --model qwen-max
fit maa-gpt35 $MAA-gpt-3.5-turbo-gpt-3.5-turbo --model gpt-3.5-turbo
fit maa-qwen14 $MAA-Qwen1.5-14B-Chat-Qwen1.5-14B-Chat --model Qwen1.5-14B-Chat
fit maa-gpt4o $MAA-gpt-4o-gpt-4o --model gpt-4o
