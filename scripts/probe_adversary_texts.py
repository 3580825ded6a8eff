"""Can a text probe tell the sim's adversarial analyses from honest ones? (issue 13, item 5)

    python scripts/probe_adversary_texts.py                       # mmlu, MiniLM, suffix on and off
    python scripts/probe_adversary_texts.py --embedder hashing    # fast
    python scripts/probe_adversary_texts.py --benchmark synthetic --questions 100

Why: a detector that learns a simulator artefact (a template only adversaries use) instead of what
a real adversary would reveal makes ADAcc on `sim` meaningless. The probe is the issue's: embed
every analysis, fit a logistic regression honest-vs-adversarial, report balanced accuracy under
cross-validation GROUPED BY QUESTION (a probe must not memorise a question's option texts). Real
adversaries' texts give 64-89 %; with `attack.suffix=false` the sim should stay <= 80 %.

Episodes come from the shared executor (`method=complete`, every agent takes part in every round,
so each round yields N texts), exactly as a training or evaluation job would make them. Only rounds
in which an adversary can act (>= the earliest onset) are probed, so honest and adversarial texts
come from the same rounds. A length-only probe (word count) is printed beside it for scale.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def episodes_texts(
    benchmark: str, attack: str, suffix: bool, questions: int, seed: int
) -> tuple[list[str], np.ndarray, list[str], int]:
    """Texts, labels (1 = adversarial), question ids and the earliest onset, from one evaluation run."""
    from tomacs.config import compose
    from tomacs.execution.batches import walk
    from tomacs.job.components import build

    cfg = compose(
        [
            f"benchmark={benchmark}",
            "method=complete",
            f"attack={attack}",
            f"attack.suffix={str(suffix).lower()}",
            "backbone=sim",
            f"eval.size={questions}",
            f"seed={seed}",
            "decision=vote",
        ]
    )
    comps = build(cfg, need_train=False)
    first = min(int(r) for r in cfg.attack.onset_rounds)
    texts: list[str] = []
    labels: list[int] = []
    groups: list[str] = []
    for ep in walk(comps.executor, comps.method, comps.test_qs, 32, train=False, phase="test"):
        for t, outs in enumerate(ep.rounds, start=1):
            if t < first:
                continue
            for o in outs:
                if o.participated:
                    texts.append(o.text)
                    labels.append(int(o.behaviour == "adversarial"))
                    groups.append(ep.question.id)
    return texts, np.asarray(labels), groups, first


def _balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    return float(np.mean([np.mean(pred[y == c] == c) for c in (0, 1) if np.any(y == c)]))


def _group_folds(groups: list[str], k: int) -> list[np.ndarray]:
    """Test-index arrays of k folds; every question lies in exactly one fold (deterministic)."""
    uniq = sorted(set(groups))
    fold_of = {g: i % k for i, g in enumerate(uniq)}
    g = np.array([fold_of[x] for x in groups])
    return [np.flatnonzero(g == i) for i in range(k)]


def _numpy_logreg(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 500) -> Any:
    """Class-balanced L2 logistic regression by gradient descent (used when sklearn is missing)."""
    mu, sd = x.mean(0), x.std(0) + 1e-8
    z = (x - mu) / sd
    w_cls = {c: len(y) / (2.0 * max(1, int(np.sum(y == c)))) for c in (0, 1)}
    sw = np.where(y == 1, w_cls[1], w_cls[0])
    w, b = np.zeros(z.shape[1]), 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(z @ w + b)))
        g = sw * (p - y)
        w -= 0.5 * (z.T @ g / len(y) + l2 * w / len(y))
        b -= 0.5 * float(g.mean())
    return lambda xt: ((((xt - mu) / sd) @ w + b) > 0).astype(int)


def probe(features: np.ndarray, y: np.ndarray, groups: list[str], folds: int = 5) -> float:
    """Balanced accuracy of a class-balanced logistic regression, grouped k-fold by question."""
    pred = np.zeros_like(y)
    try:
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GroupKFold
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        splits = [te for _, te in GroupKFold(n_splits=folds).split(features, y, groups)]

        def fit(xtr: np.ndarray, ytr: np.ndarray) -> Any:
            clf = make_pipeline(StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=2000))
            return clf.fit(xtr, ytr).predict

    except ImportError:
        splits = _group_folds(groups, folds)
        fit = _numpy_logreg  # type: ignore[assignment]
    for te in splits:
        tr = np.setdiff1d(np.arange(len(y)), te)
        pred[te] = fit(features[tr], y[tr])(features[te])
    return _balanced_accuracy(y, pred)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", default="mmlu", help="falls back to synthetic if its data is missing")
    ap.add_argument("--attack", default="eq50")
    ap.add_argument("--questions", type=int, default=153)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    ap.add_argument("--suffix", default="true,false", help="comma-separated attack.suffix settings")
    a = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tomacs.config import ConfigError
    from tomacs.embedding.embedders import get_embedder

    embedder = get_embedder(a.embedder)
    bench = a.benchmark
    for s in a.suffix.split(","):
        suffix = s.strip().lower() in ("1", "true", "yes", "on")
        try:
            texts, y, groups, first = episodes_texts(bench, a.attack, suffix, a.questions, a.seed)
        except (ConfigError, FileNotFoundError, OSError) as exc:
            if bench == "synthetic":
                raise
            print(f"benchmark {bench} unavailable ({exc}); falling back to synthetic", file=sys.stderr)
            bench = "synthetic"
            texts, y, groups, first = episodes_texts(bench, a.attack, suffix, a.questions, a.seed)
        emb = np.asarray(embedder.embed(texts), dtype=np.float64)
        length = np.array([[len(t.split())] for t in texts], dtype=np.float64)
        print(
            f"benchmark={bench} attack={a.attack} attack.suffix={str(suffix).lower()} embedder={a.embedder} "
            f"rounds>={first}: {len(texts)} texts ({int(y.sum())} adversarial, {int((y == 0).sum())} honest) "
            f"from {len(set(groups))} questions | probe balanced acc {probe(emb, y, groups):.3f} | "
            f"length-only {probe(length, y, groups):.3f}"
        )


if __name__ == "__main__":
    main()
