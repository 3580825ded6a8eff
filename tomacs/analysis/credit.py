"""Why does a trained credit policy detect (or fail to detect) adversaries? `tomacs diagnose RUN_DIR`.

A learned method that falls short of its paper can fail for four different reasons, and each needs
a different fix; this module measures all four on a trained checkpoint (issue 12):

* the signal is absent: a *supervised* probe (logistic regression on the very node features the
  policy reads, cross-validated by question) shows what any learner could reach;
* the parameters do not move: distance of every tensor from its seeded initial value;
* the evaluation hides it: an adversary that never produced an adversarial output before the
  decision (it sat out its onset round under `isolated=silent`) is invisible to any detector, so
  "visible adversaries" bounds ADAcc from above;
* the credits do not separate: credit distributions of honest vs adversarial agents per round,
  with the ranking AUC, and participation rates per round;
* the budget of steps is too small for these features: a *supervised learning curve* trains a fresh
  copy of the policy's own network on the recorded features with the true labels, at the run's
  learning rate and batch size, and reports held-out ADAcc every few steps. REINFORCE's signal is
  weaker than a label, so a policy needs at least as many steps as this curve does: if the curve
  itself needs more steps than the run trained, the budget (or the learning rate) is the cause.

The statistics are pure functions of episodes (unit-tested on hand-built episodes); `diagnose`
re-runs the checkpoint on the run's test questions to get the episodes and features.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from tomacs.job.progress import pct
from tomacs.types import Episode

if TYPE_CHECKING:
    from tomacs.methods.nets import CreditNet


class CreditPolicy(Protocol):
    """What a method that `credit_policy_refusal` does not refuse holds (tomacs.methods.base.Method):
    its credit network `net`, `make_net()` for a fresh one, and `trace`, to which it appends (t, the
    policy's inputs) for every round it steps while `trace` is a list."""

    net: CreditNet
    trace: list[tuple[int, np.ndarray]] | None

    def make_net(self) -> CreditNet: ...


__all__ = [
    "auc",
    "credit_stats",
    "diagnose",
    "format_report",
    "parameter_drift",
    "participation_stats",
    "probe_accuracy",
    "supervised_curve",
    "visibility_stats",
]


def auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """P(score of a random positive > a random negative), ties count one half (Mann-Whitney U).

    Here positives are honest agents and scores are credits: 1.0 = credits rank every honest agent
    above every adversary, 0.5 = no separation."""
    p, q = np.asarray(pos, dtype=float), np.asarray(neg, dtype=float)
    if p.size == 0 or q.size == 0:
        return math.nan
    greater = (p[:, None] > q[None, :]).sum()
    ties = (p[:, None] == q[None, :]).sum()
    return float((greater + 0.5 * ties) / (p.size * q.size))


def _labels(ep: Episode, n: int, rounds: int) -> list[int]:
    return ep.plan.labels(n, rounds)


def credit_stats(episodes: Sequence[Episode], n: int, rounds: int) -> list[dict[str, float]]:
    """Per round t = 2..T (communication credits) and T+1 (decision credits): mean and std of the
    credits of honest and adversarial agents (ground truth: onset <= T), their gap and AUC.

    Round-t credits come from `RoundGraph.credits`, decision credits from `DecisionGraph.credits`."""
    rows = []
    for t in range(2, rounds + 2):
        hon: list[float] = []
        adv: list[float] = []
        for ep in episodes:
            if t <= rounds:
                g = ep.graphs[t - 1] if t - 1 < len(ep.graphs) else None
                credits = None if g is None else g.credits
            else:
                credits = ep.decision.credits if ep.decision is not None else None
            if credits is None:
                continue
            for i, y in enumerate(_labels(ep, n, rounds)):
                (adv if y else hon).append(float(credits[i]))
        if not hon and not adv:
            continue
        rows.append(
            {
                "round": t,
                "honest_mean": float(np.mean(hon)) if hon else math.nan,
                "honest_std": float(np.std(hon)) if hon else math.nan,
                "adv_mean": float(np.mean(adv)) if adv else math.nan,
                "adv_std": float(np.std(adv)) if adv else math.nan,
                "gap": (float(np.mean(hon)) - float(np.mean(adv))) if hon and adv else math.nan,
                "auc": auc(hon, adv),
            }
        )
    return rows


def participation_stats(episodes: Sequence[Episode], n: int, rounds: int) -> list[dict[str, float]]:
    """Per round t = 2..T: share of honest and of adversarial agents that took part in the round's
    communication (`RoundGraph.participants`, the method's a_i^t), and at T+1 the share that voted."""
    rows = []
    for t in range(2, rounds + 2):
        hon: list[float] = []
        adv: list[float] = []
        for ep in episodes:
            labels = _labels(ep, n, rounds)
            if t <= rounds:
                g = ep.graphs[t - 1] if t - 1 < len(ep.graphs) else None
                if g is None:
                    continue
                part = set(g.participants if g.participants is not None else g.nodes)
            else:
                if ep.decision is None:
                    continue
                part = set(ep.decision.voters)
            for i, y in enumerate(labels):
                (adv if y else hon).append(1.0 if i in part else 0.0)
        rows.append(
            {
                "round": t,
                "honest": float(np.mean(hon)) if hon else math.nan,
                "adversarial": float(np.mean(adv)) if adv else math.nan,
            }
        )
    return rows


def visibility_stats(episodes: Sequence[Episode], n: int, rounds: int) -> dict[str, float]:
    """How many adversaries ever showed an adversarial output before the decision, and the ADAcc of
    a perfect detector of exactly what was visible (it flags visible adversaries and keeps all
    others): an upper bound on ADAcc for a method that sees only outputs. A second bound also knows
    how many adversaries there are, which matters when they are the majority (gt50)."""
    adv_total = visible = 0
    correct = correct_k = total = 0
    for ep in episodes:
        labels = _labels(ep, n, rounds)
        shown = [
            any(r[i].behaviour == "adversarial" and r[i].participated for r in ep.rounds[:rounds])
            for i in range(n)
        ]
        k, v = sum(labels), sum(s and y for s, y in zip(shown, labels, strict=True))
        adv_total += k
        visible += v
        # knowing k as well (the attack rate), the unseen agents are flagged together iff most are adversaries
        flag_unseen = n > v and (k - v) / (n - v) > 0.5
        for s, y in zip(shown, labels, strict=True):
            correct += int(s == bool(y))
            correct_k += int((s or flag_unseen) == bool(y))
            total += 1
    return {
        "adversaries": float(adv_total),
        "visible_fraction": visible / adv_total if adv_total else math.nan,
        "adacc_ceiling": correct / total if total else math.nan,
        "adacc_ceiling_known_rate": correct_k / total if total else math.nan,
    }


def probe_accuracy(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, folds: int = 5, seed: int = 0
) -> dict[str, float]:
    """Cross-validated (folds split by question, so no question is in train and test) logistic
    regression of labels y from features x: accuracy and balanced accuracy. The supervised ceiling
    of what a policy reading x could detect."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    y = np.asarray(y).astype(int)
    if len(np.unique(y)) < 2 or len(np.unique(groups)) < folds:
        return {"accuracy": math.nan, "balanced": math.nan, "n": float(len(y))}
    pred = np.zeros_like(y)
    for tr, te in GroupKFold(n_splits=folds).split(x, y, groups):
        if len(np.unique(y[tr])) < 2:
            pred[te] = y[tr][0]
            continue
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, C=1.0, random_state=seed))
        clf.fit(x[tr], y[tr])
        pred[te] = clf.predict(x[te])
    return {
        "accuracy": float((pred == y).mean()),
        "balanced": float(balanced_accuracy_score(y, pred)),
        "n": float(len(y)),
    }


def supervised_curve(
    feats: np.ndarray,
    labels: np.ndarray,
    make_net: Callable[[], CreditNet],
    lr: float,
    steps: int = 96,
    batch: int = 32,
    every: int = 8,
    seed: int = 0,
    held_out: float = 0.25,
) -> dict[str, object]:
    """Held-out ADAcc of a fresh policy network trained *supervised* on recorded features.

    `feats` (Q, N, R, F) are the inputs of rounds t = 2..T+1 as the policy read them, `labels`
    (Q, N) 1 = adversarial. `make_net()` builds a fresh network with TodyComm's call signature
    ``net(f, h, update_stats) -> (logit, h)`` and a `gru.hidden_size`; its last-round logit is
    trained with BCE towards "honest" (credit = P(honest)) by Adam at `lr` on batches of `batch`
    questions, and scored with the paper's inference rule (honest iff credit > the question's mean
    credit) on the last `held_out` share of the questions, every `every` steps. Seeded: the same
    arguments give the same curve."""
    import torch

    q, n, r, f = feats.shape
    n_te = max(1, int(round(q * held_out)))
    tr, te = np.arange(0, q - n_te), np.arange(q - n_te, q)
    if len(tr) == 0:
        raise ValueError(f"supervised_curve needs more than {n_te} questions, got {q}")
    torch.manual_seed(seed)
    net = make_net()
    hidden = int(net.gru.hidden_size)
    opt = torch.optim.Adam(net.parameters(), lr=float(lr))
    rng = np.random.default_rng(seed)
    x = torch.as_tensor(np.asarray(feats, dtype=np.float32))
    honest = torch.as_tensor(1.0 - np.asarray(labels, dtype=np.float32))

    def forward(idx: np.ndarray, train: bool) -> Any:
        h = torch.zeros(len(idx) * n, hidden)
        logit = None
        for t in range(r):
            logit, h = net(x[idx, :, t].reshape(-1, f), h, update_stats=train)
        assert logit is not None  # r >= 1 rounds of inputs
        return logit.view(len(idx), n)

    def score() -> float:
        with torch.no_grad():
            c = torch.sigmoid(forward(te, False)).numpy()
        pred = c > c.mean(axis=1, keepdims=True)
        return float((pred == (np.asarray(labels)[te] == 0)).mean())

    curve = [(0, score())]
    for step in range(1, int(steps) + 1):
        idx = rng.choice(tr, min(int(batch), len(tr)), replace=False)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(forward(idx, True), honest[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % int(every) == 0 or step == int(steps):
            curve.append((step, score()))
    best = max(a for _, a in curve)
    first = next(s for s, a in curve if a >= curve[0][1] + 0.9 * (best - curve[0][1]))
    return {
        "lr": float(lr),
        "batch": int(batch),
        "train_questions": len(tr),
        "held_out_questions": len(te),
        "curve": [{"step": s, "adacc": a} for s, a in curve],
        "best": best,
        "steps_to_90pct_of_gain": first,
    }


def parameter_drift(trained: dict[str, Any], initial: dict[str, Any]) -> list[dict[str, object]]:
    """Per parameter tensor: norm at init, norm now, and the norm of the change (relative too)."""
    rows = []
    for k, v in trained.items():
        if k not in initial or not hasattr(v, "dtype") or not v.dtype.is_floating_point:
            continue
        if k.startswith("norm."):
            continue  # normaliser statistics, not learned weights
        a, b = v.detach().double(), initial[k].detach().double()
        d = float((a - b).norm())
        n0 = float(b.norm())
        rows.append(
            {
                "tensor": k,
                "init_norm": n0,
                "norm": float(a.norm()),
                "change": d,
                "rel": d / n0 if n0 else math.nan,
            }
        )
    return rows


# -- running it on a checkpoint ----------------------------------------------------------------------
def diagnose(run_dir: Path, size: int | None = None, checkpoint: Path | None = None) -> dict[str, object]:
    """Re-run a trained run's checkpoint on its test questions and compute every statistic above."""
    with _one_thread():
        return _diagnose(run_dir, size, checkpoint)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch and the BLAS under sklearn on one thread. The networks here are tiny (hidden 64,
    batches of at most 32 questions), so handing each op to a second thread costs more than the
    op; on a busy 2-core machine the spin-waiting made the 96-step supervised curve take 80 s
    instead of 1.5 s (issue 27). The numbers do not depend on it (same output, compared)."""
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(before)


def _diagnose(run_dir: Path, size: int | None, checkpoint: Path | None) -> dict[str, object]:
    from tomacs.execution.batches import Batch, walk
    from tomacs.job.checkpoint import load_checkpoint
    from tomacs.job.components import build
    from tomacs.job.files import read_run_config, run_spec, tested_checkpoint

    run_dir = Path(run_dir)
    cfg = read_run_config(run_dir, "pass the directory of a finished tomacs job")
    if cfg is None:
        raise FileNotFoundError(f"{run_dir} has no config.yaml: pass the directory of a finished tomacs job")
    if size is not None:
        cfg["eval"]["size"] = int(size)
    ck = checkpoint or tested_checkpoint(run_dir)
    comps = build(run_spec(cfg), need_train=False)
    method = comps.method
    why = method.credit_policy_refusal()  # the method says whether it has a policy to diagnose
    if why:
        raise ValueError(why)
    policy = cast(CreditPolicy, method)  # what a method that does not refuse promises
    initial = {k: v.detach().clone() for k, v in policy.net.state_dict().items()}
    if ck is None:
        raise FileNotFoundError(f"{run_dir} has no best.pt or checkpoint.pt: train the method first")
    load_checkpoint(method, Path(ck))
    method.train_mode(False)
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    feats: list[np.ndarray] = []  # per batch: (Q, N, rounds, F) features of t = 2..T+1

    def collect(_: Batch) -> None:
        assert policy.trace is not None  # a list while the walk runs
        feats.append(np.stack([f for _, f in sorted(policy.trace, key=lambda p: p[0])], axis=2))
        policy.trace = []

    policy.trace = []  # the method appends (t, features) of every round it steps (credit_policy_refusal)
    try:
        episodes = walk(
            comps.executor,
            method,
            comps.test_qs,
            comps.spec.eval.batch_size,
            train=False,
            phase="eval",
            on_batch=collect,
        )
    finally:
        policy.trace = None
    f_all = np.concatenate(feats, axis=0)  # (Q, N, T, F)
    q_n = f_all.shape[0]
    labels = np.array([_labels(ep, n, rounds) for ep in episodes])  # (Q, N)
    groups = np.repeat(np.arange(q_n), n)
    last = f_all[:, :, -1, :].reshape(q_n * n, -1)
    hist = f_all.reshape(q_n * n, -1)
    from tomacs.metrics import summarize

    m = summarize(episodes, n, rounds)
    fresh = policy.make_net
    train_steps = _train_steps(run_dir / "train_log.jsonl")
    steps = max(96, int(train_steps or 0))
    curve = supervised_curve(
        f_all, labels, fresh, lr=comps.spec.train.lr, steps=steps, batch=comps.spec.train.batch_size
    )
    curve["run_steps"] = train_steps
    return {
        "run_dir": str(run_dir),
        "checkpoint": str(ck),
        "questions": q_n,
        "metrics": {k: m[k] for k in ("acc", "adacc", "adacc_balanced", "adacc_baseline", "token")},
        "credits": credit_stats(episodes, n, rounds),
        "participation": participation_stats(episodes, n, rounds),
        "visibility": visibility_stats(episodes, n, rounds),
        "probe_last_round": probe_accuracy(last, labels.reshape(-1), groups),
        "probe_all_rounds": probe_accuracy(hist, labels.reshape(-1), groups),
        "drift": parameter_drift(policy.net.state_dict(), initial),
        "supervised_curve": curve,
    }


def _train_steps(log: Path) -> int | None:
    """Optimiser steps the run took: its training iterations (train_log.jsonl lines with a loss)."""
    from tomacs.job.files import read_log

    if not log.is_file():
        return None
    return sum("loss" in rec and "iteration" in rec for rec in read_log(log))


def _curve_lines(c: dict[str, Any] | None) -> list[str]:
    if not c:
        return []
    pts = "  ".join(f"{r['step']}:{pct(r['adacc'])}" for r in c["curve"])
    ran = "unknown" if c.get("run_steps") is None else str(c["run_steps"])
    return [
        f"supervised learning curve (the policy's network, fresh init, true labels, lr {c['lr']:g}, "
        f"batch {c['batch']}; held-out ADAcc % at step): {pts}",
        f"  it reaches 90 % of its gain at step {c['steps_to_90pct_of_gain']} (best {pct(c['best'])} %); "
        f"the run trained {ran} steps on a far noisier signal (REINFORCE, no labels)",
    ]


def format_report(d: dict[str, Any]) -> str:
    """Plain-text report of `diagnose`'s result (what the CLI prints)."""
    m = d["metrics"]
    out = [
        f"diagnosis of {d['run_dir']} ({d['checkpoint']}), {d['questions']} test questions",
        f"Acc {pct(m['acc'])} %  ADAcc {pct(m['adacc'])} % (balanced {pct(m['adacc_balanced'])} %, "
        f"all-reliable {pct(m['adacc_baseline'])} %)  Token {m['token']:.1f}",
        "",
        "credits by ground truth (t = T+1 is the decision)",
        f"{'t':>3} {'honest':>15} {'adversarial':>15} {'gap':>7} {'AUC':>6}",
    ]
    for r in d["credits"]:
        out.append(
            f"{r['round']:>3} {r['honest_mean']:>8.3f}±{r['honest_std']:<6.3f} "
            f"{r['adv_mean']:>8.3f}±{r['adv_std']:<6.3f} {r['gap']:>7.3f} {r['auc']:>6.3f}"
        )
    out += [
        "",
        "participation (share taking part; t = T+1: share voting)",
        f"{'t':>3} {'honest %':>9} {'adv %':>7}",
    ]
    for r in d["participation"]:
        out.append(f"{r['round']:>3} {pct(r['honest']):>9} {pct(r['adversarial']):>7}")
    v = d["visibility"]
    out += [
        "",
        f"adversaries visible before the decision: {pct(v['visible_fraction'])} % "
        f"of {int(v['adversaries'])}; "
        f"ADAcc of a perfect detector of what was visible: {pct(v['adacc_ceiling'])} % "
        f"({pct(v['adacc_ceiling_known_rate'])} % if it also knows the number of adversaries)",
        f"supervised probe (logistic regression, 5 folds by question) on the policy's features: "
        f"decision-round features {pct(d['probe_last_round']['accuracy'])} % "
        f"(balanced {pct(d['probe_last_round']['balanced'])} %), all rounds "
        f"{pct(d['probe_all_rounds']['accuracy'])} % (balanced {pct(d['probe_all_rounds']['balanced'])} %)",
        *_curve_lines(d.get("supervised_curve")),
        "",
        "parameter change from the seeded initial weights",
        f"{'tensor':<22} {'|init|':>8} {'|now|':>8} {'|change|':>9} {'rel':>6}",
    ]
    for r in d["drift"]:
        out.append(
            f"{r['tensor']:<22} {r['init_norm']:>8.3f} {r['norm']:>8.3f} {r['change']:>9.4f} {r['rel']:>6.3f}"
        )
    return "\n".join(out)
