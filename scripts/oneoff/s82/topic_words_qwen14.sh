#!/usr/bin/env bash
# what-if run: Qwen1.5-14B fold K ($3, default 1) with topic words (S82_TOPIC), the s81 fold profile (final14), then the texts check
# Stop 82 (issue 38). PYTHONPATH /work/wt82: a worktree of d678ed5 with topic_words.patch applied (git apply);
# $1: topic_words.py's JSON for the run's questions (its questions are the baseline run's, same seed); $2: the run dir.
set -u
K=${3:-1}
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=/work/wt82 TOMACS_PROFILES=/work/main/outputs/s81/final14/profiles
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 S82_TOPIC=$1
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
M=Qwen1.5-14B-Chat; SRC=$TOMACS_DATA/debates/multi-agent-attack/mmlu/adv_100_3_3_1-$M-$M; N=maa-qwen14-s81-f${K}of3
R=$2
[ -s $R/results.json ] || eval $TOM evaluate method=debate benchmark=mmlu benchmark.test_subset=null agents=3 rounds=3 attack=maa eval.size=500 backbone.profile=$N seed=0 hydra.run.dir=$R "> $R.log 2>&1"
eval $TOM transcripts texts --sim $R --real $SRC --model $M --fold $K/3 --embedder minilm -o $R.texts.json "> $R.texts.txt 2>&1"
echo done
