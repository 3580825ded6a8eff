"""Issue 39/38, stop 65 prototype: a weight on the persuasive messages read by an honest agent whose previous
answer is the gold (`gold_weight`, eta; 1 = today's rule), fixed at ETA, everything else fitted as the
shipped profiles are (no mechanism, lapse 0, lure free); prints the fitting and held-out log-lik per answer,
the cells inside and the fitted lure. Usage: gold.py PATH MODEL ETA [ETA ...]"""

from __future__ import annotations

import json
import sys

import numpy as np

from tomacs.sim import fit_episodes as fe
from tomacs.sim import from_episodes as fx
from tomacs.sim import heldout as ho

ETA = [1.0]
_orig = fe.own_and_message_logits


def patched(profile, s_honest, s_pers, prev, first, pers_scale=None, later=None):  # type: ignore[no-untyped-def]
    if ETA[0] != 1.0:
        s_pers = s_pers * np.where(prev == 0, ETA[0], 1.0)[..., None]
    return _orig(profile, s_honest, s_pers, prev, first, pers_scale=pers_scale, later=later)


fe.own_and_message_logits = patched
path, model = sys.argv[1], sys.argv[2]
deb = fx.read_debates([path], model)
fit_d, held = fe.split_questions(deb, 0.7, 0)
for eta in map(float, sys.argv[3:]):
    ETA[0] = eta
    res = fe.fit(
        fit_d,
        name="x",
        model=model,
        restarts=3,
        fit_lure=True,
        by_benchmark=True,
        by_sender=True,
        prior=fx.paper_profile(),
        shrink=0.0,
    )
    ev = ho.evaluate(
        res.profile,
        held,
        model,
        fit_d,
        fx.paper_profile(),
        draws=400,
        seed=0,
        lure=res.target_lure,
        acc_by=res.accuracy_by_benchmark,
        pers_by=res.persuasion_by_model,
    )
    s = fx._summary(ev)
    print(
        json.dumps(
            {
                "eta": eta,
                "lure": res.target_lure,
                "fit_ll": round(res.loglik / res.n_answers, 4),
                "held_ll": s["loglik_per_answer"],
                "cells": f"{s['cells_inside']}/{s['cells_total']}",
                "sec": round(res.seconds, 1),
            }
        ),
        flush=True,
    )
