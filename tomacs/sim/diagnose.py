"""Why the `sim` backbone's multi-round debates differ from TodyComm Table 2 (`calibrate --diagnose`).

The statistics, the term decomposition and the tables; running the episodes is
`tomacs.analysis.sim_debates.diagnose`, above the job machinery this package must not import.

The simulator is fitted to single-receiver tables (TodyComm Tables 7-8); a debate chains that
one-step model over T rounds. This module runs real episodes (the executor + the `sim` backbone,
built from a composed config exactly as `tomacs evaluate` builds them) and takes the chain apart:

* **per round** (1..T) over the *always-honest* agents (never adversarial in the episode, so the
  population is the same in every round): accuracy; conformity = share answering the adversaries'
  target; flips right->wrong, wrong->right and ->target (shares of honest agent-rounds); and the
  conditional rates fall = P(wrong_t | right_t-1), recover = P(right_t | wrong_t-1),
  stay = P(target_t | target_t-1). The final decision's accuracy and conformity close the table.
* **the model's terms**: every honest update (rounds 2..T and the LLM decision agent) is recorded
  as the backbone saw it and its logits u_j (`model.update_logits`) are split, by the pure
  function `decompose_logits`, into additive parts that sum to u exactly:

      competence   beta * log p0'_j             (p0' = the prior with wrong mass spread evenly)
      distractor   beta * (log p0_j - log p0'_j) (the lure of the question's attractive wrong answer)
      self         alpha * [j == own previous answer]
      share_honest share * H_j / W,  share_adv  share * A_j / W
      count_honest count * H_j,      count_adv  count * A_j
      persuasion   (rho - 1) * A_j * (share / W + count)   (the message term's rest)

  with H_j / A_j the (face-value) weight of honest / persuasive messages backing j and
  W = sum_j (H_j + rho A_j). Three slices are averaged per round: term[target] - term[truth]
  over all honest updates ("->target": what pushes toward the attack), term[chosen] - term[truth]
  over updates that ended wrong ("wrong pick"), and term[prev] - term[truth] over agents whose
  previous answer was wrong ("prev wrong": what keeps them from recovering). A fourth slice,
  "ΔP(tr) w/o", is bounded and local: per term, how much P(truth) of each update would change if
  that term alone were removed (later rounds are not re-run; that is what the ablations do).
* **conformity by lure**: the same conformity, split by whether the adversaries' target happens to
  be the question's attractive distractor in the simulator's latent.
* **ablations**: the same episodes (same seeds, plans, graphs: common random numbers) re-run with
  one parameter of the fitted profile neutralised (e.g. self_weight = 0, persuasion = 1), so the
  change in per-round accuracy is what that term does. The stored profiles are never modified:
  each ablation builds its own backbone from a copy.

Nothing here changes the simulator's behaviour; the recorder only watches the requests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypedDict, cast

import numpy as np
from rich.table import Table

from tomacs.benchmarks.parsing import is_correct, numbers_equal, parse_answer
from tomacs.sim import model
from tomacs.sim.model import QuestionLatent, SeenMessage, SimProfile
from tomacs.types import Episode, Question

if TYPE_CHECKING:
    from tomacs.backbones.base import GenerationReply, GenerationRequest
    from tomacs.sim.backbone import SimBackbone

TERMS: tuple[str, ...] = (
    "competence",
    "distractor",
    "self",
    "anchor",
    "share_honest",
    "share_adv",
    "count_honest",
    "count_adv",
    "persuasion",
)
TERM_LABELS: dict[str, str] = {
    "competence": "comp",
    "distractor": "distr",
    "self": "self",
    "anchor": "anchor",
    "share_honest": "sh·hon",
    "share_adv": "sh·adv",
    "count_honest": "ct·hon",
    "count_adv": "ct·adv",
    "persuasion": "pers",
}
SLICES: tuple[str, ...] = ("target", "wrong_pick", "prev_wrong", "drop")
SLICE_LABELS = {
    "target": "->target",
    "wrong_pick": "wrong pick",
    "prev_wrong": "prev wrong",
    "drop": "ΔP(tr) w/o",
}


def ablations(profile: SimProfile) -> list[tuple[str, str, dict[str, float]]]:
    """(name, what it does, parameter changes) of each ablation run."""
    return [
        ("no prior", "prior_weight=0: updates ignore competence and the distractor", {"prior_weight": 0.0}),
        (
            "no distractor",
            "distractor_share=1/(n-1): wrong mass spread evenly (round 1 too)",
            {"distractor_share": 1.0 / (profile.n_cand - 1)},
        ),
        ("no self", "self_weight=0: no stickiness to the own previous answer", {"self_weight": 0.0}),
        ("no anchor", "anchor_weight=0: no pull to the own round-1 answer", {"anchor_weight": 0.0}),
        ("no share", "share_weight=0", {"share_weight": 0.0}),
        ("no count", "count_weight=0", {"count_weight": 0.0}),
        ("no persuasion", "persuasion=1: adversarial messages weigh as honest ones", {"persuasion": 1.0}),
        (
            "no messages",
            "share_weight=count_weight=0: messages ignored",
            {"share_weight": 0.0, "count_weight": 0.0},
        ),
    ]


# ----------------------------------------------------------------------------------------------
# The term decomposition (pure)
def decompose_logits(
    profile: SimProfile,
    latent: QuestionLatent,
    prev_idx: int | None,
    messages: Sequence[SeenMessage],
    n_cand: int,
    truth_idx: int,
    capability: float = 1.0,
    first_idx: int | None = None,
    message_scale: float = 1.0,
    exposed_before: bool = False,
) -> dict[str, np.ndarray]:
    """The terms of `model.logit_terms` split further into the additive parts of `TERMS`.

    Same arguments as `update_logits`; ``sum(result.values())`` equals its output (up to float
    rounding). The rule itself lives only in `model.logit_terms`: the prior term is split into the
    even-spread competence part and the rest (distractor), the message term by sender class with
    the persuasion surplus as the rest. See the module docstring for each part's formula.
    """
    rule = model.logit_terms(
        profile,
        latent,
        prev_idx,
        messages,
        n_cand,
        truth_idx,
        capability,
        first_idx,
        message_scale,
        exposed_before,
    )
    even = replace(profile, distractor_share=1.0 / (n_cand - 1))
    q0 = model.initial_probs(even, latent, n_cand, truth_idx, capability)
    out = {k: np.zeros(n_cand) for k in TERMS}
    out["competence"] = profile.prior_weight * np.log(np.maximum(q0, 1e-300))
    out["distractor"] = rule["prior"] - out["competence"]
    out["self"] = rule["self"]
    out["anchor"] = rule["anchor"]
    if messages:
        rho = profile.persuasion * (profile.later_weight if exposed_before else 1.0)
        support, hon, adv = model.message_support(messages, n_cand, rho)
        total = float(support.sum())
        if total > 0:
            s, kc = message_scale * profile.share_weight, message_scale * profile.count_weight
            out["share_honest"] = s * hon / total
            out["share_adv"] = s * adv / total
            out["count_honest"] = kc * hon
            out["count_adv"] = kc * adv
            face_value = out["share_honest"] + out["share_adv"] + out["count_honest"] + out["count_adv"]
            out["persuasion"] = rule["messages"] - face_value
    return out


# ----------------------------------------------------------------------------------------------
# Recording what the sim backbone was asked
@dataclass
class UpdateRecord:
    """One honest update as the simulator computed it (agent -1 = the LLM decision agent)."""

    question_id: str
    agent: int
    round: int
    kind: str
    cands: list[str]
    truth: int
    prev: int | None
    messages: list[tuple[int, bool, float]]
    chosen: int | None
    terms: dict[str, np.ndarray]
    probs: np.ndarray
    error: float = 0.0  # max |sum(terms) - update_logits|


class RecordingBackbone:
    """Wraps a `SimBackbone`: passes every request through unchanged and records each honest update."""

    def __init__(self, inner: SimBackbone) -> None:
        if not hasattr(inner, "_question_state") or not hasattr(inner, "profile"):
            raise TypeError("the diagnosis needs the sim backbone (backbone=sim)")
        self.inner = inner
        self.name = inner.name
        self.records: list[UpdateRecord] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]:
        replies = await self.inner.generate(requests)
        for req, rep in zip(requests, replies, strict=True):
            self._record(req, rep)
        return replies

    def stats(self) -> dict[str, object]:
        return self.inner.stats()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _record(self, req: Any, rep: Any) -> None:
        if req.behaviour == "adversarial":
            return  # an adversary always answers its target: nothing to decompose
        q = req.question
        cands, truth, latent = self.inner._question_state(q)
        msgs = [
            (cands.index(m.answer), bool(m.persuasive), float(m.weight))
            for m in req.incoming
            if m.answer in cands
        ]
        # the same branches as SimBackbone.decide_answer
        prev: int | None
        first: int | None
        if req.kind == "decision":
            prev = first = self.inner.decision_own_answer(req)
        elif req.round == 1 or req.previous_answer is None and not msgs:
            return  # an initial draw from the prior, no update
        else:
            prev = cands.index(req.previous_answer) if req.previous_answer in cands else None
            first = cands.index(req.first_answer) if req.first_answer in cands else None
        cap = 1.0 if req.capability is None else float(req.capability)
        prof = self.inner.profile
        scale = prof.decision_weight if req.kind == "decision" else 1.0
        later = req.kind != "decision" and bool(getattr(req, "exposed_before", False))
        terms = decompose_logits(prof, latent, prev, msgs, len(cands), truth, cap, first, scale, later)
        u = model.update_logits(prof, latent, prev, msgs, len(cands), truth, cap, first, scale, later)
        ans = parse_answer(q, rep.text)
        self.records.append(
            UpdateRecord(
                question_id=q.id,
                agent=int(req.agent),
                round=int(req.round),
                kind=str(req.kind),
                cands=list(cands),
                truth=int(truth),
                prev=prev,
                messages=msgs,
                chosen=_index(q, cands, ans),
                terms=terms,
                probs=model.update_probs(prof, latent, prev, msgs, len(cands), truth, cap, first),
                error=float(np.max(np.abs(sum(terms.values()) - u))),
            )
        )


def _same(q: Question, a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    if q.kind == "numeric":
        return numbers_equal(a, b)
    return str(a).strip().upper() == str(b).strip().upper()


def _index(q: Question, cands: Sequence[str], answer: str | None) -> int | None:
    for i, c in enumerate(cands):
        if _same(q, c, answer):
            return i
    return None


# ----------------------------------------------------------------------------------------------
# Statistics over episodes (pure)
def honest_agents(ep: Episode) -> list[int]:
    """Agents that are never adversarial in the episode (onset later than T, or no onset)."""
    rounds = len(ep.rounds)
    return [i for i in range(ep.n_agents) if ep.plan.onsets.get(i, rounds + 1) > rounds]


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass
class _Count:
    n: int = 0
    right: int = 0
    n_tgt: int = 0  # agent-rounds in episodes that have a target
    on_tgt: int = 0
    r2w: int = 0
    w2r: int = 0
    to_tgt: int = 0
    from_tgt: int = 0
    prev_right: int = 0
    prev_wrong: int = 0
    prev_tgt: int = 0
    stay_tgt: int = 0


class RoundCounts(TypedDict):
    """The counts behind one round's rates (always-honest agent-rounds)."""

    right: int
    on_target: int
    r2w: int
    w2r: int
    to_target: int
    from_target: int
    prev_right: int
    prev_wrong: int
    prev_target: int


class RoundRow(TypedDict):
    """One round of `round_stats` (rates are fractions; the flip columns are None in round 1)."""

    round: int
    n: int
    acc: float | None
    conformity: float | None
    r2w: float | None
    w2r: float | None
    to_target: float | None
    from_target: float | None
    fall: float | None
    recover: float | None
    stay: float | None
    counts: RoundCounts


class DecisionStats(TypedDict):
    n: int
    acc: float | None
    conformity: float | None
    modes: list[str]  # the decision rules the episodes used


class RoundStats(TypedDict):
    rounds: list[RoundRow]
    decision: DecisionStats


def round_stats(episodes: Sequence[Episode]) -> RoundStats:
    """Per-round accuracy, conformity and flips of the always-honest agents, and the decision's.

    Rates are fractions (not %). `acc`/`conformity` are shares of honest agents; the flip columns
    (`r2w`, `w2r`, `to_target`, `from_target`) are shares of honest agents at that round;
    `fall`/`recover`/`stay` are conditional on the agent's state at t-1. An unparsed answer is
    wrong and not the target. `conformity` is None when no episode has a target (attack none).
    """
    if not episodes:
        raise ValueError("no episodes")
    rounds = max(len(ep.rounds) for ep in episodes)
    counts = [_Count() for _ in range(rounds)]
    dec_n = dec_right = dec_ntgt = dec_tgt = 0
    for ep in episodes:
        q, target = ep.question, ep.plan.target
        agents = honest_agents(ep)
        for i in agents:
            prev_ok = prev_on = None
            for t, outs in enumerate(ep.rounds):
                a = outs[i].answer
                ok = is_correct(q, a)
                on = target is not None and _same(q, a, target)
                c = counts[t]
                c.n += 1
                c.right += ok
                if target is not None:
                    c.n_tgt += 1
                    c.on_tgt += on
                if prev_ok is not None:
                    c.r2w += prev_ok and not ok
                    c.w2r += (not prev_ok) and ok
                    c.prev_right += bool(prev_ok)
                    c.prev_wrong += not prev_ok
                    if target is not None:
                        c.to_tgt += on and not prev_on
                        c.from_tgt += bool(prev_on) and not on
                        c.prev_tgt += bool(prev_on)
                        c.stay_tgt += bool(prev_on) and on
                prev_ok, prev_on = ok, on
        dec_n += 1
        dec_right += bool(ep.correct)
        if target is not None:
            dec_ntgt += 1
            dec_tgt += _same(q, ep.final_answer, target)
    rows: list[RoundRow] = []
    for t, c in enumerate(counts, start=1):
        first = t == 1
        rows.append(
            {
                "round": t,
                "n": c.n,
                "acc": _rate(c.right, c.n),
                "conformity": _rate(c.on_tgt, c.n_tgt),
                "r2w": None if first else _rate(c.r2w, c.n),
                "w2r": None if first else _rate(c.w2r, c.n),
                "to_target": None if first else _rate(c.to_tgt, c.n_tgt),
                "from_target": None if first else _rate(c.from_tgt, c.n_tgt),
                "fall": None if first else _rate(c.r2w, c.prev_right),
                "recover": None if first else _rate(c.w2r, c.prev_wrong),
                "stay": None if first else _rate(c.stay_tgt, c.prev_tgt),
                "counts": {
                    "right": c.right,
                    "on_target": c.on_tgt,
                    "r2w": c.r2w,
                    "w2r": c.w2r,
                    "to_target": c.to_tgt,
                    "from_target": c.from_tgt,
                    "prev_right": c.prev_right,
                    "prev_wrong": c.prev_wrong,
                    "prev_target": c.prev_tgt,
                },
            }
        )
    return {
        "rounds": rows,
        "decision": {
            "n": dec_n,
            "acc": _rate(dec_right, dec_n),
            "conformity": _rate(dec_tgt, dec_ntgt),
            "modes": sorted({ep.decision.mode for ep in episodes if ep.decision is not None}),
        },
    }


def _softmax(u: np.ndarray) -> np.ndarray:
    e = np.exp(u - u.max())
    return e / e.sum()


def truth_without(r: UpdateRecord) -> dict[str, float]:
    """For each term: P(truth) with that term removed from this one update minus the actual P(truth)
    (positive: the term pulled this update away from the truth). Local: later rounds are not re-run."""
    u = cast(np.ndarray, sum(r.terms.values()))  # a non-empty sum of arrays: never the start value 0
    p = float(_softmax(u)[r.truth])
    return {k: float(_softmax(u - v)[r.truth]) - p for k, v in r.terms.items()}


def term_stats(
    records: Sequence[UpdateRecord], episodes: Sequence[Episode]
) -> list[dict[str, str | int | float | None]]:
    """Mean term margins per round (and for the decision), in four slices (module docstring).

    Only updates of always-honest agents and of the decision agent count, so the population is
    the one of `round_stats`. Each row: round ('D' = decision), slice, n, the mean margin of each
    term, `total` (their sum = the mean logit margin), and the model's mean P(truth) / P(target).
    Slice `drop` holds, per term, the mean change of P(truth) if that term alone were removed from
    each update (`truth_without`, a fraction; `total` None) over every counted update.
    """
    by_q = {ep.question.id: ep for ep in episodes}
    groups: dict[tuple[int, str], list[tuple[dict[str, float], float, float | None]]] = {}
    for r in records:
        ep = by_q.get(r.question_id)
        if ep is None:
            continue
        if r.agent >= 0 and r.agent not in honest_agents(ep):
            continue
        q = ep.question
        tgt = _index(q, r.cands, ep.plan.target) if ep.plan.target is not None else None
        p_tgt = float(r.probs[tgt]) if tgt is not None else None
        p_tr = float(r.probs[r.truth])

        def margin(j: int, r: UpdateRecord = r) -> dict[str, float]:
            return {k: float(v[j] - v[r.truth]) for k, v in r.terms.items()}

        if tgt is not None:
            groups.setdefault((r.round, "target"), []).append((margin(tgt), p_tr, p_tgt))
        if r.chosen is not None and r.chosen != r.truth:
            groups.setdefault((r.round, "wrong_pick"), []).append((margin(r.chosen), p_tr, p_tgt))
        if r.kind != "decision" and r.prev is not None and r.prev != r.truth:
            groups.setdefault((r.round, "prev_wrong"), []).append((margin(r.prev), p_tr, p_tgt))
        groups.setdefault((r.round, "drop"), []).append((truth_without(r), p_tr, p_tgt))
    dec_round = max((r.round for r in records if r.kind == "decision"), default=None)
    rows = []
    for (t, sl), items in sorted(groups.items(), key=lambda kv: (kv[0][0], SLICES.index(kv[0][1]))):
        means = {k: float(np.mean([m[k] for m, _, _ in items])) for k in TERMS}
        p_tg = [x for _, _, x in items if x is not None]
        rows.append(
            {
                "round": "D" if t == dec_round else t,
                "slice": sl,
                "n": len(items),
                **means,
                "total": None if sl == "drop" else float(sum(means.values())),
                "p_truth": float(np.mean([p for _, p, _ in items])),
                "p_target": float(np.mean(p_tg)) if p_tg else None,
            }
        )
    return rows


def conformity_by_lure(episodes: Sequence[Episode], sim: SimBackbone) -> dict[str, object]:
    """Per-round conformity (and the decision's) split by whether the adversaries' target is the
    question's attractive distractor in the simulator's latent (`lure`) or another wrong answer."""
    split: dict[str, list[Episode]] = {"lure": [], "other": []}
    for ep in episodes:
        if ep.plan.target is None:
            continue
        cands, _, latent = sim._question_state(ep.question)
        lure = _index(ep.question, cands, ep.plan.target) == latent.distractor
        split["lure" if lure else "other"].append(ep)
    out: dict[str, Any] = {}
    for key, eps in split.items():
        st = round_stats(eps) if eps else None
        out[key] = {
            "episodes": len(eps),
            "conformity": [r["conformity"] for r in st["rounds"]] if st else [],
            "decision_conformity": st["decision"]["conformity"] if st else None,
            "decision_acc": st["decision"]["acc"] if st else None,
        }
    return out


def ablation_row(
    name: str, what: str, changes: dict[str, float], st: RoundStats, base_final: float | None
) -> dict[str, object]:
    final = st["decision"]["acc"]
    return {
        "name": name,
        "what": what,
        "changes": changes,
        "acc": [r["acc"] for r in st["rounds"]],
        "conformity": [r["conformity"] for r in st["rounds"]],
        "recover": [r["recover"] for r in st["rounds"]],
        "final_acc": final,
        "final_conformity": st["decision"]["conformity"],
        "delta_final": None if final is None or base_final is None else final - base_final,
    }


# ----------------------------------------------------------------------------------------------
# Rendering
def _pct(x: float | None, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:+.2f}"


def _title(res: dict[str, Any]) -> str:
    paper = "" if res["paper_acc"] is None else f" | paper Table 2 {_pct(res['paper_acc'])}"
    return (
        f"{res['benchmark']} / {res['method']} / {res['attack']} | backbone=sim:{res['profile']} | "
        f"seed {res['seed']}, {res['n_questions']} questions | final acc {_pct(res['final_acc'])}{paper}"
    )


def rounds_table(res: dict[str, Any]) -> Table:
    t = Table(
        title=f"per round (always-honest agents), %: {_title(res)}",
        caption="conf = share on the adversaries' target; r→w, w→r, →tgt: shares of honest agents; "
        "fall = P(wrong|right before), recover = P(right|wrong before), stay = P(target|target before); "
        "conf|lure / conf|other: episodes whose target is / is not the question's distractor (sim latent)",
    )
    lure = res.get("conformity_by_lure") or {}
    nl, no = (lure.get(k, {}).get("episodes", 0) for k in ("lure", "other"))
    cols = ("round", "n", "acc", "conf", "r→w", "w→r", "→tgt", "fall", "recover", "stay")
    for col in (*cols, f"conf|lure\n({nl} eps)", f"conf|other\n({no} eps)"):
        t.add_column(col, justify="right")

    def by_lure(key: str, k: int | None) -> str:
        d = lure.get(key) or {}
        if k is None:
            return _pct(d.get("decision_conformity"))
        vals = d.get("conformity") or []
        return _pct(vals[k]) if k < len(vals) else "-"

    for k, r in enumerate(res["per_round"]):
        t.add_row(
            str(r["round"]),
            str(r["n"]),
            _pct(r["acc"]),
            _pct(r["conformity"]),
            _pct(r["r2w"]),
            _pct(r["w2r"]),
            _pct(r["to_target"]),
            _pct(r["fall"]),
            _pct(r["recover"]),
            _pct(r["stay"]),
            by_lure("lure", k),
            by_lure("other", k),
        )
    d = res["decision"]
    t.add_section()
    mode = "/".join(d["modes"]) or "?"
    t.add_row(
        f"final ({mode})",
        str(d["n"]),
        _pct(d["acc"]),
        _pct(d["conformity"]),
        *["" for _ in range(6)],
        by_lure("lure", None),
        by_lure("other", None),
    )
    return t


def terms_table(res: dict[str, Any]) -> Table:
    t = Table(
        title=f"model terms: mean logit margin vs the truth: {_title(res)}",
        caption="->target: term at the target minus at the truth, over honest updates; "
        "wrong pick: term at the chosen answer minus at the truth, where the update ended wrong; "
        "prev wrong: term at the previous answer minus at the truth, where that answer was wrong. "
        "ΔP(tr) w/o: percentage points P(truth) would gain if that term alone were removed from the update. "
        f"D = LLM decision agent. Σ = sum of terms (max |Σ - model logits| = "
        f"{res['decomposition_max_error']:.1e})",
    )
    t.add_column("round", justify="right")
    t.add_column("slice")
    t.add_column("n", justify="right")
    for k in TERMS:
        t.add_column(TERM_LABELS[k], justify="right")
    for col in ("Σ", "P(tr)", "P(tg)"):
        t.add_column(col, justify="right")
    for r in res["terms"]:
        t.add_row(
            str(r["round"]),
            SLICE_LABELS[r["slice"]],
            str(r["n"]),
            *[_pct(r[k], signed=True) if r["slice"] == "drop" else _num(r[k]) for k in TERMS],
            _num(r["total"]),
            _pct(r["p_truth"]),
            _pct(r["p_target"]),
        )
    return t


def ablations_table(res: dict[str, Any]) -> Table:
    rounds = res["rounds"]
    t = Table(
        title=f"ablations (same seeds), honest acc % per round: {_title(res)}",
        caption="each row re-runs the episodes with one parameter of the fitted profile neutralised "
        "(the stored profile is unchanged); conf T = conformity at round T; Δ = final acc - fitted",
    )
    t.add_column("ablation")
    for k in range(1, rounds + 1):
        t.add_column(f"r{k}", justify="right")
    for col in ("conf T", "recover T", "final", "Δ"):
        t.add_column(col, justify="right")
    for a in res["ablations"]:
        t.add_row(
            a["name"],
            *[_pct(x) for x in a["acc"]],
            _pct(a["conformity"][-1]),
            _pct(a["recover"][-1]),
            _pct(a["final_acc"]),
            "" if a["name"] == "fitted" else _pct(a["delta_final"], signed=True),
        )
    return t


def summary_table(results: Sequence[dict[str, Any]]) -> Table:
    rounds = max(r["rounds"] for r in results)
    t = Table(
        title="sim multi-round diagnosis: summary (%)", caption="acc rK / conf rK: always-honest agents"
    )
    for col in ("benchmark", "method", "attack", "paper", "final", "diff"):
        t.add_column(col, justify="left" if col in ("benchmark", "method", "attack") else "right")
    for k in range(1, rounds + 1):
        t.add_column(f"acc r{k}", justify="right")
    t.add_column(f"conf r{rounds}", justify="right")
    t.add_column(f"recover r{rounds}", justify="right")
    for r in results:
        accs = [x["acc"] for x in r["per_round"]] + [None] * (rounds - len(r["per_round"]))
        diff = None if r["paper_acc"] is None else r["final_acc"] - r["paper_acc"]
        t.add_row(
            r["benchmark"],
            r["method"],
            r["attack"],
            _pct(r["paper_acc"]),
            _pct(r["final_acc"]),
            _pct(diff, signed=True),
            *[_pct(a) for a in accs],
            _pct(r["per_round"][-1]["conformity"]),
            _pct(r["per_round"][-1]["recover"]),
        )
    return t


def tables(res: dict[str, Any]) -> list[Table]:
    out = [rounds_table(res), terms_table(res)]
    if res["ablations"]:
        out.append(ablations_table(res))
    return out
