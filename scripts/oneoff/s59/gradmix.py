# ruff: noqa: E501
# One-off script of the 2026-11-29 (stop 59) session, issue 40: what each term of TodyComm's loss contributes to
# the first gradient of every batch. Runs `tomacs train ...` with TodyComm.loss wrapped: beside the loss it
# returns (unchanged, so the run is the plain run), it writes per batch the norm of the gradient of the decision's
# exact term and of each communication round's REINFORCE term, and their cosine with the gradient of a supervised
# loss on the true labels at the decision (BCE, honest = 1): the direction that would raise ADAcc.
# Usage: python scripts/oneoff/s59/gradmix.py OUT.jsonl train method=todycomm ...
import json
import sys

import torch

from tomacs.methods import todycomm as tc

OUT = sys.argv.pop(1)
orig = tc.TodyComm.loss


def flat(g, params):
    return torch.cat(
        [(x if x is not None else torch.zeros_like(p)).flatten() for x, p in zip(g, params, strict=True)]
    )


def cos(a, b):
    return float(torch.dot(a, b) / (a.norm() * b.norm() + 1e-12))


def wrapped(self, state, episodes, utilities):
    loss = orig(self, state, episodes, utilities)
    if loss is None or "vote_table" not in state:
        return loss
    params = [p for p in self.net.parameters() if p.requires_grad]
    T, n = self.ctx.rounds, self.ctx.n_agents
    logits = state["decision_logits"]
    pieces = {"dec": -tc.expected_vote_utility(logits, state["vote_table"], self.epsilon).mean()}
    adv = torch.as_tensor(state["advantage"], dtype=logits.dtype)
    for t in range(2, T + 1):
        pieces[f"comm{t}"] = -(self._round_weight(t) * state["logp"][t] * adv).mean()
    y = torch.tensor([[1.0 - x for x in e.plan.labels(n, T)] for e in episodes], dtype=logits.dtype)
    sup = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
    g = {
        k: flat(torch.autograd.grad(v, params, retain_graph=True, allow_unused=True), params)
        for k, v in pieces.items()
    }
    gs = flat(torch.autograd.grad(sup, params, retain_graph=True, allow_unused=True), params)
    total = sum(g.values())
    comm = sum(v for k, v in g.items() if k != "dec")
    rec = {
        "norm": {k: float(v.norm()) for k, v in g.items()},
        "cos_sup": {k: cos(v, gs) for k, v in g.items()},
    }
    rec["norm"]["comm"], rec["cos_sup"]["comm"] = float(comm.norm()), cos(comm, gs)
    rec["norm"]["total"], rec["cos_sup"]["total"] = float(total.norm()), cos(total, gs)
    rec["cos_dec_comm"] = cos(g["dec"], comm)
    with open(OUT, "a") as f:
        f.write(json.dumps(rec) + "\n")
    return loss


tc.TodyComm.loss = wrapped
from tomacs.cli import main  # noqa: E402

main()
