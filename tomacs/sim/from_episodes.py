"""`tomacs calibrate --from-episodes`: fit a profile to real debates, store it, score it on held-out
questions (and on other debates with `--predict`).

Why here and not in cli.py: the CLI only parses options; reading, splitting, fitting, scoring and
writing the profile with its provenance are one workflow that tests drive without a subprocess.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tomacs.sim import fit_choice as fc
from tomacs.sim import fit_episodes as fe
from tomacs.sim import heldout as ho
from tomacs.sim.model import SimProfile, load_profiles
from tomacs.sim.repeats import fit_repeats
from tomacs.sim.text_model import BANKS, KINDS, TextModel, fit_text_model
from tomacs.sim.topic_words import fit_vocabulary
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import Fold
from tomacs.transcripts.split import select_debates as select_debates

MODEL_VARIANT = "tomacs.sim.model update rule (tomacs.debate/1 episodes fit, issue 26)"
PAPER_BASELINE = "mmlu"


def expand_paths(paths: Sequence[str]) -> list[str]:
    """Paths as given, with a quoted glob expanded here (sorted); a missing path fails in one line."""
    out: list[str] = []
    for p in paths:
        if any(ch in p for ch in "*?["):
            hits = sorted(glob.glob(p))
            if not hits:
                raise FileNotFoundError(f"{p}: the pattern matches no file or folder")
            out.extend(hits)
        elif not os.path.exists(p):
            raise FileNotFoundError(
                f"{p}: no such file or folder (pass debate transcripts: episodes.jsonl, "
                "a tomacs.debate/1 JSONL file, or a MAD-Follower run folder)"
            )
        else:
            out.append(p)
    return out


def read_debates(paths: Sequence[str], model: str | None) -> list[Debate]:
    """All debates from `paths`; with `model`, only those with an honest agent of that model."""
    from tomacs.transcripts import load_debates

    debates = list(load_debates(expand_paths(paths)))
    if not debates:
        raise ValueError(f"no debates in {', '.join(paths)}")
    return select_debates(debates, model)


def _summary(ev: dict[str, Any]) -> dict[str, object]:
    ll = ev["loglik_per_answer"]
    return {
        "debates": ev["debates"],
        "questions": ev["questions"],
        "answers": ev["answers"],
        "cells_inside": ev["cells_inside"],
        "cells_total": ev["cells_total"],
        "loglik_per_answer": {k: v for k, v in ll.items() if isinstance(v, float)},
    }


def paper_profile() -> SimProfile:
    return load_profiles()[PAPER_BASELINE]


def write_profile(
    name: str,
    profile: SimProfile,
    provenance: Mapping[str, object],
    out_dir: str | Path | None = None,
    text: TextModel | None = None,
) -> Path:
    """Store the profile where `backbone.profile=NAME` finds it (the profile store, tomacs.sim.profiles),
    with its provenance and text model; `out_dir` writes NAME.yaml there instead."""
    from tomacs.sim.profiles import save_profile

    dest = None if out_dir is None else Path(out_dir) / f"{name}.yaml"
    return Path(save_profile(replace(profile, name=name), provenance, dest, text=text))


def text_summary(tm: TextModel | None) -> dict[str, object] | None:
    """What the provenance says of a fitted text model: per role and phase, replies, median words,
    generic share, discussion rates (later rounds) and bank sizes (the banks themselves are in the
    file's `text` section); its repeat rates and its vocabulary's size."""
    if tm is None:
        return None
    out: dict[str, object] = {}
    for role, by in tm.phases.items():
        for phase, pt in by.items():
            row: dict[str, object] = {
                "replies": pt.replies,
                "median_words": round(pt.words_median(), 1),
                "generic_share": pt.generic_share,
                "bank": {k: len(getattr(pt, k)) for k in BANKS if phase == "later" or k in KINDS},
            }
            if phase == "later":
                row["discuss_rate"] = {"kept": pt.discuss_rate, "changed": pt.discuss_changed_rate}
            out[f"{role}/{phase}"] = row
    if tm.repeats:  # rates by round from 2 (`tomacs.sim.repeats`)
        out["repeats"] = {role: r.to_dict() for role, r in tm.repeats.items()}
    if tm.vocabulary:  # its size (the words are in the file's `text` section)
        out["vocabulary"] = len(tm.vocabulary)
    return out


def _too_few(fit_d: Sequence[Debate]) -> str | None:
    """Why no choice can be made by cross-validation on these fitting debates, or None when one can."""
    n_fit_q = len({d.question_key for d in fit_d})
    if n_fit_q < fc.MIN_CV_QUESTIONS:
        return f"{n_fit_q} fitting questions are too few to choose by cross-validation"
    return None


def _mechanism_choice(
    mechanisms: Sequence[str] | None,
    fit_d: Sequence[Debate],
    model: str | None,
    seed: int,
    by_benchmark: bool,
    by_sender: bool,
) -> tuple[list[str], dict[str, Any]]:
    """The mechanisms a profile carries, and what the provenance says of their choice."""
    few = _too_few(fit_d)
    if mechanisms is None and few:
        return [], {"rule": f"none: {few}"}
    if mechanisms is None:
        kept, scores = fc.select_mechanisms(
            fit_d, model, seed=seed, by_benchmark=by_benchmark, by_sender=by_sender
        )
        return kept, {
            "rule": f"kept when it beats none by more than {fc.MIN_CV_GAIN:g} nats per answer in "
            f"{fc.CV_FOLDS}-fold cross-validation by question on the fitting questions",
            "cv_loglik_per_answer": {k: round(v, 6) for k, v in scores.items()},
        }
    unknown = [m for m in mechanisms if m not in fe.MECHANISMS]
    if unknown:
        raise ValueError(f"unknown mechanism(s) {', '.join(unknown)}; known: {', '.join(fe.MECHANISMS)}")
    return list(mechanisms), {"rule": "given (--mechanisms)"}


def _shrink_strength(
    shrink: float | None,
    fit_d: Sequence[Debate],
    paper: SimProfile,
    model: str | None,
    kept: Sequence[str],
    seed: int,
    by_benchmark: bool,
    by_sender: bool,
    restarts: int,
    fixed: dict[str, float] | None = None,
) -> tuple[float, dict[str, Any]]:
    """The strength of the pull toward the paper profile, and what the provenance says of its choice
    (`fixed`: fields every fold's fit holds, such as the chosen lapse)."""
    if shrink is not None:
        if shrink < 0:
            raise ValueError(f"--shrink must be auto or >= 0 (got {shrink})")
        return shrink, {"strength": shrink, "prior": paper.name, "rule": "given (--shrink)"}
    if few := _too_few(fit_d):
        return 0.0, {"strength": 0.0, "prior": paper.name, "rule": f"0: {few}"}
    strength, scores = fc.choose_shrink(
        fit_d,
        paper,
        model,
        kept,
        seed=seed,
        by_benchmark=by_benchmark,
        by_sender=by_sender,
        restarts=restarts,
        fixed=fixed,
    )
    return strength, {
        "strength": strength,
        "prior": paper.name,
        "rule": f"the strength of {list(fc.SHRINK_GRID)} with the best log-lik per answer in "
        f"{fc.CV_FOLDS}-fold cross-validation by question on the fitting questions, each fold fitted "
        f"from the profile's {restarts} starts, the prior and the last strength's optimum (the weaker "
        f"within {fc.MIN_CV_GAIN:g})",
        "cv_loglik_per_answer": {f"{k:g}": round(v, 6) for k, v in scores.items()},
    }


def _lapse_rate(
    lapse: float | None,
    fit_d: Sequence[Debate],
    model: str | None,
    kept: Sequence[str],
    seed: int,
    by_benchmark: bool,
    by_sender: bool,
    restarts: int,
) -> tuple[float, dict[str, Any]]:
    """The profile's lapse rate, and what the provenance says of its choice."""
    if lapse is not None:
        if not 0.0 <= lapse < 1.0:
            raise ValueError(f"--lapse must be auto or in [0, 1) (got {lapse})")
        return lapse, {"rate": lapse, "rule": "given (--lapse)"}
    if few := _too_few(fit_d):
        return 0.0, {"rate": 0.0, "rule": f"0: {few}"}
    rate, scores = fc.choose_lapse(
        fit_d, model, kept, seed=seed, by_benchmark=by_benchmark, by_sender=by_sender, restarts=restarts
    )
    return rate, {
        "rate": rate,
        "rule": f"the rate of {list(fc.LAPSE_GRID)} with the best log-lik per answer in {fc.CV_FOLDS}-fold "
        f"cross-validation by question on the fitting questions, held fixed in each fold's fit (the smaller "
        f"within {fc.MIN_CV_GAIN:g})",
        "cv_loglik_per_answer": {f"{k:g}": round(v, 6) for k, v in scores.items()},
    }


def run(
    paths: Sequence[str],
    name: str,
    split: float = 0.7,
    split_seed: int = 0,
    model: str | None = None,
    predict: Sequence[str] = (),
    draws: int = 400,
    restarts: int = 3,
    seed: int = 0,
    out_dir: str | Path | None = None,
    by_benchmark: bool = True,
    by_sender: bool = True,
    mechanisms: Sequence[str] | None = None,
    shrink: float | None = 0.0,
    lapse: float | None = 0.0,
    fold: Fold | None = None,
) -> dict[str, Any]:
    """Fit on the fitting share of the questions, score on the held-out share (and on `predict`),
    write the profile. Returns everything the CLI prints.

    `fold` (k of K) holds out that fold of the questions instead of `split`'s share: one fit of a cross-fit
    (`tomacs.transcripts.split.split_questions`); the provenance records it.

    `mechanisms`: None chooses among `fit_episodes.MECHANISMS` by cross-validation on the fitting
    questions (`select_mechanisms`); a list fits exactly those (empty: none).

    `lapse`: the profile's lapse rate (`SimProfile.lapse`), held fixed in the fit; None chooses it by
    cross-validation on the fitting questions (`choose_lapse`), after the mechanisms.

    `shrink`: the pull toward the paper profile (`fit_episodes.fit`); None chooses it by cross-validation
    on the fitting questions (`choose_shrink`), after the mechanisms and the lapse; 0 is the plain maximum
    likelihood."""
    if not name:
        raise ValueError("--name is empty: give a plain profile name, e.g. --name my-model")
    from tomacs.sim.profiles import _check_name

    _check_name(name, "--name")  # before the fit, not after it
    debates = read_debates(paths, model)
    held: list[Debate]
    if split >= 1.0 and fold is None:
        fit_d, held = list(debates), []
    else:
        fit_d, held = fe.split_questions(debates, split, split_seed, fold)
    kept, choice = _mechanism_choice(mechanisms, fit_d, model, split_seed, by_benchmark, by_sender)
    rate, lapsing = _lapse_rate(lapse, fit_d, model, kept, split_seed, by_benchmark, by_sender, restarts)
    fixed = {"lapse": rate} if rate else None
    paper = paper_profile()
    strength, shrinking = _shrink_strength(
        shrink, fit_d, paper, model, kept, split_seed, by_benchmark, by_sender, restarts, fixed
    )
    res = fe.fit(
        fit_d,
        name=name,
        model=model,
        restarts=restarts,
        extra=kept,
        fit_lure=True,
        by_benchmark=by_benchmark,
        by_sender=by_sender,
        prior=paper,
        shrink=strength,
        fixed=fixed,
    )
    choice["kept"] = {m: round(float(getattr(res.profile, m)), 6) for m in kept}
    choice["dropped"] = [m for m in fe.MECHANISMS if m not in kept]
    lure = res.target_lure
    acc_by, pers_by = res.accuracy_by_benchmark, res.persuasion_by_model
    # the texts of the same fitting questions (never a held-out one): how the model writes
    tm = fit_text_model(fit_d, seed=split_seed, source=", ".join(str(p) for p in paths))
    if tm is not None:  # how often its agents send a reply of the round before again, and their words
        tm = replace(tm, repeats=fit_repeats(fit_d), vocabulary=fit_vocabulary(fit_d))
    out: dict[str, Any] = {
        "profile": res.profile.to_dict(),
        "fit": {
            "debates": res.n_debates,
            "questions": res.n_questions,
            "answers": res.n_answers,
            "loglik_per_answer": res.loglik / res.n_answers,
            "seconds": res.seconds,
            "converged": res.converged,
            "target_lure": lure,
            "accuracy_by_benchmark": acc_by,
            "questions_by_benchmark": res.questions_by_benchmark,
            "persuasion_by_model": pers_by,
            "persuasive_messages_by_model": res.messages_by_model,
            "mechanisms": choice,
            "shrink": shrinking,
            "lapse": lapsing,
        },
    }

    def evaluate(debates: list[Any]) -> dict[str, object]:
        """The held-out table of `debates` under this fit (the same replay for both uses)."""
        return ho.evaluate(
            res.profile,
            debates,
            model,
            fit_d,
            paper,
            draws=draws,
            seed=seed,
            lure=lure,
            acc_by=acc_by,
            pers_by=pers_by,
        )

    if held:
        out["held_out"] = evaluate(held)
    if predict:
        out["predict"] = evaluate(read_debates(predict, model))
        out["predict"]["sources"] = list(predict)
    models = sorted({m for d in fit_d for m in fe.debate_models(d)})
    provenance: dict[str, Any] = {
        "sources": [str(p) for p in paths],
        "debates_fit": len(fit_d),
        "debates_held_out": len(held),
        "questions_fit": res.n_questions,
        "questions_held_out": out["held_out"]["questions"] if held else 0,
        "answers_fit": res.n_answers,
        "models": [model] if model else models,
        "fit_date": fe.fit_date(),
        "split": split if fold is None else round(1 - 1 / fold.of, 6),
        **({"fold": str(fold)} if fold is not None else {}),
        "split_seed": split_seed,
        "fit_loglik_per_answer": round(res.loglik / res.n_answers, 6),
        "model_variant": MODEL_VARIANT
        + ("; accuracy per benchmark" if acc_by and len(acc_by) > 1 else "")
        + ("; persuasion per sender model" if pers_by and len(pers_by) > 1 else ""),
        "fitted": list(fe.FIT_PARAMS) + kept + ["compliance (adversaries' target rate)"],
        "mechanisms": choice,
        "lapse": lapsing,
        "shrink": shrinking,
        # the source's rule for choosing targets, not the agents' behaviour: P(the question's lure is
        # the adversaries' target); the simulator draws targets independently of the lure
        "target_lure": None if lure is None else round(lure, 6),
        "target_lure_questions": res.target_lure_questions,
    }
    if acc_by:
        # fitted per benchmark; the profile's `accuracy` is their question-weighted mean (the mean
        # competence of the fitted questions), which also stands for any benchmark not fitted
        provenance["accuracy_by_benchmark"] = {k: round(v, 6) for k, v in acc_by.items()}
        provenance["questions_by_benchmark"] = res.questions_by_benchmark
        provenance["accuracy_stored"] = "question-weighted mean of accuracy_by_benchmark"
    if pers_by:
        # fitted per adversary (sender) model; the profile's `persuasion` is the fitted model's own
        # adversaries' (the simulator's adversaries are its own backbone), else the most-read model's
        provenance["persuasion_by_model"] = {k: round(v, 6) for k, v in pers_by.items()}
        provenance["persuasive_messages_by_model"] = res.messages_by_model
        provenance["persuasion_stored"] = (
            f"persuasion_by_model[{model}] (the fitted model's own adversaries)"
            if model in pers_by
            else "persuasion_by_model of the sender model read most often"
        )
    provenance["text_model"] = text_summary(tm) or "none (the transcripts have no texts): App. D's texts"
    out["text_model"] = text_summary(tm)
    if held:
        provenance["held_out"] = _summary(out["held_out"])
    if predict:
        provenance["predict"] = {"sources": list(predict), **_summary(out["predict"])}
    out["provenance"] = provenance
    out["path"] = str(write_profile(name, replace(res.profile, name=name), provenance, out_dir, tm).resolve())
    return out
