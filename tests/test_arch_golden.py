"""The architecture step (issue 16) changes no number: every method, before and after, byte for byte.

tests/data/arch_golden.json holds, for a fixed set of small sim runs (every registered method at attack
none/eq50/gt50, each method under budget b1 and under decision=crs, TodyComm's oracle ablation), the
SHA-256 of episodes.jsonl, the metrics (wall times removed) and, for learned methods, the numbers of
train_log.jsonl (losses, train/val metrics; timings removed). It was recorded on main before the
refactor. A change that is MEANT to change numbers (a bug fix, a simulator refit) re-records it and
says which runs changed and why in the commit:  python tests/test_arch_golden.py --record
A new method records only its own runs (the others' stay as they were):
python tests/test_arch_golden.py --record --only gsafeguard
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).parent / "data" / "arch_golden.json"

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


def _keep(key: str) -> bool:
    return not any(key.endswith(d) or key.startswith(d) for d in _DROP)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def run_digest(overrides: list[str], out_dir: Path) -> dict[str, Any]:
    """What a refactor must not change: episodes bytes, metrics and the training trajectory."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    name = overrides[0].split("=", 1)[1]
    mode = "train" if name in LEARNED else "evaluate"
    res = run_job(compose([*_TINY, *overrides]), mode, out_dir)
    data = (out_dir / "episodes.jsonl").read_bytes()
    out: dict[str, Any] = {
        "episodes_sha256": hashlib.sha256(data).hexdigest(),
        "metrics": {k: _clean(v) for k, v in sorted(res["metrics"].items()) if _keep(k)},
    }
    log = out_dir / "train_log.jsonl"
    if log.is_file():
        rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        out["train_log"] = [
            {k: _clean(v) for k, v in sorted(r.items()) if _keep(k) and k != "encoded"} for r in rows
        ]
    return out


def float_fingerprint() -> str:
    """Which float arithmetic this machine's torch/numpy do, as a short hash.

    Why: a learned method's tiny run is not bit-identical across CPUs. The same pinned wheels take
    other MKL and vectorised-math code paths on another vendor's CPU (seen: AMD, where the goldens
    were recorded, against Intel with AMX), and one ulp in a loss can flip a sampled edge. So the
    goldens of learned runs are kept per fingerprint (`_machines`), each recorded from the same
    known-good commit; a machine with no entry of its own is held to the reference numbers."""
    import platform

    import numpy as np
    import torch

    vendor = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("vendor_id"):
                vendor = line.split(":", 1)[1].strip()
                break
    except OSError:
        vendor = platform.processor()
    h = hashlib.sha256(f"{vendor}|{platform.machine()}|{torch.backends.cpu.get_cpu_capability()}".encode())
    with torch.random.fork_rng():
        torch.manual_seed(0)
        x = torch.randn(37, 29)
        w = torch.randn(29, 23, requires_grad=True)
        gru = torch.nn.GRU(23, 19, batch_first=True)
        opt = torch.optim.Adam([w, *gru.parameters()], lr=5e-4)
        out, _ = gru((x @ w).tanh().unsqueeze(0))
        loss = torch.log_softmax(out.squeeze(0), dim=-1).exp().sigmoid().sum()
        loss.backward()
        opt.step()
        for t in (loss.detach(), w.detach(), *(p.detach() for p in gru.parameters())):
            h.update(t.numpy().tobytes())
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((41, 31)), rng.standard_normal((31, 17))
    h.update(np.exp(a @ b / 10).tobytes())
    h.update(np.log1p(np.abs(a)).astype(np.float32).sum(axis=0).tobytes())
    return h.hexdigest()[:16]


def expected(golden: dict[str, Any], name: str) -> dict[str, Any]:
    """This machine's golden for a run: its own recording if it has one, else the reference."""
    mine = golden.get("_machines", {}).get(float_fingerprint(), {})
    return mine.get(name, golden[name])


def _params() -> list[Any]:
    """Static runs (no torch, byte-exact everywhere, about 0.3 s each) stay in `make test-fast`; learned
    runs (1-4 s each, about 2 min in all on 2 cores) are marked slow and run in `make test`."""
    return [
        pytest.param(name, marks=pytest.mark.slow) if RUNS[name][0].split("=", 1)[1] in LEARNED else name
        for name in sorted(RUNS)
    ]


@pytest.mark.parametrize("name", _params())
def test_run_matches_architecture_golden(name: str, tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text())
    assert name in golden, f"{name} has no golden: record it on main before the change"
    got = run_digest(RUNS[name], tmp_path)
    want = expected(golden, name)
    # metrics added after recording are new keys, not changed numbers: compare the recorded ones
    recorded = {k: got["metrics"].get(k, "missing") for k in want["metrics"]}
    assert json.dumps(recorded, sort_keys=True) == json.dumps(want["metrics"], sort_keys=True)
    assert got.get("train_log") == want.get("train_log")
    assert got["episodes_sha256"] == want["episodes_sha256"]


def test_golden_covers_every_registered_method() -> None:
    from tomacs.paths import conf_dir

    shipped = {p.stem for p in (conf_dir() / "method").glob("*.yaml")}
    covered = {ov[0].split("=", 1)[1] for ov in RUNS.values()}
    assert shipped == covered, f"methods without a golden run: {sorted(shipped - covered)}"


def test_a_machine_entry_holds_learned_runs_only_and_differs_from_the_reference() -> None:
    """A machine's own goldens exist only where its floats differ: learned runs, not static ones
    (those use no torch and must match the reference everywhere), and never a copy of the reference."""
    golden = json.loads(GOLDEN.read_text())
    for fp, runs in golden.get("_machines", {}).items():
        assert runs, fp
        for name, digest in runs.items():
            assert RUNS[name][0].split("=", 1)[1] in LEARNED, (fp, name)
            assert digest != golden[name], (fp, name)
    assert len(float_fingerprint()) == 16 and float_fingerprint() == float_fingerprint()


if __name__ == "__main__" and "--record-machine" in sys.argv:
    # This machine's goldens for the learned runs whose numbers differ from the reference. Run it
    # with the tomacs of the commit the reference was recorded from (a worktree on PYTHONPATH), e.g.
    #   git worktree add /tmp/known <commit>
    #   PYTHONPATH=/tmp/known python tests/test_arch_golden.py --record-machine
    import tempfile

    out = json.loads(GOLDEN.read_text())
    fp = float_fingerprint()
    mine: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, ov in sorted(RUNS.items()):
            if ov[0].split("=", 1)[1] not in LEARNED:
                continue
            got = run_digest(ov, Path(tmp) / name)
            ref = dict(out[name])
            ref["metrics"] = {k: got["metrics"].get(k, "missing") for k in out[name]["metrics"]}
            if {**got, "metrics": ref["metrics"]} != out[name]:
                mine[name] = {**got, "metrics": ref["metrics"]}
            print(name, "differs" if name in mine else "same", flush=True)
    out.setdefault("_machines", {})[fp] = mine
    if not mine:
        del out["_machines"][fp]
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(mine)} runs for machine {fp} into {GOLDEN}")

elif __name__ == "__main__" and "--record" in sys.argv:
    import tempfile

    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    out: dict[str, Any] = json.loads(GOLDEN.read_text()) if only else {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, ov in sorted(RUNS.items()):
            if only and ov[0] != f"method={only}":
                continue
            out[name] = run_digest(ov, Path(tmp) / name)
            print(name, out[name]["episodes_sha256"][:16], flush=True)
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
