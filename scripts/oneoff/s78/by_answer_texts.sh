#!/usr/bin/env bash
# Issue 38, stop 78: the cross-fitted texts check of stop 77 (git show cb807e3:scripts/oneoff/s77/crossfit.sh,
# fold_texts.sh, own.sh) again for MAD-Follower's models on their own questions, with styles by answer
# (TextModel.by_answer): fold profiles refitted into $OUT/profiles under the names PROFILE-ba-f{k}of{K}, 500
# simulated debates per fold in the source's protocol on the fold's fitting questions, the texts check of each
# fold, and the pool. Usage: WT=<worktree> OUT=<dir> by_answer_texts.sh SEED K PROFILE...
set -u
cd /work/main
export TOMACS_DATA=/work/shared/data HF_HUB_OFFLINE=1 PYTHONPATH=$WT TOMACS_PROFILES=$OUT/profiles
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
TOM="/work/main/.venv/bin/python -P -c 'from tomacs.cli import main; main()'"
SRC=$TOMACS_DATA/debates/mad-follower
S=$1; K=$2; shift 2
for P in "$@"; do
  case $P in
    mad-qwen3-8b) M=qwen3-8b; REP=18;;
    mad-qwen-max) M=qwen-max; REP=24;;
  esac
  files=""
  for k in $(seq 1 $K); do
    N=$P-ba-f${k}of$K
    [ -s $OUT/profiles/$N.yaml ] || eval $TOM sim fit-episodes $SRC --model $M --name $N --fold $k/$K "> $OUT/$N.fit.txt 2>&1"
    R=$OUT/t500_${N}_s$S
    [ -s $R/results.json ] || eval $TOM evaluate method=debate benchmark=debates benchmark.model=$M \
      benchmark.repeats=$REP benchmark.fold=$k/$K attack=mad attack.target_letters=[B,A] attack.ordered_onsets=true \
      agents=5 rounds=3 eval.size=500 backbone.profile=$N seed=$S hydra.run.dir=$R "> $R.log 2>&1"
    [ -s $R.texts.json ] || eval $TOM transcripts texts --sim $R --real $SRC --model $M --fold $k/$K \
      --embedder minilm -o $R.texts.json "> $R.texts.txt 2>&1"
    files="$files $R.texts.json"
    echo "$(date +%T) done $N"
  done
  eval $TOM transcripts pool $files -o $OUT/pool_$P-ba_s$S.json "> $OUT/pool_$P-ba_s$S.txt 2>&1"
done
