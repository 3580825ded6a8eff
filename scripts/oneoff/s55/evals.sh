#!/bin/bash
# re-evaluations of the table runs: best.pt / checkpoint.pt (last epoch), unpaired and paired (eval.seed=0);
# and the seed-0 checkpoints under eval.seed 1-4 (the evaluation's own spread). Frozen code /work/wt55.
cd "$(git rev-parse --show-toplevel)"; export TOMACS_DATA=/work/shared/data
{
for b in mmlu openbookqa; do for a in eq50 gt50; do
  for s in 0 1 2; do
    t=outputs/s55/t_${b}_${a}_s${s}
    for ck in best checkpoint; do
      echo "outputs/s55/e_${b}_${a}_s${s}_${ck}_own|seed=$s checkpoint=$t/$ck.pt benchmark=$b attack=$a"
      echo "outputs/s55/e_${b}_${a}_s${s}_${ck}_paired|seed=$s eval.seed=0 checkpoint=$t/$ck.pt benchmark=$b attack=$a"
    done
  done
  for es in 1 2 3 4; do
    echo "outputs/s55/e_${b}_${a}_s0_best_es${es}|seed=0 eval.seed=$es checkpoint=outputs/s55/t_${b}_${a}_s0/best.pt benchmark=$b attack=$a"
  done
done; done
} | while IFS="|" read d args; do [ -f $d/results.json ] || echo "$d|$args"; done \
  | xargs -P 2 -I{} bash -c 'IFS="|" read d args <<< "{}"; PYTHONPATH=/work/wt55 .venv/bin/python -P -c "from tomacs.cli import main; main()" evaluate method=todycomm $args hydra.run.dir=$d > $d.log 2>&1'
