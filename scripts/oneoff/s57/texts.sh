#!/usr/bin/env bash
# `tomacs transcripts texts` on the runs of gen.sh (held-out real questions, MiniLM), JSON per run.
# Arguments: label:seed ..., e.g. after:0 before:0 after:1; a run with its JSON already there is skipped.
set -u
OUT=/work/main/outputs/s57; D=/work/shared/data/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
cd /work/main
for LS in "$@"; do LABEL=${LS%:*}; s=${LS#*:}; (
  for pm in "maa-gpt35 gpt-3.5-turbo $MAA-gpt-3.5-turbo-gpt-3.5-turbo" "maa-qwen14 Qwen1.5-14B-Chat $MAA-Qwen1.5-14B-Chat-Qwen1.5-14B-Chat" \
            "maa-gpt4o gpt-4o $MAA-gpt-4o-gpt-4o" "mad-qwen3-8b qwen3-8b $D/mad-follower" "mad-qwen-max qwen-max $D/mad-follower"; do
    set -- $pm
    R=$OUT/${LABEL}_$1_s$s
    [ -s $R.texts.json ] && continue
    TOMACS_DATA=/work/shared/data .venv/bin/tomacs transcripts texts --sim $R --real $3 --model $2 --held-out \
      --embedder minilm -o $R.texts.json > $R.texts.txt 2>&1
  done
); done
echo done
