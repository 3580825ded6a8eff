"""Why does TodyComm learn more slowly on MiniLM than on the hashing embedder? (issue 28, item 1)

    python scripts/diagnose_minilm.py                      # all parts, MiniLM (a few minutes, cached)
    python scripts/diagnose_minilm.py --parts suffix,real  # (c) and (d) only
    python scripts/diagnose_minilm.py --parts features --embedder hashing
    python scripts/diagnose_minilm.py --parts curve --curve-seeds 0,1,2   # remedies, supervised curves

Why this script: `tomacs diagnose` showed that even a learner told the labels needs 3-4x the steps on
MiniLM features, and that their probe ceiling is lower (91.6 % against 99.9 %). That leaves three
candidate causes, each with a different fix, and each part below measures one of them:

* features (part `features`, issue item (a)/(b)): TodyComm's node feature vector is ~800 wide with
  MiniLM, two 384-d embedding blocks beside ~35 answer and difference features. After the per-feature
  standardiser every dimension has unit variance, so the embedding blocks may swamp the rest. It prints
  a logistic probe per feature block, each block's share of the GRU's input variance at init, the gates'
  saturation and the BCE gradient per block (the supervised signal, as `tomacs diagnose`'s curve uses).
* the adversary signal under mean pooling (part `suffix`, item (c)): App. D's persuasive suffix is about
  a quarter of an adversary's reply. MiniLM mean-pools its word pieces, so the suffix may move the
  sentence vector little. It embeds each sim adversarial reply with and without its suffix and prints
  their cosine and the honest-vs-adversarial probe with and without it.
* the simulator's texts (part `real`, item (d)): template texts may embed unlike real model replies.
  It fits the same probe on real MAD-Follower transcripts (attacker vs normal, follower vs normal, per
  round, folds grouped by question) beside the sim's honest vs adversarial texts per round.

Part `curve` then asks which remedy helps: `tomacs diagnose`'s supervised learning curve on the same
recorded features for the default network, block-wise weights on the embedding dimensions, and
`method.emb_proj=32`. The findings are in
docs/experiments/2026-11-25-todycomm-minilm-features-emb-proj.md (issue 28). The one-feature
"mean suffix shift" probe of part `suffix` estimates its direction on all texts (no fold split): it is a
measure of how consistent the shift is, not a held-out detector.

Probes are class-balanced logistic regressions, 5 folds grouped by question, balanced accuracy (the
same probe as scripts/probe_adversary_texts.py). Embeddings go through the run's persistent cache
(embed.cache), so a second run is fast.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TOMACS_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from probe_adversary_texts import probe  # noqa: E402  (the issue-13 probe, reused as is)

REAL_DEFAULT = "/work/shared/data/debates/mad-follower"
# Feature blocks of f_i^t (tomacs.methods.features): what a reader calls "answers", "text", ...
BLOCKS: dict[str, tuple[str, ...]] = {
    "own answer": ("sol", "sol_per"),
    "own text": ("ana", "ana_per"),
    "nbr answers": ("nbr_sol", "has_nbr", "sol_disp"),
    "nbr text": ("nbr_ana", "ana_disp"),
    "differences": ("sol_agree", "ana_agree", "sol_dist", "ana_dist"),
}


def _cfg(overrides: list[str]) -> Any:
    from tomacs.config import compose

    return compose(["backbone=sim", "decision=vote", *overrides])


# -- texts ---------------------------------------------------------------------------------------------
def sim_texts(benchmark: str, attack: str, questions: int, seed: int) -> list[dict[str, Any]]:
    """Every participating agent's text of `method=complete` episodes (suffix on), with the adversary's
    text also without its App. D suffix (`bare`), its round and its question."""
    from tomacs.agents.prompts import PERSUASIVE_SUFFIX
    from tomacs.execution.batches import walk
    from tomacs.job.components import build

    cfg = _cfg(
        [
            f"benchmark={benchmark}",
            "method=complete",
            f"attack={attack}",
            f"eval.size={questions}",
            f"seed={seed}",
        ]
    )
    comps = build(cfg, need_train=False)
    tail = "\n\n" + PERSUASIVE_SUFFIX
    out = []
    for ep in walk(comps.executor, comps.method, comps.test_qs, 32, train=False, phase="test"):
        for t, outs in enumerate(ep.rounds, start=1):
            for o in outs:
                if not o.participated:
                    continue
                adv = o.behaviour == "adversarial"
                if adv and not o.text.endswith(tail):
                    raise RuntimeError(
                        "an adversarial sim text does not end with App. D's suffix (attack.suffix?)"
                    )
                bare = o.text[: -len(tail)] if adv else o.text
                out.append({"text": o.text, "bare": bare, "y": int(adv), "round": t, "q": ep.question.id})
    return out


def real_texts(root: str, max_round: int) -> list[dict[str, Any]]:
    """MAD-Follower turns: response text, role (attacker / follower / normal), round (0-based), question."""
    files = sorted(glob.glob(os.path.join(root, "*", "questions", "*.json")))
    if not files:
        raise FileNotFoundError(f"no transcripts under {root}/*/questions/*.json: pass --real DIR")
    out = []
    for f in files:
        d = json.loads(Path(f).read_text())
        qid = f"{Path(f).parent.parent.name}/{d['question_id']}"
        for t in d["turns"]:
            if int(t["round_index"]) <= max_round and t.get("response_text"):
                out.append(
                    {"text": t["response_text"], "role": t["role"], "round": int(t["round_index"]), "q": qid}
                )
    return out


def embed(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    uniq = sorted(set(texts))
    t0 = time.perf_counter()
    vecs = np.asarray(embedder.embed(uniq), dtype=np.float64)
    print(f"  (embedded {len(uniq)} distinct texts in {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    at = {t: i for i, t in enumerate(uniq)}
    return vecs[[at[t] for t in texts]]


def _words(texts: Sequence[str]) -> np.ndarray:
    return np.array([[len(t.split())] for t in texts], dtype=np.float64)


def _probe(x: np.ndarray, y: np.ndarray, groups: Sequence[str]) -> float:
    if len(set(y.tolist())) < 2 or len(set(groups)) < 5:
        return float("nan")
    return probe(x, y, list(groups))


# -- (c) the suffix under mean pooling ------------------------------------------------------------------
def part_suffix(rows: list[dict[str, Any]], embedder: Any, embedder_name: str) -> None:
    adv = [r for r in rows if r["y"]]
    first = min(r["round"] for r in adv)
    rows = [r for r in rows if r["round"] >= first]  # rounds in which adversaries act
    texts = [r["text"] for r in rows]
    bare = [r["bare"] for r in rows]
    e_on, e_off = embed(embedder, texts), embed(embedder, bare)
    y = np.array([r["y"] for r in rows])
    g = [r["q"] for r in rows]
    a = y == 1
    cos = (e_on[a] * e_off[a]).sum(1) / (np.linalg.norm(e_on[a], axis=1) * np.linalg.norm(e_off[a], axis=1))
    w_on, w_off = _words(texts)[a, 0], _words(bare)[a, 0]
    share = 1 - w_off / w_on
    print(
        f"\n(c) App. D suffix under {embedder_name}: {int(a.sum())} adversarial and {int((~a).sum())} "
        f"honest texts, rounds >= {first}"
    )
    pieces = _word_pieces(embedder, [texts[i] for i in np.flatnonzero(a)[:200]])
    if pieces is not None:
        print(
            f"  adversarial text length: {np.mean(w_on):.0f} words, {pieces:.0f} word pieces on average "
            "(MiniLM reads <= 256)"
        )
    print(
        f"  suffix share of an adversarial text's words: mean {share.mean():.2f} (min {share.min():.2f}, "
        f"max {share.max():.2f})"
    )
    print(f"  cosine(with suffix, without): mean {cos.mean():.3f}, min {cos.min():.3f}, max {cos.max():.3f}")
    # how far the suffix moves a vector, against how far apart honest and adversarial texts are
    hon = e_off[~a]
    nn_cos = _nearest_cos(e_off[a], hon)
    print(
        "  for scale: cosine of each bare adversarial text to its nearest honest text: mean "
        f"{nn_cos.mean():.3f}"
    )
    for name, e, w in (("with suffix", e_on, _words(texts)), ("without suffix", e_off, _words(bare))):
        print(
            f"  probe honest vs adversarial {name}: {_probe(e, y, g):.3f} (length only {_probe(w, y, g):.3f})"
        )
        for t in sorted({r["round"] for r in rows}):
            m = np.array([r["round"] == t for r in rows])
            print(
                f"    round {t}: {_probe(e[m], y[m], [x for x, k in zip(g, m, strict=True) if k]):.3f} "
                f"({int(m.sum())} texts)"
            )
    # the suffix direction alone: the mean shift it causes, projected out of the with-suffix vectors
    shift = (e_on[a] - e_off[a]).mean(0)
    u = shift / np.linalg.norm(shift)
    proj = e_on @ u
    print(f"  projection on the mean suffix shift alone (1 feature): probe {_probe(proj[:, None], y, g):.3f}")


def _word_pieces(embedder: Any, texts: list[str]) -> float | None:
    load = getattr(embedder, "_load", None)
    if load is None or not texts:
        return None
    tok = load().tokenizer
    return float(np.mean([len(tok(t)["input_ids"]) for t in texts]))


def _nearest_cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    an = a / np.linalg.norm(a, axis=1, keepdims=True)
    bn = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (an @ bn.T).max(1)


# -- (d) real transcripts against the sim --------------------------------------------------------------
def part_real(
    real: list[dict[str, Any]], sim: list[dict[str, Any]], embedder: Any, embedder_name: str
) -> None:
    e = embed(embedder, [r["text"] for r in real])
    wl = _words([r["text"] for r in real])
    roles = np.array([r["role"] for r in real])
    rounds = np.array([r["round"] for r in real])
    g = np.array([r["q"] for r in real])
    print(
        f"\n(d) real MAD-Follower transcripts under {embedder_name}: {len(real)} texts, {len(set(g))} "
        "questions"
    )
    print("  probe balanced accuracy by round (0-based; length-only in brackets)")
    print(f"  {'round':>5} {'attacker vs normal':>22} {'follower vs normal':>22} {'n (att/fol/nor)':>16}")
    for t in sorted(set(rounds.tolist())):
        cells = []
        for role in ("attacker", "follower"):
            m = (rounds == t) & np.isin(roles, [role, "normal"])
            y = (roles[m] == role).astype(int)
            cells.append(f"{_probe(e[m], y, list(g[m])):.3f} ({_probe(wl[m], y, list(g[m])):.3f})")
        n = [int(((rounds == t) & (roles == r)).sum()) for r in ("attacker", "follower", "normal")]
        print(f"  {t:>5} {cells[0]:>22} {cells[1]:>22} {'/'.join(map(str, n)):>16}")
    for role in ("attacker", "follower"):
        m = np.isin(roles, [role, "normal"])
        y = (roles[m] == role).astype(int)
        print(
            f"  all rounds, {role} vs normal: {_probe(e[m], y, list(g[m])):.3f} (length only "
            f"{_probe(wl[m], y, list(g[m])):.3f})"
        )
    first = min(r["round"] for r in sim if r["y"])
    s = [r for r in sim if r["round"] >= first]
    y = np.array([r["y"] for r in s])
    gs = [r["q"] for r in s]
    print(f"  the sim beside it (honest vs adversarial, rounds >= {first}, 1-based):")
    for key in ("text", "bare"):
        es = embed(embedder, [r[key] for r in s])
        ws = _words([r[key] for r in s])
        per = []
        for t in sorted({r["round"] for r in s}):
            m = np.array([r["round"] == t for r in s])
            per.append(f"round {t} {_probe(es[m], y[m], [x for x, k in zip(gs, m, strict=True) if k]):.3f}")
        label = "suffix on " if key == "text" else "suffix off"
        print(
            f"    {label}: all {_probe(es, y, gs):.3f} (length only {_probe(ws, y, gs):.3f}); "
            + ", ".join(per)
        )


# -- (a)/(b) the policy's features, standardiser, gates and gradients ------------------------------------
def collect_features(
    benchmark: str, attack: str, questions: int, seed: int, embedder_name: str
) -> tuple[Any, np.ndarray, np.ndarray]:
    """An untrained TodyComm run over `questions` questions with sampling (train=True, so the running
    standardiser gathers its statistics exactly as in training): its net, the (Q, N, R, F) features of
    t = 2..T+1 and the (Q, N) labels."""
    from tomacs.execution.batches import walk
    from tomacs.job.components import build

    cfg = _cfg(
        [
            f"benchmark={benchmark}",
            "method=todycomm",
            f"attack={attack}",
            f"eval.size={questions}",
            f"seed={seed}",
            f"embedder={embedder_name}",
        ]
    )
    comps = build(cfg, need_train=False)
    method = comps.method
    feats: list[np.ndarray] = []
    method.trace = []

    def collect(_: Any) -> None:
        feats.append(np.stack([f for _, f in sorted(method.trace, key=lambda p: p[0])], axis=2))
        method.trace = []

    eps = walk(comps.executor, method, comps.test_qs, 16, train=True, phase="train", on_batch=collect)
    method.trace = None
    n, t = comps.ctx.n_agents, comps.ctx.rounds
    labels = np.array([ep.plan.labels(n, t) for ep in eps])
    return method, np.concatenate(feats, axis=0), labels


def _block_cols(emb_dim: int, features: str = "full") -> dict[str, np.ndarray]:
    from tomacs.methods.features import feature_names

    names = dict(feature_names(emb_dim, features))
    out = {}
    for blk, parts in BLOCKS.items():
        cols = [np.arange(names[p].start, names[p].stop) for p in parts if p in names]
        if cols:
            out[blk] = np.concatenate(cols)
    return out


def part_features(benchmark: str, attack: str, questions: int, seed: int, embedder_name: str) -> None:
    import torch

    method, f, labels = collect_features(benchmark, attack, questions, seed, embedder_name)
    net = method.net
    q, n, r, width = f.shape
    cols = _block_cols(method.emb_dim, method.features)
    last = f[:, :, -1].reshape(q * n, width)
    y = labels.reshape(-1)
    g = [str(i) for i in np.repeat(np.arange(q), n)]
    print(
        f"\n(a) node features f_i^t under {embedder_name}: width {width}, {q} questions x {n} agents, "
        f"{attack}; decision-round rows"
    )
    with torch.no_grad():
        z = net.norm(torch.as_tensor(f.reshape(-1, width))).numpy().reshape(q, n, r, width)
        w_ih = net.gru.weight_ih.detach().numpy()  # (3H, F): reset | update | new
    zl = z[:, :, -1].reshape(q * n, width)
    pre_var = {b: float(np.var(zl[:, c] @ w_ih[:, c].T, axis=0).sum()) for b, c in cols.items()}
    total = float(np.var(zl @ w_ih.T, axis=0).sum())
    grads = _block_grads(net, torch.as_tensor(f), torch.as_tensor(1.0 - labels.astype(np.float32)), cols)
    print(
        f"  {'block':<12} {'dims':>5} {'probe':>6} {'|z|^2/row':>9} {'eff.dims':>8} "
        f"{'GRU in-var share':>16} {'|grad|':>8} {'grad/col':>8}"
    )
    for b, c in cols.items():
        zc = zl[:, c]
        lam = np.clip(
            np.linalg.eigvalsh(np.cov(zc.T)) if zc.shape[1] > 1 else np.array([np.var(zc)]), 0, None
        )
        eff = float(lam.sum() ** 2 / max((lam**2).sum(), 1e-12))
        print(
            f"  {b:<12} {len(c):>5} {_probe(last[:, c], y, g):>6.3f} {np.mean((zc**2).sum(1)):>9.1f} "
            f"{eff:>8.1f} "
            f"{pre_var[b] / total:>16.2f} {grads[b]:>8.4f} {grads[b] / np.sqrt(len(c)):>8.5f}"
        )
    no_emb = np.concatenate([cols[b] for b in ("own answer", "nbr answers", "differences")])
    print(
        f"  probe on everything but the two embedding blocks ({len(no_emb)} dims): "
        f"{_probe(last[:, no_emb], y, g):.3f}"
    )
    print(
        f"  probe on all {width} dims: {_probe(last, y, g):.3f}; all rounds stacked: "
        f"{_probe(f.reshape(q * n, -1), y, g):.3f}"
    )
    print(
        "  (probe: balanced accuracy; eff.dims: participation ratio of the standardised block; GRU in-var "
        "share:"
    )
    print(
        "   the block's share of the variance of W_ih z over the 3x64 gate units at init; |grad|: BCE "
        "gradient of W_ih's"
    )
    print("   columns for the block, decision-round logit, all questions, at init)")
    _gates(net, z)


def _block_grads(net: Any, f: Any, honest: Any, cols: dict[str, np.ndarray]) -> dict[str, float]:
    import torch

    q, n, r, width = f.shape
    net.zero_grad()
    h = torch.zeros(q * n, net.gru.hidden_size)
    logit = None
    for t in range(r):
        logit, h = net(f[:, :, t].reshape(-1, width), h)
    torch.nn.functional.binary_cross_entropy_with_logits(logit.view(q, n), honest).backward()
    gw = net.gru.weight_ih.grad.detach().numpy()
    net.zero_grad()
    return {b: float(np.linalg.norm(gw[:, c])) for b, c in cols.items()}


def _gates(net: Any, z: np.ndarray) -> None:
    """(b) reset, update and candidate gates of the GRU at init, on the standardised inputs, per round."""
    import torch

    q, n, r, width = z.shape
    hs = net.gru.hidden_size
    w_ih, w_hh = net.gru.weight_ih.detach(), net.gru.weight_hh.detach()
    b_ih, b_hh = net.gru.bias_ih.detach(), net.gru.bias_hh.detach()
    h = torch.zeros(q * n, hs)
    print(
        "\n(b) GRU gates at init on the standardised inputs (share saturated: sigmoid < .05 or > .95, "
        "|tanh| > .95)"
    )
    print(f"  {'t':>3} {'pre-act std (r/z/n)':>22} {'sat r':>6} {'sat z':>6} {'sat n':>6}")
    with torch.no_grad():
        for t in range(r):
            x = torch.as_tensor(z[:, :, t].reshape(-1, width))
            gi = x @ w_ih.T + b_ih
            gh = h @ w_hh.T + b_hh
            pr, pz = gi[:, :hs] + gh[:, :hs], gi[:, hs : 2 * hs] + gh[:, hs : 2 * hs]
            rg, zg = torch.sigmoid(pr), torch.sigmoid(pz)
            pn = gi[:, 2 * hs :] + rg * gh[:, 2 * hs :]
            ng = torch.tanh(pn)
            h = (1 - zg) * ng + zg * h

            def sat(s: Any) -> float:
                return float(((s < 0.05) | (s > 0.95)).float().mean())

            stds = "/".join(f"{float(p.std()):.2f}" for p in (pr, pz, pn))
            print(
                f"  {t + 2:>3} {stds:>22} {sat(rg):>6.3f} {sat(zg):>6.3f} "
                f"{float((ng.abs() > 0.95).float().mean()):>6.3f}"
            )


# -- which remedy helps a learner told the labels? ---------------------------------------------------------
def part_curve(
    benchmark: str,
    attack: str,
    questions: int,
    seed: int,
    embedder_name: str,
    lrs: Sequence[float],
    net_seeds: Sequence[int] = (0,),
    only: Sequence[str] = (),
) -> None:
    """`tomacs diagnose`'s supervised learning curve on the same recorded features, for the default
    network and for candidate remedies. A remedy that does not speed up a learner told the labels will
    not speed up REINFORCE either (its signal is weaker than a label)."""
    import torch

    from tomacs.analysis.credit import supervised_curve
    from tomacs.methods.nets import CreditNet

    method, f, labels = collect_features(benchmark, attack, questions, seed, embedder_name)
    width = f.shape[-1]
    emb = [
        c for b, c in _block_cols(method.emb_dim, method.features).items() if b in ("own text", "nbr text")
    ]
    ana = np.concatenate([c[: method.emb_dim] for c in emb])  # the two embedding vectors, not the scalars

    rest = np.setdiff1d(np.arange(width), ana)

    class Scaled(torch.nn.Module):
        """The default network with the standardised embedding vectors multiplied by `scale` (a
        block-wise weight: 1/sqrt(d) gives each 384-d vector the total variance of one feature)."""

        def __init__(self, scale: float) -> None:
            super().__init__()
            self.inner = CreditNet(width, method.hidden, method.mlp_hidden, "running", method.norm_clip)
            self.gru = self.inner.gru
            s = torch.ones(width)
            s[ana] = float(scale)
            self.register_buffer("s", s)

        def forward(self, x: Any, h: Any, update_stats: bool = False) -> tuple[Any, Any]:
            if update_stats:
                self.inner.norm.update(x)
            h_new = self.gru(self.inner.norm(x) * self.s, h)
            return self.inner.mlp(h_new).squeeze(-1), h_new

    def projected(k: int) -> Any:
        saved = method.emb_proj  # the run's resolved setting (null: by the embedder's width)
        method.emb_proj = k  # method.emb_proj=k: the shipped option (tomacs.methods.nets.CreditNet)
        try:
            return method.make_net()
        finally:
            method.emb_proj = saved

    variants: dict[str, Any] = {
        # the unprojected GRU input (emb_proj=0), the comparison every figure of issue 28 used
        "emb_proj=0 (running)": lambda: projected(0),
        "embeddings x 1/sqrt(d)": lambda: Scaled(1.0 / np.sqrt(method.emb_dim)),
        "embeddings x 0.25": lambda: Scaled(0.25),
        "emb_proj=32": lambda: projected(32),
    }
    print(f"  ({len(rest)} other features beside the {len(ana)} embedding dims)", file=sys.stderr)
    q = f.shape[0]
    print(
        f"\n(e) supervised learning curves under {embedder_name} ({q} questions, {attack}; held-out ADAcc "
        "% at step)"
    )
    unknown = set(only) - set(variants)
    if unknown:
        raise SystemExit(f"unknown --curve-variants {sorted(unknown)}; choose from {list(variants)}")
    for lr in lrs:
        for name, make in variants.items():
            if only and name not in only:
                continue
            for s in net_seeds:  # the network's init and batch order; the features stay the same
                c = supervised_curve(f, labels, make, lr=lr, steps=96, batch=32, seed=s)
                pts = " ".join(f"{r['step']}:{100 * r['adacc']:.0f}" for r in c["curve"])
                print(
                    f"  lr {lr:g} seed {s} {name:<24} {pts}  "
                    f"(90 % of gain at step {c['steps_to_90pct_of_gain']})"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--parts", default="suffix,real,features", help="comma-separated: suffix, real, features, curve"
    )
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    ap.add_argument("--benchmark", default="mmlu")
    ap.add_argument("--questions", type=int, default=40, help="sim questions for parts suffix and real")
    ap.add_argument("--feature-questions", type=int, default=48, help="sim questions for part features")
    ap.add_argument("--feature-attack", default="gt50")
    ap.add_argument("--curve-questions", type=int, default=96, help="sim questions for part curve")
    ap.add_argument("--curve-lrs", default="5e-4", help="comma-separated learning rates for part curve")
    ap.add_argument("--curve-seeds", default="0", help="comma-separated network seeds for part curve")
    ap.add_argument(
        "--curve-variants", default="", help="comma-separated variant names for part curve (default: all)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--real", default=REAL_DEFAULT, help="MAD-Follower transcript directory")
    ap.add_argument(
        "--real-max-round", type=int, default=2, help="rounds 0..this (later rounds have few questions)"
    )
    a = ap.parse_args()
    parts = {p.strip() for p in a.parts.split(",") if p.strip()}
    unknown = parts - {"suffix", "real", "features", "curve"}
    if unknown:
        ap.error(f"unknown part(s) {sorted(unknown)}; choose from suffix, real, features, curve")
    from tomacs.embedding.embedders import configure, get_embedder

    configure(str(ROOT / "outputs" / "cache" / "embeddings.sqlite"))
    embedder = get_embedder(a.embedder)
    sim = sim_texts(a.benchmark, "eq50", a.questions, a.seed) if parts & {"suffix", "real"} else []
    if "suffix" in parts:
        part_suffix(sim, embedder, a.embedder)
    if "real" in parts:
        part_real(real_texts(a.real, a.real_max_round), sim, embedder, a.embedder)
    if "features" in parts:
        part_features(a.benchmark, a.feature_attack, a.feature_questions, a.seed, a.embedder)
    if "curve" in parts:
        lrs = [float(x) for x in a.curve_lrs.split(",")]
        seeds = [int(x) for x in a.curve_seeds.split(",")]
        only = [x.strip() for x in a.curve_variants.split(",") if x.strip()]
        part_curve(a.benchmark, a.feature_attack, a.curve_questions, a.seed, a.embedder, lrs, seeds, only)


if __name__ == "__main__":
    main()
