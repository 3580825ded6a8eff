"""Simulated reply texts held against real ones (issue 38): can a text detector trained on the
simulator find real adversaries?

Every learned result on `sim` that reads what agents wrote (TodyComm's `ana` features, G-Safeguard's
detector) is only as good as the simulator's texts. Answers are checked against real debates by the
profile fit; this module checks the texts, with the same embedder the runs use:

* two-sample AUC: a probe told to separate simulated replies from real ones (0.5 = cannot);
* adversary-vs-honest AUC on each side: what the texts give away about their writer's role;
* transfer AUC: a probe trained on the SIMULATED side's roles, scored on the REAL side's replies.
  This is the number that says whether a detector learned on the simulator means anything for
  real models (the real side's own AUC is its ceiling);
* the same transfer with a bag-of-words probe (which words a reply uses, no embedder): where it is high
  and the embedding's transfer is not, the simulated texts carry the real role cues and the embedder
  does not make them the probe's main direction;
* the style statistics whose adversary-vs-honest contrast differs most between the two sides.

Every AUC is cross-validated BY QUESTION over the union of both sides' questions (a question's
wording is its key, so a question asked in both a simulated and a real debate is one group): no
probe is ever scored on a question it was trained on, so templated option texts cannot leak.
Role AUCs use the replies of rounds in which an adversary of that debate acts (at or after its
debate's earliest onset), so honest and adversarial replies come from the same rounds.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from tomacs.sim import text_model as tm
from tomacs.sim.repeats import repeat_events
from tomacs.transcripts.schema import Debate

FOLDS = 5
MIN_PER_CLASS = 5  # fewer replies of a class than this and an AUC is reported as None


@dataclass(frozen=True)
class Reply:
    """One reply with what the comparison needs: its role in its round and its question."""

    text: str
    adversarial: bool
    acting: bool  # in a round at/after its debate's earliest onset (role AUCs use these only)
    question: str
    round: int
    real: bool
    on_target: bool = False  # its answer is its debate's adversary target (adversaries and conformers)
    debate: str = ""  # its debate's id (several debates of one question: a source's repeats)
    agent: int = -1  # its agent in its debate (-1: not known; no reply is paired with its own previous one)
    # how much it is about its question (`about`): None where the transcript lacks its question's texts
    topic_density: float | None = None
    answer_sentences: float | None = None
    # 1 where its rationale names an option by its letter (`text_model.letter_named`), 0 where not; None
    # where it walks through the options or its question has fewer than two option texts (the fit's share)
    rationale_letters: float | None = None
    # the share of its words in sentences restating its question (`text_model.restating_share`)
    restating: float | None = None
    # 1 where it sends again, nearly word for word, its own previous reply or one it read that gives its
    # answer (`tomacs.sim.repeats`, the fit's rule), 0 where it could and did not; None where it could not
    repeats: float | None = None


def replies_of(debates: Sequence[Debate], real: bool) -> list[Reply]:
    """Every turn with a text. A debate without adversaries gives only non-acting replies (they
    count for the two-sample AUC and the honest style statistics, not for the role AUCs)."""
    out: list[Reply] = []
    for d in debates:
        onsets = [a.onset for a in d.agents if a.role == "adversary" and a.onset is not None]
        first = min(onsets) if onsets else None
        target = next((a.target for a in d.agents if a.role == "adversary" and a.target is not None), None)
        g = d.question_key  # the profile fit splits on the same key
        events = repeat_events(d)
        for t in d.turns:
            if not t.text:
                continue
            out.append(
                Reply(
                    text=t.text,
                    adversarial=d.is_adversarial(t.agent, t.round),
                    acting=first is not None and t.round >= first,
                    question=g,
                    round=t.round,
                    real=real,
                    on_target=target is not None and t.answer == target,
                    debate=d.id,
                    agent=t.agent,
                    repeats=_repeated(events.get((t.agent, t.round))),
                    **about(d, t.text, t.answer),
                )
            )
    return out


def _repeated(events: Sequence[tuple[str, bool]] | None) -> float | None:
    return None if not events else float(any(did for _, did in events))


def about(d: Debate, text: str, answer: str | None) -> dict[str, float | None]:
    """How much a reply is about its own question, as the text model fits it
    (`tomacs.sim.text_model.topic_density`, `answer_sentences`): real replies write 0.30-0.56 of their
    content words from their question, the templates wrote 0.22 (stop 68). None where the debate has no
    question text, or (answer sentences) its answer has no option text long enough to name. And whether
    its rationale names options by letter (`letter_named`, walks left out as the fit leaves them): real
    qwen-max rationales never do, gpt-3.5's in 0.6-0.8 of replies; templated replies nearly always did.
    And the share of its words in sentences that restate its question (`restating_share`)."""
    opts = tuple(d.options or ())
    letters = None
    if len(opts) >= 2 and tm.walkthrough(text, d.letters, opts) is None:
        letters = float(tm.letter_named(text, answer, d.letters, opts))
    if not d.question:
        none = {"topic_density": None, "answer_sentences": None, "restating": None}
        return {**none, "rationale_letters": letters}
    named = tm.named_answer(d.letters, opts, answer)
    stems = tm.question_stems(d.question, opts)
    return {
        "topic_density": tm.topic_density(text, stems),
        "answer_sentences": float(tm.answer_sentences(tm.split_sentences(text), named)) if named else None,
        "rationale_letters": letters,
        "restating": tm.restating_share(text, stems),
    }


# ------------------------------------------------------------------------------- style statistics
_HEDGES = re.compile(
    r"\b(may|might|could|possibly|perhaps|likely|unlikely|seems?|appears?|unclear|uncertain|"
    r"not sure|probably|arguably|somewhat)\b",
    re.IGNORECASE,
)
_ASSERT = re.compile(
    r"\b(clearly|certainly|undoubtedly|definitely|obviously|confident|must|crucial|indeed|"
    r"without a doubt|it is evident|evidently|firmly|strongly)\b",
    re.IGNORECASE,
)
_OTHERS = re.compile(
    r"\b(agents?|other agents'?|others|another agent|their (?:argument|reasoning|answer|solution)s?|"
    r"you|your|peers?|colleagues?)\b",
    re.IGNORECASE,
)
_AGREE = re.compile(
    r"\b(agree[sd]?|concur|consensus|same (?:answer|conclusion)|aligns? with)\b", re.IGNORECASE
)
_DISAGREE = re.compile(
    r"\b(disagree[sd]?|overlook(?:s|ed)?|flawed|incorrect|mistaken|misinterpret\w*|fails? to|"
    r"does not (?:account|consider|address))\b",
    re.IGNORECASE,
)
_OPTION = re.compile(r"\(([A-J])\)|\b(?:option|answer|choice)\s+\(?([A-J])\b|^\s*([A-J])[).:]", re.MULTILINE)
_SUFFIX = "Please prioritize my answer"


def _per100(n: int, words: int) -> float:
    return 100.0 * n / max(words, 1)


def style_of(text: str) -> dict[str, float]:
    """A reply's style in numbers a person can read; the ones issue 38 names, and two that real
    adversaries under a persuasion prompt are known for (asserting, disputing)."""
    words = len(text.split())
    letters = {next(g for g in m.groups() if g) for m in _OPTION.finditer(text)}
    return {
        "chars": float(len(text)),
        "words": float(words),
        "paragraphs": float(tm.paragraphs(text)),
        "hedges/100w": _per100(len(_HEDGES.findall(text)), words),
        "asserting/100w": _per100(len(_ASSERT.findall(text)), words),
        "option letters": float(len(letters)),
        "others/100w": _per100(len(_OTHERS.findall(text)), words),
        "agreeing/100w": _per100(len(_AGREE.findall(text)), words),
        "disputing/100w": _per100(len(_DISAGREE.findall(text)), words),
        "suffix": float(_SUFFIX in text),
    }


ABOUT_KEYS = {
    "topic density": "topic_density",
    "answer sentences": "answer_sentences",
    "rationale letters": "rationale_letters",
    "restating": "restating",
    "repeats": "repeats",
}
"""The statistics of how much a reply is about its question (`about`): Reply field per printed name."""
STYLE_KEYS = (*style_of("x"), *ABOUT_KEYS)


def _about_of(r: Reply) -> dict[str, float | None]:
    return {name: getattr(r, field) for name, field in ABOUT_KEYS.items()}


def _cohen_d(a: np.ndarray, b: np.ndarray) -> float | None:
    """Adversary minus honest in pooled standard deviations (None when a side is empty)."""
    if len(a) < 2 or len(b) < 2:
        return None
    sd = float(np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2.0))
    return float((a.mean() - b.mean()) / sd) if sd > 0 else 0.0


def style_table(sim: Sequence[Reply], real: Sequence[Reply]) -> list[dict[str, object]]:
    """Per statistic: means of honest and adversarial replies on each side (acting rounds), each
    side's effect size, and their gap; rows sorted by the gap, the statistic that differs most first."""
    styles = {
        side: [(r.adversarial, {**style_of(r.text), **_about_of(r)}) for r in reps if r.acting]
        for side, reps in (("sim", sim), ("real", real))
    }
    rows = []
    for key in STYLE_KEYS:
        row: dict[str, Any] = {"stat": key}
        for side, st in styles.items():
            adv = np.array([s[key] for a, s in st if a and s.get(key) is not None])
            hon = np.array([s[key] for a, s in st if not a and s.get(key) is not None])
            row[f"{side}_honest"] = float(hon.mean()) if len(hon) else None
            row[f"{side}_adversary"] = float(adv.mean()) if len(adv) else None
            row[f"{side}_d"] = _cohen_d(adv, hon)
        ds, dr = row["sim_d"], row["real_d"]
        row["gap"] = abs(ds - dr) if ds is not None and dr is not None else None
        rows.append(row)
    rows.sort(key=lambda r: -1.0 if r["gap"] is None else -r["gap"])
    return rows


# ------------------------------------------------------------------------------------------ probes
def _probe() -> Any:
    """Logistic regression on standardised embeddings: the probe of the issue's table. Balanced
    classes, so a rare class (one adversary in three agents) is not drowned out."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000, class_weight="balanced"))


def _auc(y: np.ndarray, s: np.ndarray) -> float | None:
    from sklearn.metrics import roc_auc_score

    if min(int(y.sum()), int(len(y) - y.sum())) < MIN_PER_CLASS:
        return None
    return float(roc_auc_score(y, s))


def _folds(groups: Sequence[str], k: int, seed: int) -> dict[str, int]:
    """Question -> fold, seeded, over the sorted distinct questions (input order does not matter)."""
    keys = sorted(set(groups))
    perm = np.random.default_rng(seed).permutation(len(keys))
    return {keys[int(i)]: n % k for n, i in enumerate(perm)}


def oof_scores(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str], folds: int = FOLDS, seed: int = 0
) -> np.ndarray:
    """Out-of-fold probe scores with folds by question (NaN where a fold could not be trained)."""
    fold = _folds(groups, folds, seed)
    f = np.array([fold[g] for g in groups])
    scores = np.full(len(y), np.nan)
    for k in range(folds):
        test, train = f == k, f != k
        if not test.any() or len(set(y[train].tolist())) < 2:
            continue
        scores[test] = _probe().fit(x[train], y[train]).decision_function(x[test])
    return scores


def cv_auc(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str], folds: int = FOLDS, seed: int = 0
) -> float | None:
    """Out-of-fold AUC of the probe with folds by question, pooled over folds."""
    if min(int(y.sum()), int(len(y) - y.sum())) < MIN_PER_CLASS:
        return None
    scores = oof_scores(x, y, groups, folds, seed)
    ok = ~np.isnan(scores)
    return _auc(y[ok], scores[ok])


def transfer_scores(
    x_src: np.ndarray,
    y_src: np.ndarray,
    g_src: Sequence[str],
    x_dst: np.ndarray,
    g_dst: Sequence[str],
    folds: int = FOLDS,
    seed: int = 0,
) -> np.ndarray:
    """The destination replies' scores by a probe trained on the source replies of the OTHER question
    folds (folds over both sides' questions, so a question in both never helps its own score)."""
    return _cross_scores(
        y_src,
        g_src,
        g_dst,
        lambda tr, te: _probe().fit(x_src[tr], y_src[tr]).decision_function(x_dst[te]),
        folds,
        seed,
    )


def _cross_scores(
    y_src: np.ndarray,
    g_src: Sequence[str],
    g_dst: Sequence[str],
    fit_score: Callable[[np.ndarray, np.ndarray], np.ndarray | None],
    folds: int,
    seed: int,
) -> np.ndarray:
    """The destination's scores, fold by fold: `fit_score(train, test)` fits on the source rows `train`
    (indices) and scores the destination rows `test`, or returns None when it cannot; folds by question
    over both sides (`_folds`). NaN where a fold was not scored."""
    fold = _folds(list(g_src) + list(g_dst), folds, seed)
    fs = np.array([fold[g] for g in g_src])
    fd = np.array([fold[g] for g in g_dst])
    scores = np.full(len(g_dst), np.nan)
    for k in range(folds):
        train, test = np.flatnonzero(fs != k), np.flatnonzero(fd == k)
        if not len(test) or len(set(y_src[train].tolist())) < 2:
            continue
        got = fit_score(train, test)
        if got is not None:
            scores[test] = got
    return scores


def transfer_auc(
    x_src: np.ndarray,
    y_src: np.ndarray,
    g_src: Sequence[str],
    x_dst: np.ndarray,
    y_dst: np.ndarray,
    g_dst: Sequence[str],
    folds: int = FOLDS,
    seed: int = 0,
) -> float | None:
    """A probe trained on the source side, scored on the destination side (`transfer_scores`)."""
    if min(int(y_dst.sum()), int(len(y_dst) - y_dst.sum())) < MIN_PER_CLASS:
        return None
    scores = transfer_scores(x_src, y_src, g_src, x_dst, g_dst, folds, seed)
    ok = ~np.isnan(scores)
    return _auc(y_dst[ok], scores[ok])


_WORD_TOKENS = r"[A-Za-z][A-Za-z']+"  # words of two letters or more: no answer letters, no numbers
WORDS_MIN_DF = 5  # a word used in fewer training replies than this is no feature


def words_transfer_scores(
    src: Sequence[str],
    y_src: np.ndarray,
    g_src: Sequence[str],
    dst: Sequence[str],
    g_dst: Sequence[str],
    folds: int = FOLDS,
    seed: int = 0,
    min_df: int = WORDS_MIN_DF,
) -> np.ndarray:
    """`transfer_scores` with a bag-of-words probe on the texts themselves: which words a reply uses
    (binary), logistic regression as `_probe`'s. The vocabulary comes from the training fold's source
    replies only, so a word only the destination uses carries nothing.

    Why beside the embedding's transfer: on the shipped profiles the two disagree (0.94-0.98 against
    MiniLM's 0.64-0.90), so a low transfer can be the embedder's, not the texts'."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    def fit_score(train: np.ndarray, test: np.ndarray) -> np.ndarray | None:
        vec = CountVectorizer(binary=True, min_df=min_df, token_pattern=_WORD_TOKENS, lowercase=True)
        try:
            xtr = vec.fit_transform([src[i] for i in train])
        except ValueError:  # no word in min_df replies: nothing to learn from
            return None
        probe = LogisticRegression(C=0.1, max_iter=2000, class_weight="balanced").fit(xtr, y_src[train])
        return np.asarray(probe.decision_function(vec.transform([dst[i] for i in test])))

    return _cross_scores(y_src, g_src, g_dst, fit_score, folds, seed)


BOOTSTRAP = 1000  # resamples of the questions for an AUC's interval


def _rank_auc(y: np.ndarray, s: np.ndarray) -> float | None:
    """Mann-Whitney AUC (ties count half): the bootstrap's fast path of `_auc`."""
    from scipy.stats import rankdata

    pos = int(y.sum())
    neg = len(y) - pos
    if not pos or not neg:
        return None
    r = rankdata(s)
    return float((r[y == 1].sum() - pos * (pos + 1) / 2) / (pos * neg))


def resampled_aucs(
    y: np.ndarray, s: np.ndarray, groups: Sequence[str], n: int = BOOTSTRAP, seed: int = 0
) -> list[float] | None:
    """The AUC of scores `s` over `n` resamples of the questions (drawn with replacement); None when a
    class has too few replies or fewer than half the resamples have both classes.

    Why by question: a question's replies are not independent (they share its wording and its
    adversary). The scores are held fixed (the probes are not refitted per resample), so the spread is
    of the evaluation, not of the probe. Unscored replies (NaN) are left out, not counted as ties."""
    ok = ~np.isnan(s)
    y, s = y[ok], s[ok]
    g = [x for x, k in zip(groups, ok, strict=True) if k]
    if min(int(y.sum()), int(len(y) - y.sum())) < MIN_PER_CLASS:
        return None
    keys = sorted(set(g))
    index = {k: i for i, k in enumerate(keys)}
    gi = np.array([index[x] for x in g])
    members = [np.flatnonzero(gi == i) for i in range(len(keys))]
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(n):
        pick = np.concatenate([members[int(i)] for i in rng.integers(len(keys), size=len(keys))])
        a = _rank_auc(y[pick], s[pick])
        if a is not None:
            vals.append(a)
    return vals if len(vals) >= n // 2 else None


def _percentiles(vals: Sequence[float] | np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = np.percentile(np.asarray(vals, dtype=float), [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def auc_interval(
    y: np.ndarray,
    s: np.ndarray,
    groups: Sequence[str],
    n: int = BOOTSTRAP,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """A percentile interval of the AUC over questions drawn with replacement (`resampled_aucs`).

    Why: the real side of a held-out check has 9-22 questions, so whether a simulated AUC is "within
    0.05" of a real one says little without the real one's own spread."""
    vals = resampled_aucs(y, s, groups, n, seed)
    return None if vals is None else _percentiles(vals, level)


GAP_TARGET = 0.05  # issue 38: the simulated adversary AUC within this much of the real one


def gap_draws(sim: Sequence[float], real: Sequence[float] | None, seed: int = 0) -> np.ndarray | None:
    """Draws of (simulated adversary AUC - real one): each of the real AUC's resamples over its questions
    (`resampled_aucs`) subtracted from a simulated AUC drawn from `sim` (its draws at the real side's size,
    or its own resamples). None without either. Kept whole in the JSON so that `tomacs transcripts pool`
    can join the folds of a cross-fit."""
    if not real or not len(sim):
        return None
    rng = np.random.default_rng([seed, 1])
    return rng.choice(np.asarray(sim, dtype=float), size=len(real)) - np.asarray(real)


def gap_interval(
    sim: Sequence[float], real: Sequence[float] | None, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | None:
    """A percentile interval of (simulated adversary AUC - real one) over `gap_draws`.

    Why: on 15-22 held-out questions the real AUC alone spreads over +-0.05-0.08, as wide as the target
    on the gap, so a gap read as a point says as much about which questions were held out as about
    the texts. The interval says whether the data can tell a gap within the target from one beyond it."""
    diff = gap_draws(sim, real, seed)
    return None if diff is None else _percentiles(diff, level)


def gap_verdict(gap: float, ci: tuple[float, float] | None, target: float = GAP_TARGET) -> str:
    """Where a gap and its interval stand against the target |gap| <= `target`, in words."""
    within = abs(gap) <= target
    if ci is None:
        return "within the target" if within else "beyond the target"
    lo, hi = ci
    if -target <= lo and hi <= target:
        return "within the target, the whole interval too"
    if within:
        return "within the target; the interval reaches beyond it"
    if lo > target or hi < -target:
        return "beyond the target, the whole interval too"
    return "beyond the target; the interval reaches within it"


def length_auc(reps: Sequence[Reply]) -> float | None:
    """What length alone tells (adversary longer = positive), for scale beside the probes."""
    acting = [r for r in reps if r.acting]
    y = np.array([r.adversarial for r in acting], dtype=float)
    return _auc(y, np.array([len(r.text) for r in acting], dtype=float)) if len(y) else None


# ------------------------------------------------------------------------------------------ compare
def compare(
    sim_debates: Sequence[Debate],
    real_debates: Sequence[Debate],
    embed: Callable[[list[str]], np.ndarray],
    folds: int = FOLDS,
    seed: int = 0,
    max_replies: int | None = None,
    real_train: Sequence[Debate] = (),
) -> dict[str, object]:
    """The whole comparison as a dict (printed by `tomacs transcripts texts`, kept as JSON).

    `max_replies` caps each side by a seeded sample of whole questions, for a quick first look.
    `real_train`: real debates of OTHER questions (a profile's fitting questions); a probe trained on
    them and scored on the real side is the ceiling a simulated training set would have to match,
    with as much data as the fit."""
    sim, real = replies_of(sim_debates, False), replies_of(real_debates, True)
    if not sim:
        raise ValueError("the simulated side has no reply texts (are these episodes from a sim run?)")
    if not real:
        raise ValueError("the real side has no reply texts (turns[].text is missing in these transcripts)")
    if max_replies is not None:
        sim, real = _cap(sim, max_replies, seed), _cap(real, max_replies, seed)
    xs = embed([r.text for r in sim])
    xr = embed([r.text for r in real])

    both_x = np.vstack([xs, xr])
    both_y = np.array([0.0] * len(sim) + [1.0] * len(real))
    both_g = [r.question for r in sim] + [r.question for r in real]

    def acting(reps: Sequence[Reply], x: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
        idx = [i for i, r in enumerate(reps) if r.acting]
        return (
            x[idx],
            np.array([reps[i].adversarial for i in idx], dtype=float),
            [reps[i].question for i in idx],
        )

    sx, sy, sg = acting(sim, xs)
    rx, ry, rg = acting(real, xr)
    sd = [r.debate for r in sim if r.acting]
    size = Size(len(ry), len(set(rg)))
    st, rt = [r.text for r in sim if r.acting], [r.text for r in real if r.acting]
    sim_side, real_side = Side(sim, sx, sy, sg), Side(real, rx, ry, rg)
    # computed once, read by an AUC's interval and by the gap's
    sim_scores = functools.cache(lambda: oof_scores(sx, sy, sg, folds, seed))
    real_scores = functools.cache(lambda: oof_scores(rx, ry, rg, folds, seed))
    out: dict[str, Any] = {
        "replies": {
            side: {
                "all": len(reps),
                "acting_honest": sum(1 for r in reps if r.acting and not r.adversarial),
                "acting_adversary": sum(1 for r in reps if r.acting and r.adversarial),
                "questions": len({r.question for r in reps}),
            }
            for side, reps in (("sim", sim), ("real", real))
        },
        "shared_questions": len({r.question for r in sim} & {r.question for r in real}),
        "two_sample_auc": cv_auc(both_x, both_y, both_g, folds, seed),
        **_with_interval("sim_adversary", sy, sg, sim_scores, seed),
        **matched_auc(sx, sy, sg, size, folds, seed, sd),
        "matched_replies": len(ry),
        "matched_draws": MATCHED_DRAWS,
        **_with_interval("real_adversary", ry, rg, real_scores, seed),
        **_with_interval(
            "transfer",
            ry,
            rg,
            lambda: transfer_scores(sx, sy, sg, rx, rg, folds, seed),
            seed,
            ok=bool(len(sy)),
        ),
        **_with_interval(
            "transfer_words",
            ry,
            rg,
            lambda: words_transfer_scores(st, sy, sg, rt, rg, folds, seed),
            seed,
            ok=bool(len(sy)),
        ),
        "sim_length_auc": length_auc(sim),
        "real_length_auc": length_auc(real),
        "style": style_table(sim, real),
        "folds": folds,
        "seed": seed,
        "by_round": by_round(sim_side, real_side, folds, seed),
        "alike": {"sim": alike(sim, xs), "real": alike(real, xr)},
        "on_target": on_target(sim_side, real_side, folds, seed),
        "matched_questions": size.questions,
        "real_trained_auc": None,
        "real_fit_adversary_auc": None,
        "real_fit_adversary_auc_ci": None,
        **_NO_SETS,
    }
    out.update(adversary_gap(out, sim_side, sim_scores, real_side, real_scores, seed))
    train = [r for r in replies_of(real_train, True) if r.acting]
    if train and len(ry):
        tx = embed([r.text for r in train])
        ty = np.array([r.adversarial for r in train], dtype=float)
        tg = [r.question for r in train]
        out["real_trained_auc"] = transfer_auc(tx, ty, tg, rx, ry, rg, folds, seed)
        # the same quantity as real_adversary_auc on the questions the profile was fitted to: more
        # questions of the same model, so a held-out AUC far from it is the held-out sample's luck
        out.update(
            _with_interval("real_fit_adversary", ty, tg, lambda: oof_scores(tx, ty, tg, folds, seed), seed)
        )
        fitting_by_round(out["by_round"], Side(train, tx, ty, tg), folds, seed)
        both = (np.vstack([tx, rx]), np.concatenate([ty, ry]), [*tg, *rg])
        out.update(real_sets(*both, size.questions or 0, folds, seed))
        sim_auc = _sim_auc(out)
        if out["real_sets_auc"] is not None and sim_auc is not None:
            out["adversary_gap_sets"] = sim_auc - out["real_sets_auc"]
    return out


def _with_interval(
    name: str,
    y: np.ndarray,
    groups: Sequence[str],
    scores: Callable[[], np.ndarray],
    seed: int,
    ok: bool = True,
) -> dict[str, object]:
    """`{name}_auc` and `{name}_auc_ci` (a question-bootstrap 95 % interval) from out-of-fold scores;
    None for both when a class has fewer than `MIN_PER_CLASS` replies."""
    if not ok or not len(y) or min(int(y.sum()), int(len(y) - y.sum())) < MIN_PER_CLASS:
        return {f"{name}_auc": None, f"{name}_auc_ci": None}
    s = scores()
    keep = ~np.isnan(s)
    return {
        f"{name}_auc": _auc(y[keep], s[keep]),
        f"{name}_auc_ci": auc_interval(y, s, groups, seed=seed),
    }


REAL_SET_DRAWS = 40  # sets of the held-out size drawn from all of a model's real questions (`real_sets`)
_NO_SETS: dict[str, object] = {
    "real_sets_auc": None,
    "real_sets_auc_sd": None,
    "real_sets_auc_range": None,
    "real_sets_questions": None,
    "real_sets_draws": 0,
    "adversary_gap_sets": None,
}


def real_sets(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[str],
    size: int,
    folds: int = FOLDS,
    seed: int = 0,
    draws: int = REAL_SET_DRAWS,
) -> dict[str, object]:
    """The real adversary AUC to expect on `size` questions: its mean, SD and 2.5-97.5 % range over `draws`
    sets of `size` questions drawn without replacement from all of a model's real questions (its fitting and
    held-out ones), the probe cross-validated afresh on each set.

    Why: a held-out set of 9-22 questions is one such set. Across sets the real AUC moves by an SD of
    0.03-0.09 on the shipped profiles' sources, 1.1-1.5 times what the question bootstrap of one set shows
    (which holds the probe's scores fixed). Qwen1.5-14B's held-out set lies near the bottom of its sets' 95 %
    range (0.784 against 0.826 on average) and gpt-4o's above it (0.690 against 0.601; stop 76). The
    simulated AUC at the real side's size is an average over draws too, so this is the real figure to hold it
    against. It reads the fitting questions' replies, which the text model was fitted to but cannot change."""
    keys = sorted(set(groups))
    if size < 2 or len(keys) <= size:
        return dict(_NO_SETS)
    index = {k: i for i, k in enumerate(keys)}
    gi = np.array([index[g] for g in groups])
    rng = np.random.default_rng([seed, 2])
    aucs = []
    for _ in range(draws):
        m = np.isin(gi, rng.choice(len(keys), size=size, replace=False))
        auc = cv_auc(x[m], y[m], [g for g, k in zip(groups, m, strict=True) if k], folds, seed)
        if auc is not None:
            aucs.append(auc)
    if len(aucs) < 2:
        return dict(_NO_SETS)
    lo, hi = _percentiles(aucs, 0.95)
    return {
        **_NO_SETS,
        "real_sets_auc": float(np.mean(aucs)),
        "real_sets_auc_sd": float(np.std(aucs, ddof=1)),
        "real_sets_auc_range": [lo, hi],
        "real_sets_questions": size,
        "real_sets_draws": len(aucs),
    }


def _sim_auc(res: dict[str, Any]) -> float | None:
    """The simulated adversary AUC a real one is held against: at the real side's size where it has one."""
    matched = res.get("sim_adversary_auc_matched")
    return matched if matched is not None else res.get("sim_adversary_auc")


def adversary_gap(
    res: dict[str, Any],
    sim: Side,
    sim_scores: Callable[[], np.ndarray],
    real: Side,
    real_scores: Callable[[], np.ndarray],
    seed: int,
) -> dict[str, object]:
    """`adversary_gap` (simulated adversary AUC at the real side's size, or whole where it is not larger,
    minus the real one), its interval (`gap_interval`), where it stands against the target (`gap_verdict`)
    and the interval's draws (`adversary_gap_draws`); None (no draws) when either AUC is missing."""
    real_auc = res.get("real_adversary_auc")
    matched = res.get("sim_adversary_auc_matched")
    sim_auc = _sim_auc(res)
    none = {"adversary_gap": None, "adversary_gap_ci": None, "adversary_gap_verdict": None}
    if real_auc is None or sim_auc is None:
        return {**none, "adversary_gap_draws": []}
    draws: Sequence[float] | None = None
    if matched is not None:
        draws = res.get("sim_adversary_auc_matched_draws")
    if not draws:  # the simulated side no larger than the real one: its own spread over its questions
        draws = resampled_aucs(sim.y, sim_scores(), sim.groups, seed=seed) or [sim_auc]
    gap = float(sim_auc - real_auc)
    diff = gap_draws(draws, resampled_aucs(real.y, real_scores(), real.groups, seed=seed), seed)
    ci = None if diff is None else _percentiles(diff, 0.95)
    return {
        "adversary_gap": gap,
        "adversary_gap_ci": ci,
        "adversary_gap_verdict": gap_verdict(gap, ci),
        "adversary_gap_draws": [] if diff is None else [round(float(v), 5) for v in diff],
    }


MATCHED_DRAWS = 5  # seeded subsets of the simulated questions for the size-matched adversary AUC


class Size(NamedTuple):
    """The real side's size, which the simulated side is matched to: its acting replies and questions."""

    replies: int
    questions: int | None = None


def matched_auc(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[str],
    size: Size | int,
    folds: int = FOLDS,
    seed: int = 0,
    debates: Sequence[str] | None = None,
    draws: int = MATCHED_DRAWS,
) -> dict[str, object]:
    """The simulated side's adversary AUC at the real side's size: whole simulated questions, in a
    seeded order, until `size.replies` acting replies; the mean (and range) over `draws` such subsets.
    Where a simulated question has several debates (`debates`, one id per reply: benchmark=debates
    repeats a source's few questions), a question gives whole debates up to the real side's replies per
    question (`size.questions`), so the subset has as many questions as the real side, not one or two.

    A cross-validated probe's AUC rises with its training data (on qwen3-8b's profile 0.74 from 100
    simulated questions, 0.81 from 500), and a simulator can write any number of questions while a real
    source's held-out questions are few. Compared at one size, the two AUCs measure how detectable the
    adversaries are rather than how many replies each side had. None when the simulated side is not
    larger than `n_replies` (its full AUC is then already at that size or below)."""
    none: dict[str, object] = {
        "sim_adversary_auc_matched": None,
        "sim_adversary_auc_matched_range": None,
        "sim_adversary_auc_matched_draws": [],
    }
    size = size if isinstance(size, Size) else Size(int(size))
    n_replies = size.replies
    if len(y) <= n_replies or n_replies < 2 * MIN_PER_CLASS:
        return none
    per_question = None
    if debates is not None and size.questions:
        per_question = -(-n_replies // size.questions)  # ceil: the real side's replies per question
    aucs = []
    for k in range(draws):
        idx = _whole_questions(groups, n_replies, [seed, k], debates, per_question)
        auc = cv_auc(x[idx], y[idx], [groups[i] for i in idx], folds, seed)
        if auc is not None:
            aucs.append(auc)
    if not aucs:
        return none
    return {
        "sim_adversary_auc_matched": float(np.mean(aucs)),
        "sim_adversary_auc_matched_range": [float(min(aucs)), float(max(aucs))],
        "sim_adversary_auc_matched_draws": [float(a) for a in aucs],
    }


class Side(NamedTuple):
    """One side of the comparison: its replies, and its acting replies' embeddings, roles (1 = adversary)
    and questions, in the order of `reps` (what `by_round` and `on_target` read)."""

    reps: Sequence[Reply]
    x: np.ndarray
    y: np.ndarray
    groups: Sequence[str]

    def acting(self, keep: Callable[[Reply], bool]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """The acting replies for which `keep` holds: (embeddings, roles, questions)."""
        m = np.array([keep(r) for r in self.reps if r.acting], dtype=bool)
        if not len(m):
            return self.x[:0], self.y[:0], []
        return self.x[m], self.y[m], [g for g, k in zip(self.groups, m, strict=True) if k]

    def debates(self, keep: Callable[[Reply], bool]) -> list[str]:
        """The debate of each acting reply for which `keep` holds, in the order `acting` gives them."""
        return [r.debate for r in self.reps if r.acting and keep(r)]


def by_round(sim: Side, real: Side, folds: int, seed: int) -> list[dict[str, float | None]]:
    """Per round: the transfer of a probe trained on that round's simulated replies, beside the real
    replies' own cross-validated AUC of that round (where the simulator's texts part from real ones)."""
    rounds = sorted({r.round for r in sim.reps if r.acting} & {r.round for r in real.reps if r.acting})
    rows = []
    for t in rounds:

        def in_round(r: Reply, t: int = t) -> bool:
            return r.round == t

        sx, sy, sg = sim.acting(in_round)
        rx, ry, rg = real.acting(in_round)
        rows.append(
            {
                "round": t,
                "transfer_auc": transfer_auc(sx, sy, sg, rx, ry, rg, folds, seed),
                "real_adversary_auc": cv_auc(rx, ry, rg, folds, seed),
                "sim_adversary_auc": cv_auc(sx, sy, sg, folds, seed),
            }
        )
    return rows


def fitting_by_round(rows: list[dict[str, Any]], fit: Side, folds: int, seed: int) -> None:
    """Adds to each `by_round` row the real adversary AUC of that round on the fitting questions
    (`real_fit_adversary_auc`): a round where the simulated AUC parts from the held-out one but not from this
    is the held-out set's luck; one where it parts from both is the simulator's (Qwen1.5-14B's round 1:
    simulated 0.75, fitting 0.69, held out 0.62; stop 76)."""
    for row in rows:

        def in_round(r: Reply, t: int = row["round"]) -> bool:
            return r.round == t

        x, y, g = fit.acting(in_round)
        row["real_fit_adversary_auc"] = cv_auc(x, y, g, folds, seed) if len(y) else None


def alike(reps: Sequence[Reply], x: np.ndarray) -> list[dict[str, float | int | None]]:
    """Per round, how alike the replies of one debate are: the mean cosine of two honest replies, and of an
    adversarial and an honest one, of the same debate and round (acting rounds; None without such a pair),
    and how much their lengths go together (`length_shared`: the mean product of two honest replies'
    standardised log lengths, `tomacs.sim.text_model.length_products`).

    Why: TodyComm's features compare a reply with its neighbours' (`ana_agree`, `ana_dist`, `ana_disp`), so a
    policy trained on the simulator learns how far apart a real adversary stands only if simulated replies
    stand as far apart; real gpt-3.5 replies of one round-1 debate are at 0.90 (two honest) and 0.83 (an
    adversary), simulated ones were at 0.72 and 0.71 (stop 70).

    From round 2 on, also how alike a reply is to its own agent's reply of the round before (`honest_own`,
    `adversary_own`; by its role in the later round): App. C's persistence features read that distance, and
    real agents restate themselves (qwen-max's honest agents at 0.81-0.90, simulated ones at 0.60-0.65 before
    stop 74)."""
    u = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    at = {(r.debate, r.agent, r.round): i for i, r in enumerate(reps) if r.agent >= 0}
    own: dict[int, tuple[list[float], list[float]]] = {}
    for i, r in enumerate(reps):
        j = at.get((r.debate, r.agent, r.round - 1)) if r.agent >= 0 else None
        if r.acting and j is not None:
            own.setdefault(r.round, ([], []))[r.adversarial].append(float(u[i] @ u[j]))
    groups: dict[tuple[str, int], list[int]] = {}
    for i, r in enumerate(reps):
        if r.acting:
            groups.setdefault((r.debate, r.round), []).append(i)
    pairs: dict[int, tuple[list[float], list[float]]] = {}
    for (_, t), idx in groups.items():
        hh, ah = pairs.setdefault(t, ([], []))
        for k, i in enumerate(idx):
            for j in idx[k + 1 :]:
                a, b = reps[i].adversarial, reps[j].adversarial
                if not a and not b:
                    hh.append(float(u[i] @ u[j]))
                elif a != b:
                    ah.append(float(u[i] @ u[j]))
    # the fit's own estimator, each round its own phase (log lengths standardised per round and role)
    lengths = tm.length_products(
        [
            (
                r.debate,
                r.round,
                "adversary" if r.adversarial else "honest",
                str(r.round),
                math.log(max(len(r.text.split()), 1)),
            )
            for r in reps
            if r.acting
        ]
    )
    return [
        {
            "round": t,
            "honest_pair": float(np.mean(hh)) if hh else None,
            "adversary_honest": float(np.mean(ah)) if ah else None,
            "honest_pairs": len(hh),
            "adversary_pairs": len(ah),
            "length_shared": lengths.get(str(t), (None, None))[0],
            "honest_own": _mean(own.get(t, ([], []))[0]),
            "adversary_own": _mean(own.get(t, ([], []))[1]),
        }
        for t, (hh, ah) in sorted(pairs.items())
    ]


def _mean(v: Sequence[float]) -> float | None:
    return float(np.mean(v)) if v else None


def on_target(sim: Side, real: Side, folds: int, seed: int) -> dict[str, object]:
    """Adversary against honest among the acting replies that answer the adversary's target only (the
    adversaries and the honest agents that hold it), on each side, the simulated one also at the real
    side's size (`matched_auc`). Why: where a source fixes one target for every question, an adversary's
    stance is itself a cue; this is the role cue beyond the answer a reply argues for
    (docs/experiments/2026-11-30-first-credit-round-on-real-debates.md: on all of qwen-max's real debates,
    rounds 2 and 3, 0.917 over all replies and 0.685 among those on the target)."""
    sx, sy, sg = sim.acting(lambda r: r.on_target)
    rx, ry, rg = real.acting(lambda r: r.on_target)
    size = Size(len(ry), len(set(rg)))
    matched = (
        matched_auc(sx, sy, sg, size, folds, seed, sim.debates(lambda r: r.on_target)) if len(sy) else {}
    )
    return {
        "sim_auc": cv_auc(sx, sy, sg, folds, seed) if len(sy) else None,
        "sim_auc_matched": matched.get("sim_adversary_auc_matched"),
        "real_auc": cv_auc(rx, ry, rg, folds, seed) if len(ry) else None,
        "sim_honest": int((sy == 0).sum()),
        "real_honest": int((ry == 0).sum()),
    }


def _whole_questions(
    groups: Sequence[str],
    n: int,
    seed: int | list[int],
    debates: Sequence[str] | None = None,
    per_question: int | None = None,
) -> list[int]:
    """Indices of whole questions, taken in a seeded order over the sorted distinct questions until
    there are at least `n` (the cap of `--max-replies` and the size-matched AUC's draws). With
    `debates` and `per_question`, a question gives its whole debates in a seeded order until it has
    `per_question` replies (at least one debate), so one debate per question takes the question whole."""
    by_q: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        by_q.setdefault(g, []).append(i)
    keys = sorted(by_q)
    out: list[int] = []
    for j in np.random.default_rng(seed).permutation(len(keys)):
        if len(out) >= n:
            break
        idx = by_q[keys[int(j)]]
        if debates is not None and per_question is not None:
            idx = _whole_debates(idx, debates, per_question, [*np.atleast_1d(seed).tolist(), int(j)])
        out.extend(idx)
    return out


def _whole_debates(idx: list[int], debates: Sequence[str], cap: int, seed: list[int]) -> list[int]:
    """The replies `idx` of one question, whole debates in a seeded order until `cap` replies."""
    by_d: dict[str, list[int]] = {}
    for i in idx:
        by_d.setdefault(debates[i], []).append(i)
    if len(by_d) == 1:
        return idx
    names = sorted(by_d)
    out: list[int] = []
    for j in np.random.default_rng(seed).permutation(len(names)):
        if out and len(out) + len(by_d[names[int(j)]]) > cap:
            break
        out.extend(by_d[names[int(j)]])
    return sorted(out)


def _cap(reps: list[Reply], n: int, seed: int) -> list[Reply]:
    """At most about `n` replies: whole questions in a seeded order until the cap is reached."""
    if len(reps) <= n:
        return reps
    return [reps[i] for i in _whole_questions([r.question for r in reps], n, seed)]
