"""How much of one batch's gradient is TodyComm's signal, per estimator of Eq. 7 (issue 40's diagnosis).

Trains one TodyComm job with `method.decision_credit=expected` (the overrides you give, plus that key) and, at
every iteration, before its step, compares on the batch's own episodes:

- g*: the exact gradient of the decision's expected utility (`expected_vote_utility`);
- Eq. 7's decision term as the paper estimates it, from the decision the executor sampled (`episode`), and the
  counterfactual credit's (`counterfactual`), each also averaged over 8 fresh decision samples;
- the communication rounds' terms with the sampled utility u as their return (the paper) and with the
  decision's expected utility (`expected`).

It prints, per iteration and averaged, the cosine of each estimate to g* and the norms. Why: a batch gradient
that mostly points elsewhere than g* is what makes REINFORCE need many iterations. No step is changed, so the
job trains (and scores) exactly as `tomacs train ... method.decision_credit=expected` does.

    .venv/bin/python scripts/decision_gradient.py OUT_DIR method=todycomm train=paper benchmark=mmlu \\
        attack=gt50 seed=0 method.updates=4
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tomacs.config import compose
from tomacs.launch.run import run_job
from tomacs.methods import todycomm as tc
from tomacs.methods.learned import bernoulli_terms
from tomacs.training.reinforce import utility
from tomacs.types import Episode

RESAMPLES = 8


def _flat(grads: tuple[torch.Tensor, ...]) -> torch.Tensor:
    return torch.cat([g.reshape(-1) for g in grads])


def _cos(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a @ b) / (a.norm() * b.norm() + 1e-30))


def measure(
    method: tc.TodyComm, state: dict[str, Any], episodes: list[Episode], rng: np.random.Generator
) -> dict:
    """The batch's figures; reads the state `_expected_loss` is about to score and changes nothing."""
    t_dec = method.ctx.rounds + 1
    logits = state["decision_logits"]
    params = [p for p in method.parameters() if p.requires_grad]
    credits = state["credits"][t_dec]
    answers = [[o.answer for o in ep.rounds[-1]] for ep in episodes]
    tables = np.stack(
        [
            tc.vote_table(ep.question, a, credits[q], method.tau)
            for q, (ep, a) in enumerate(zip(episodes, answers, strict=True))
        ]
    )
    table = torch.as_tensor(tables, dtype=logits.dtype)

    def grad(loss: torch.Tensor) -> torch.Tensor:
        return _flat(torch.autograd.grad(loss, params, retain_graph=True))

    expected = tc.expected_vote_utility(logits, table, method.epsilon)
    g_star = grad(-expected.mean())

    def decision_term(actions: np.ndarray, u: np.ndarray, kind: str) -> torch.Tensor:
        terms = bernoulli_terms(logits, actions)
        if kind == "episode":
            return grad(-(terms.sum(-1) * terms.new_tensor(u - u.mean())).mean())
        adv = np.stack(
            [
                tc.decision_advantages(
                    ep.question, answers[q], credits[q], actions[q], float(u[q]), method.epsilon, method.tau
                )
                for q, ep in enumerate(episodes)
            ]
        )
        return grad(-(terms * terms.new_tensor(adv)).sum(-1).mean())

    u = np.array([utility(e) for e in episodes])
    sampled = state["sampled"][t_dec]
    rec: dict[str, float] = {"g_star_norm": float(g_star.norm())}
    g_ep = decision_term(sampled, u, "episode")
    rec["episode"] = _cos(g_ep, g_star)
    rec["counterfactual"] = _cos(decision_term(sampled, u, "counterfactual"), g_star)
    rec["episode_norm"] = float(g_ep.norm())
    p = credits * (1 - method.epsilon) + (1 - credits) * method.epsilon
    for kind in ("episode", "counterfactual"):
        grads = []
        for _ in range(RESAMPLES):
            a = (rng.random(credits.shape) < p).astype(np.int64)
            ua = tables[np.arange(len(a)), (a << np.arange(a.shape[1])).sum(1)]
            grads.append(decision_term(a, ua, kind))
        rec[f"{kind}_avg{RESAMPLES}"] = _cos(torch.stack(grads).mean(0), g_star)
    ev = expected.detach().cpu().numpy().astype(np.float64)
    comm = sum(method._round_weight(t) * state["logp"][t] for t in range(2, t_dec))
    if isinstance(comm, torch.Tensor):  # comm=learned: the rounds' own terms
        g_comm_u = grad(-(comm * comm.new_tensor(u - u.mean())).mean())
        g_comm_e = grad(-(comm * comm.new_tensor(ev - ev.mean())).mean())
        rec["comm_norm_sampled_u"] = float(g_comm_u.norm())
        rec["comm_norm_expected_u"] = float(g_comm_e.norm())
        rec["whole_paper"] = _cos(g_comm_u + g_ep, g_star)
        rec["whole_expected"] = _cos(g_comm_e + g_star, g_star)
    return rec


def main(argv: list[str]) -> None:
    if len(argv) < 1 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return
    out, overrides = Path(argv[0]), [*argv[1:], "method.decision_credit=expected"]
    rows: list[dict] = []
    rng = np.random.default_rng(12345)  # the diagnosis's own draws: the job's streams are not touched
    scored = tc.TodyComm._expected_loss

    def observed(self: tc.TodyComm, state: dict[str, Any], episodes: list[Episode]) -> torch.Tensor:
        rows.append(measure(self, state, episodes, rng))
        print(json.dumps({k: round(v, 3) for k, v in rows[-1].items()}), flush=True)
        return scored(self, state, episodes)

    tc.TodyComm._expected_loss = observed  # type: ignore[method-assign]
    res = run_job(compose(overrides), "train", out)
    acc, adacc = 100 * res["metrics"]["acc"], 100 * res["metrics"]["adacc"]
    print(f"\n{len(rows)} iterations; test Acc / ADAcc {acc:.1f} / {adacc:.1f}")
    print("mean over iterations (cosines to the exact decision gradient g*, and norms):")
    for key in rows[0]:
        print(f"  {key:24s} {statistics.mean(r[key] for r in rows):.3f}")
    (out / "decision_gradient.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
