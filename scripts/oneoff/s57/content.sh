#!/usr/bin/env bash
# The content-bank check: episodes on the refitted profile PROFILE-c (outputs/s57/prof, fitted with the content
# bank by `TOMACS_PROFILES=outputs/s57/prof tomacs sim fit-episodes ... --name PROFILE-c`), seeds 0-2, then texts.
# Usage: bash scripts/oneoff/s57/content.sh mad-qwen-max qwen-max
set -u
P=$1; M=$2; OUT=/work/main/outputs/s57; D=/work/shared/data/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
cd /work/main
case $P in
  mad-*) PROTO="agents=5 rounds=3 attack=mad eval.size=100"; SRC=$D/mad-follower ;;
  *) PROTO="agents=3 rounds=3 attack=maa eval.size=150"; SRC=$MAA-$M-$M ;;
esac
for s in 0 1 2; do
  R=$OUT/content_${P}_s$s
  TOMACS_PROFILES=$OUT/prof TOMACS_DATA=/work/shared/data .venv/bin/tomacs evaluate method=debate benchmark=mmlu $PROTO \
    backbone.profile=$P-c seed=$s hydra.run.dir=$R > $R.log 2>&1
  TOMACS_DATA=/work/shared/data .venv/bin/tomacs transcripts texts --sim $R --real $SRC --model $M --held-out \
    --embedder minilm -o $R.texts.json > $R.texts.txt 2>&1
done
echo done $P
