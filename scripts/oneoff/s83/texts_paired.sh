#!/usr/bin/env bash
# Issue 38, stop 83 (texts.sh with EXTRA and TAG): stop 82's texts.sh (git show af28662:scripts/oneoff/s82/texts.sh) with the tree of stop 83's topic words
# (stop 81's texts.sh, renamed), run with the tree of stop 82's repeats (WT, a worktree): per PROFILE and fold k of
# K, the fold profile refitted into $OUT/profiles as PROFILE-s83-f{k}of{K}, 500 simulated debates in the
# source's protocol (MAD-Follower's on its own questions, as stop 78's by_answer_texts.sh; multi-agent-attack's
# on MMLU, as stop 77's crossfit.sh), the texts check of each fold, and the pool.
# FOLDS="1 2" runs those folds only (no pool).
# EXTRA: more overrides for the runs (backbone.topic_words=false), TAG: a suffix for their names.
# Usage: WT=<worktree> OUT=<dir> [FOLDS=...] [EXTRA=... TAG=...] texts.sh SEED K PROFILE...
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT TOMACS_PROFILES=$OUT/profiles
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
D=$TOMACS_DATA/debates; MAA=$D/multi-agent-attack/mmlu/adv_100_3_3_1
S=$1; K=$2; shift 2
for P in "$@"; do
  case $P in
    mad-qwen3-8b) M=qwen3-8b; SRC=$D/mad-follower; REP=18;;
    mad-qwen-max) M=qwen-max; SRC=$D/mad-follower; REP=24;;
    maa-gpt35) M=gpt-3.5-turbo; SRC=$MAA-$M-$M;;
    maa-qwen14) M=Qwen1.5-14B-Chat; SRC=$MAA-$M-$M;;
    maa-gpt4o) M=gpt-4o; SRC=$MAA-$M-$M;;
  esac
  files=""
  for k in ${FOLDS:-$(seq 1 $K)}; do
    N=$P-s83-f${k}of$K
    case $P in
      mad-*) RUN="benchmark=debates benchmark.model=$M benchmark.repeats=$REP benchmark.fold=$k/$K attack=mad
        attack.target_letters=[B,A] attack.ordered_onsets=true agents=5 rounds=3";;
      *) RUN="benchmark=mmlu benchmark.test_subset=null agents=3 rounds=3 attack=maa";;
    esac
    [ -s $OUT/profiles/$N.yaml ] || eval $TOM sim fit-episodes $SRC --model $M --name $N --fold $k/$K "> $OUT/$N.fit.txt 2>&1"
    R=$OUT/t500_${N}${TAG:-}_s$S
    [ -s $R/results.json ] || eval $TOM evaluate method=debate $RUN eval.size=500 backbone.profile=$N seed=$S ${EXTRA:-} \
      hydra.run.dir=$R "> $R.log 2>&1"
    [ -s $R.texts.json ] || eval $TOM transcripts texts --sim $R --real $SRC --model $M --fold $k/$K \
      --embedder minilm -o $R.texts.json "> $R.texts.txt 2>&1"
    files="$files $R.texts.json"
    echo "$(date +%T) done $N"
  done
  [ -n "${FOLDS:-}" ] && continue
  eval $TOM transcripts pool $files -o $OUT/pool_$P-s83${TAG:-}_s$S.json "> $OUT/pool_$P-s83${TAG:-}_s$S.txt 2>&1"
done
