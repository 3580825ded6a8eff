"""Every method's tiny runs keep their numbers (issue 16): byte for byte where no CPU can change them,
within stated tolerances where one can (issue 41).

Static runs (every method not in LEARNED; no torch, so the same bytes on every CPU) are byte-exact:
tests/data/arch_golden.json holds, for each, the SHA-256 of episodes.jsonl and the metrics (wall times
removed), compared exactly.

Learned runs (tests/data/arch_golden_learned.json) cannot be byte-exact across CPUs: the same pinned wheels
take other MKL and vectorised-math paths on another CPU (seen: AMD, where the goldens were recorded, against
Intel with AMX), a one-ulp difference flips a sampled edge or breaks a tie in AgentPrune's ranking within a
step or two, and from then on the episodes differ. So a learned run is compared in two parts:

* tightly, what comes before a sampled decision can flip. The run's first optimiser step (torch's global
  optimiser hooks): each parameter tensor's weights before it (`w0`), gradient (`grad`) and the update the
  optimiser made (`step`), each as a sketch (its norm and its dot products with PROJECTIONS fixed Gaussian
  vectors) whose numbers must lie within TOL[kind] x the recorded norm: 1e-5, 1e-3, 1e-2. And the first
  training-log row (iteration 0: loss, credit gap, the exploring policy's Acc/ADAcc/Token; gsafeguard: its
  first epoch) within LOG_RTOL x |value| + LOG_ATOL = 1e-4 x |value| + 1e-5.
* loosely, the end metrics (6 evaluation questions after the whole tiny training): within END_ABS = 1/3 for a
  value in [0, 1] (a rate; 1/3 is two of the six questions), within END_REL = 1/2 relative otherwise. These
  catch a broken evaluation, not a subtle change: they are chaotic, and no tolerance that a ulp cannot cross
  would catch one.
Later iterations and the final checkpoint are not compared: after the first step they are sums of steps on
episodes that a ulp may already have changed.

The tolerances rest on measurements (issue 41, all 31 learned runs against this recording, on an AMD EPYC):
every gradient off by ~1e-7 relative at every step (18 seeds, `--drift SEED`), initial weights off by 1e-7
relative (4 seeds), one torch thread instead of two, torch's AVX2 and scalar kernels instead of AVX-512
(ATEN_CPU_CAPABILITY; the scalar path also draws the initial weights an ulp apart). Largest deviations: w0
4.1e-7 of its norm, grad 2.2e-5 (EIB, scalar kernels), step 2.5e-4 (G-Designer: Adam's first update
lr*g/(|g|+eps) magnifies a gradient's ulps where |g| is near eps): each tolerance is 24-45x that. Log row:
2.4e-7 absolute on TodyComm's loss (8e-5 relative: its REINFORCE terms cancel), under 2e-7 relative
elsewhere (40x). End metrics: Acc by 1/6 (half its tolerance), a CRS credibility by 0.19, tokens by 5.4%,
edges per round by 22% (AgentPrune 9 -> 11, in 2 of 18 seeds). tests/data/arch_golden_cpu_drift.json keeps
the numbers that differed between the AMD and the Intel machine (the per-CPU goldens kept here before), and
a test checks that the tolerances admit them. What they catch, measured: TodyComm's gamma (then) 0.9 ->
0.95 fails its 5 runs that take a step (gradient off by up to 0.34 of its norm; even 0.9 -> 0.9001 moves the
step by 1.9e-2), epsilon 0.1 -> 0.11 moves the gradient by 10, norm_clip 5 -> 4 by 0.48; train.lr 5e-4 ->
4.9e-4 fails the 19 runs that use train.lr and take a non-zero step (step off by 4-7e-2); reinforce_loss's
mean -> sum (which Adam's step does not see) fails 21 runs on the gradient. A run whose first batch has no
advantage (all four utilities equal: the gt50_crs runs of AgentPrune, CARD, EIB and G-Designer, whose
gradient is zero or a regulariser's) leaves its REINFORCE loss unchecked; the method's other runs check it.

A change that is MEANT to change numbers (a bug fix, a simulator refit) re-records and says which runs
changed and why in the commit:  python tests/test_arch_golden.py --record
A new method records only its own runs (the others' stay as they were):
python tests/test_arch_golden.py --record --only gsafeguard
How far this machine's learned runs are from the goldens, as a fraction of each tolerance (> 1 fails), as
they are or with every gradient perturbed by ~1e-7 relative (a seed); ATEN_CPU_CAPABILITY=default in front
runs torch's scalar kernels:  python tests/test_arch_golden.py --drift [SEED]
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).parent / "data" / "arch_golden.json"
LEARNED_GOLDEN = Path(__file__).parent / "data" / "arch_golden_learned.json"
CPU_DRIFT = Path(__file__).parent / "data" / "arch_golden_cpu_drift.json"

_TINY = [
    "benchmark=synthetic",
    "embedder=hashing",
    "train.size=8",
    "train.val_size=4",
    "train.batch_size=4",
    "train.epochs=1",
    "eval.size=6",
    "eval.batch_size=4",
    "seed=0",
]
LEARNED = ("agentprune", "card", "eib", "gdesigner", "gsafeguard", "todycomm")
# G-Safeguard generates its labelled conversations inside the job: a tiny set (2 settings x 2)
EXTRA = {
    "gsafeguard": [
        "method.samples=2",
        "method.densities=[0.5,1.0]",
        "method.counts=[1]",
        "method.epochs=2",
        "method.hidden_size=16",
        "method.val_fraction=0.5",
    ]
}
STATIC = ("chain", "complete", "crs", "debate", "layered", "none", "random", "star")

# Learned runs' tolerances (the module's docstring gives the measurements behind them).
PROJECTIONS = 4
TOL = {"w0": 1e-5, "grad": 1e-3, "step": 1e-2}  # x the recorded tensor's norm
LOG_RTOL, LOG_ATOL = 1e-4, 1e-5  # the first iteration's log row
END_ABS, END_REL = 1 / 3, 1 / 2  # end metrics: absolute for a value in [0, 1] (a rate), relative otherwise


def _runs() -> dict[str, list[str]]:
    runs: dict[str, list[str]] = {}
    for m in (*STATIC, *LEARNED):
        extra = EXTRA.get(m, [])
        for attack in ("none", "eq50", "gt50"):
            runs[f"{m}_{attack}"] = [f"method={m}", f"attack={attack}", *extra]
        runs[f"{m}_eq50_b1"] = [f"method={m}", "attack=eq50", "budget=b1", *extra]
        if m != "crs":  # method=crs decides with crs already (decision=auto)
            runs[f"{m}_gt50_crs"] = [f"method={m}", "attack=gt50", "decision=crs", *extra]
    runs["todycomm_gt50_no_credits"] = ["method=todycomm", "attack=gt50", "method.ablation=no_credits"]
    runs["receiver_table8"] = ["method=receiver", "agents=7", "rounds=2", "attack=receiver", "attack.count=3"]
    return runs


RUNS = _runs()
_DROP = ("wall", "_s")  # timings: eval_wall_s, wall_s, encode_s


def is_learned(name: str) -> bool:
    return RUNS[name][0].split("=", 1)[1] in LEARNED


def _keep(key: str) -> bool:
    return not any(key.endswith(d) or key.startswith(d) for d in _DROP)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def _sketch(t: Any) -> list[float]:
    """A tensor as its norm and its dot products with PROJECTIONS fixed standard-normal vectors (numpy's
    generator, the same on every CPU): each is about the norm in size and moves by about the norm of a
    change, so comparing them within tol x norm compares the whole tensor within about tol, relatively."""
    import numpy as np

    x = t.detach().double().flatten().numpy()
    r = np.random.default_rng(x.size).standard_normal((PROJECTIONS, x.size))
    return [float(f"{v:.10g}") for v in (np.linalg.norm(x), *(r @ x))]


@contextmanager
def first_step(perturb: int | None = None) -> Iterator[dict[str, list[Any]]]:
    """While open, torch's global optimiser hooks keep the first `step()` of any optimiser: the
    parameters before it (`w0`), their gradients (`grad`, zeros where none) and the update (`step`).
    `perturb` (--drift): every gradient of every step first multiplied by 1 + 1e-7 x N(0, 1), from a
    generator seeded with it, as another CPU's rounding would leave it."""
    import torch
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    seen: dict[str, list[Any]] = {}
    gen = None if perturb is None else torch.Generator().manual_seed(perturb)

    def params(opt: Any) -> list[Any]:
        return [p for group in opt.param_groups for p in group["params"]]

    @torch.no_grad()
    def pre(opt: Any, args: Any, kwargs: Any) -> None:
        if gen is not None:
            for p in params(opt):
                if p.grad is not None:
                    p.grad.mul_(1 + 1e-7 * torch.randn(p.grad.shape, generator=gen, dtype=p.grad.dtype))
        if "w0" not in seen:
            seen["w0"] = [p.detach().clone() for p in params(opt)]
            seen["grad"] = [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in params(opt)]

    @torch.no_grad()
    def post(opt: Any, args: Any, kwargs: Any) -> None:
        if "step" not in seen:
            seen["step"] = [p.detach() - w for p, w in zip(params(opt), seen["w0"], strict=True)]

    handles = [register_optimizer_step_pre_hook(pre), register_optimizer_step_post_hook(post)]
    try:
        yield seen
    finally:
        for h in handles:
            h.remove()


def run_digest(name: str, out_dir: Path, perturb: int | None = None) -> dict[str, Any]:
    """A static run: its episodes' bytes and metrics. A learned run: its first optimiser step (a
    sketch of each parameter tensor), its first training-log row and its metrics."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    cfg = compose([*_TINY, *RUNS[name]])
    if not is_learned(name):
        res = run_job(cfg, "evaluate", out_dir)
        return {
            "episodes_sha256": hashlib.sha256((out_dir / "episodes.jsonl").read_bytes()).hexdigest(),
            "metrics": {k: _clean(v) for k, v in sorted(res["metrics"].items()) if _keep(k)},
        }
    with first_step(perturb) as seen:
        res = run_job(cfg, "train", out_dir)
    log = (out_dir / "train_log.jsonl").read_text().splitlines()
    row = json.loads(log[0])
    step = None
    if seen:
        step = [
            {"shape": list(w.shape), **{kind: _sketch(seen[kind][i]) for kind in TOL}}
            for i, w in enumerate(seen["w0"])
        ]
    return {
        "first_step": step,
        "train_log_0": {k: _clean(v) for k, v in sorted(row.items()) if _keep(k) and k != "encoded"},
        "metrics": {k: _clean(v) for k, v in sorted(res["metrics"].items()) if _keep(k)},
    }


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _dev(got: Any, want: Any, tol: float) -> float:
    """|got - want| / tol for numbers; 0 or inf for anything else (None, "nan", "missing": exactly)."""
    if _number(got) and _number(want):
        dev = abs(got - want)
        return dev / tol if tol > 0 else (0.0 if dev == 0 else math.inf)
    return 0.0 if got == want else math.inf


def _against(got: Any, want: Any, tol: Callable[[float], float], where: str) -> list[tuple[float, str]]:
    """(deviation / tolerance, where) for a recorded value (or each element of a recorded list) and
    this run's; `tol` gives a recorded number's tolerance."""
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        pairs = [(g, w, f"{where}[{i}]") for i, (g, w) in enumerate(zip(got, want, strict=True))]
    else:
        pairs = [(got, want, where)]
    return [(_dev(g, w, tol(w) if _number(w) else 0.0), f"{at}: {g!r}, recorded {w!r}") for g, w, at in pairs]


def _end_tol(v: float) -> float:
    return END_ABS if 0 <= v <= 1 else END_REL * abs(v)


def learned_deviations(got: dict[str, Any], want: dict[str, Any]) -> list[tuple[float, str]]:
    """Every compared number of a learned run as (deviation / its tolerance, where): > 1 fails."""
    out: list[tuple[float, str]] = []
    mine, theirs = got.get("first_step"), want.get("first_step")
    shapes = [None if s is None else [t["shape"] for t in s] for s in (mine, theirs)]
    if mine is None or theirs is None or shapes[0] != shapes[1]:  # no step, or other parameters
        out.append((_dev(shapes[0], shapes[1], 0.0), f"first_step shapes: {shapes[0]}, recorded {shapes[1]}"))
    else:
        for i, (g, w) in enumerate(zip(mine, theirs, strict=True)):
            for kind, rel in TOL.items():
                # within rel x the recorded norm; a tensor recorded as exactly zero stays (almost) zero
                scale = rel * w[kind][0] + 1e-12
                out += _against(
                    g[kind], w[kind], lambda _, t=scale: t, f"first_step {kind} p{i} {w['shape']}"
                )
    row = got.get("train_log_0", {})
    for k, w in want.get("train_log_0", {}).items():
        out += _against(row.get(k, "missing"), w, lambda v: LOG_RTOL * abs(v) + LOG_ATOL, f"train_log_0 {k}")
    for k, w in want["metrics"].items():
        out += _against(got["metrics"].get(k, "missing"), w, _end_tol, f"metrics {k}")
    return out


def _params() -> list[Any]:
    """Static runs (no torch, byte-exact everywhere, about 0.3 s each) stay in `make test-fast`; learned
    runs (1-4 s each, about 2 min in all on 2 cores) are marked slow and run in `make test`."""
    return [pytest.param(name, marks=pytest.mark.slow) if is_learned(name) else name for name in sorted(RUNS)]


@pytest.mark.parametrize("name", _params())
def test_run_matches_architecture_golden(name: str, tmp_path: Path) -> None:
    golden = json.loads((LEARNED_GOLDEN if is_learned(name) else GOLDEN).read_text())
    assert name in golden, f"{name} has no golden: record it on main before the change"
    got, want = run_digest(name, tmp_path), golden[name]
    if is_learned(name):
        bad = [
            f"{where} ({dev:.2g} x tolerance)" for dev, where in learned_deviations(got, want) if not dev <= 1
        ]
        assert not bad, f"{name}: {len(bad)} numbers beyond their tolerance:\n" + "\n".join(bad[:20])
        return
    # metrics added after recording are new keys, not changed numbers: compare the recorded ones
    recorded = {k: got["metrics"].get(k, "missing") for k in want["metrics"]}
    assert json.dumps(recorded, sort_keys=True) == json.dumps(want["metrics"], sort_keys=True)
    assert got["episodes_sha256"] == want["episodes_sha256"]


def test_golden_covers_every_registered_method() -> None:
    from tomacs.paths import conf_dir

    shipped = {p.stem for p in (conf_dir() / "method").glob("*.yaml")}
    covered = {ov[0].split("=", 1)[1] for ov in RUNS.values()}
    assert shipped == covered, f"methods without a golden run: {sorted(shipped - covered)}"
    static, learned = json.loads(GOLDEN.read_text()), json.loads(LEARNED_GOLDEN.read_text())
    assert set(static) == {n for n in RUNS if not is_learned(n)}
    assert set(learned) == {n for n in RUNS if is_learned(n)}


def test_tolerances_admit_what_another_cpu_computed() -> None:
    """The numbers an Intel machine with AMX computed where the AMD reference differed (same commit, same
    wheels; frozen in arch_golden_cpu_drift.json) pass the learned runs' comparison."""
    runs = json.loads(CPU_DRIFT.read_text())["runs"]
    assert len(runs) == 12
    for name, sides in runs.items():
        got, want = ({"metrics": {}, **sides[s]} for s in ("intel_amx", "reference"))
        devs = learned_deviations(got, want)
        assert devs and max(devs)[0] <= 1, (name, max(devs))


def test_tolerances_fail_a_changed_number() -> None:
    """A number off by twice its tolerance fails: a tight one, an end metric, a string or a missing one."""
    want = {
        "first_step": [
            {"shape": [2], "w0": [1.0, 0.5, -0.5, 0.2, 0.1], "grad": [2.0] * 5, "step": [0.0] * 5}
        ],
        "train_log_0": {"loss": 0.01, "iteration": 0},
        "metrics": {"acc": 0.5, "token": 600.0, "crs_final": [0.2, 0.3], "adacc_tpr": "nan"},
    }
    assert max(d for d, _ in learned_deviations(want, want)) == 0
    grad = {**want["first_step"][0], "grad": [2.0, 2.0, 2.0 + 2 * TOL["grad"] * 2.0, 2.0, 2.0]}
    changed: list[dict[str, Any]] = [
        {**want, "first_step": [grad]},
        {**want, "first_step": None},
        {**want, "train_log_0": {"loss": 0.01 + 2 * (LOG_RTOL * 0.01 + LOG_ATOL), "iteration": 0}},
        {**want, "metrics": {**want["metrics"], "token": 600.0 * 2}},
        {**want, "metrics": {**want["metrics"], "crs_final": [0.2, 0.8]}},
        {**want, "metrics": {**want["metrics"], "adacc_tpr": 0.5}},
        {**want, "metrics": {k: v for k, v in want["metrics"].items() if k != "acc"}},
    ]
    for got in changed:
        assert max(d for d, _ in learned_deviations(got, want)) > 1, got


def _record(only: str | None) -> None:
    import tempfile

    for path, learned in ((GOLDEN, False), (LEARNED_GOLDEN, True)):
        out: dict[str, Any] = json.loads(path.read_text()) if only and path.is_file() else {}
        with tempfile.TemporaryDirectory() as tmp:
            for name, ov in sorted(RUNS.items()):
                if is_learned(name) != learned or (only and ov[0] != f"method={only}"):
                    continue
                out[name] = run_digest(name, Path(tmp) / name)
                print(name, flush=True)
        text = json.dumps(out, indent=1, sort_keys=True) + "\n"
        if learned:  # a list of numbers (a sketch, CRS credibilities) on one line
            text = re.sub(r"\[\s*([-+.\deE,\s]+?)\s*\]", lambda m: "[" + " ".join(m[1].split()) + "]", text)
        path.write_text(text)
        print(f"wrote {path}")


def _drift(seed: int | None) -> None:
    """Each learned run on this machine (with a seed: every gradient perturbed by ~1e-7 relative), and
    per run the largest deviation of each compared group as a fraction of its tolerance (> 1 fails)."""
    import tempfile

    golden = json.loads(LEARNED_GOLDEN.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(n for n in RUNS if is_learned(n)):
            worst: dict[str, float] = {}
            for dev, where in learned_deviations(run_digest(name, Path(tmp) / name, seed), golden[name]):
                group = " ".join(where.split()[:2]) if where.startswith("first_step") else where.split()[0]
                worst[group] = max(worst.get(group, 0.0), dev)
            print(f"{name:26s} " + "  ".join(f"{g} {d:.2g}" for g, d in sorted(worst.items())), flush=True)


if __name__ == "__main__" and "--record" in sys.argv:
    _record(sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None)
elif __name__ == "__main__" and "--drift" in sys.argv:
    arg = sys.argv[sys.argv.index("--drift") + 1 :]
    _drift(int(arg[0]) if arg else None)
