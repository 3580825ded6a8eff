# ruff: noqa: E501
# One-off script of the stop-60 session (issue 40): how much of the communication terms' advantage variance the
# round-1 baseline removes. Wraps `covariate_baseline` in a `tomacs train ... method.baseline=round1` run and
# writes, per batch, the variance of ev - batch mean and of ev - the round-1 fit, to $ADVVAR_OUT (jsonl).
# Usage: ADVVAR_OUT=f.jsonl python scripts/oneoff/s60/advvar.py train method=todycomm method.baseline=round1 ...
import json
import os
import sys

import numpy as np

from tomacs.cli import main
from tomacs.methods import todycomm as tc

fit = tc.covariate_baseline
out = os.environ["ADVVAR_OUT"]


def recording(u, x):
    b = fit(u, x)
    u = np.asarray(u, dtype=np.float64)
    n = len(u)
    loo = (u.sum() - u) / (n - 1)
    rec = {"var_mean": float(np.mean((u - loo) ** 2)), "var_round1": float(np.mean((u - b) ** 2)), "n": n}
    with open(out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    return b


tc.covariate_baseline = recording
sys.argv = ["tomacs", *sys.argv[1:]]
main()
