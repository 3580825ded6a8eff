#!/usr/bin/env bash
# Issue 38, stop 73 (stop 72's, git show 910c000:scripts/oneoff/s72/texts.sh) on stop 73's generator: replies in
# their model's frame ("#answer: B / #rationale: / #confidence:") or with its answer mark ("(B)"); SIZE debates (default 500).
# 500 simulated debates, judged against the model's HELD-OUT real debates with MiniLM, code from the frozen
# worktree $WT, outputs under $OUT.
#   bench "mmlu": MMLU's full test split, targets uniform, the source's agents and attack;
#   bench "own":  MAD-Follower's own fitting questions (benchmark=debates), its onsets and target rule [B,A].
# Usage: WT=<worktree> OUT=<dir> texts.sh PROFILE BENCH SEED [SIZE] [NOTEXTS]
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
D=$TOMACS_DATA/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
P=$1; B=$2; S=$3; N=${4:-500}
case $P in
  mad-qwen3-8b) M=qwen3-8b; SRC=$D/mad-follower; PROTO="agents=5 rounds=3 attack=mad"; REP=18;;
  mad-qwen-max) M=qwen-max; SRC=$D/mad-follower; PROTO="agents=5 rounds=3 attack=mad"; REP=24;;
  maa-gpt35) M=gpt-3.5-turbo; SRC=$MAA-$M-$M; PROTO="agents=3 rounds=3 attack=maa";;
  maa-qwen14) M=Qwen1.5-14B-Chat; SRC=$MAA-$M-$M; PROTO="agents=3 rounds=3 attack=maa";;
  maa-gpt4o) M=gpt-4o; SRC=$MAA-$M-$M; PROTO="agents=3 rounds=3 attack=maa";;
esac
case $B in
  own) BENCH="benchmark=debates benchmark.model=$M benchmark.repeats=$REP attack.target_letters=[B,A] attack.ordered_onsets=true";;
  mmlu) BENCH="benchmark=mmlu benchmark.test_subset=null";;
esac
R=$OUT/t${N}_${P}_${B}_s$S
[ -s $R.texts.json ] && exit 0
[ -s $R/results.json ] || eval $TOM evaluate method=debate $BENCH eval.size=$N $PROTO \
  backbone.profile=$P seed=$S hydra.run.dir=$R "> $R.log 2>&1"
[ -n "${5:-}" ] && exit 0
eval $TOM transcripts texts --sim $R --real $SRC --model $M --held-out --embedder minilm -o $R.texts.json \
  "> $R.texts.txt 2>&1"
echo done $P $B $S
