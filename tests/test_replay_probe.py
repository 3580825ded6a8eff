"""`tomacs replay --probe`: a logistic probe on the policy's own inputs, fitted on the run's own test
debates and scored on the replayed ones. The rows and labels against the replay table's by hand, the AUC on
separable and reversed inputs, the rows it cannot score, and the command end to end (with its refusal); with
--held-out, the second probe fitted on the real debates of the fitting questions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.test_replay import MAD, _constructed, gsafeguard_run, replay_error, run  # noqa: F401
from tomacs.analysis.replay import ReplayError, load_policy, replay_inputs
from tomacs.analysis.replay_probe import labelled_rows, probe_aucs, with_real_probe
from tomacs.transcripts import load_debates
from tomacs.transcripts.split import Fold, split_questions


def test_rows_and_labels_are_the_tables() -> None:
    d, ep = _constructed()  # agent 0 honest, agent 1 adversary from round 2, agent 2 from round 1; T = 2
    inputs = {"2": np.arange(6.0).reshape(3, 2), "decision": 10 + np.arange(6.0).reshape(3, 2)}
    rows = labelled_rows([(d, ep)], [inputs])
    x2, y2 = rows["2"]
    # round 2 reads round 1: agent 1 is dormant and left out, as in the table's row
    assert y2.tolist() == [0, 1] and x2.tolist() == [[0.0, 1.0], [4.0, 5.0]]
    xd, yd = rows["decision"]
    assert yd.tolist() == [0, 1, 1] and xd[:, 0].tolist() == [10.0, 12.0, 14.0]


def _side(y: list[int], signal: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Features whose first column is `signal` for an adversary and 0 for an honest agent, plus noise."""
    y_arr = np.asarray(y)
    x = rng.normal(0, 0.1, size=(len(y), 3))
    x[:, 0] += signal * y_arr
    return x, y_arr


def test_the_probe_scores_what_it_learned() -> None:
    rng = np.random.default_rng(0)
    labels = [0, 1] * 20
    fit = {"2": _side(labels, 1.0, rng), "3": _side([0] * 40, 1.0, rng)}
    score = {
        "2": _side(labels, 1.0, rng),
        "3": _side(labels, 1.0, rng),  # fitted on one class only
        "4": _side(labels, 1.0, rng),  # a row the simulated side does not have (a longer real debate)
    }
    assert probe_aucs(fit, score) == {"2": 1.0, "3": None, "4": None}
    # the same cue reversed on the scored side: every adversary looks honest
    assert probe_aucs(fit, {"2": _side(labels, -1.0, rng)}) == {"2": 0.0}
    assert probe_aucs(fit, {"2": _side([0] * 10, 1.0, rng)}) == {"2": None}  # nothing to rank


@pytest.mark.slow
def test_the_command_adds_a_probe_column(run: Path, tmp_path: Path) -> None:  # noqa: F811
    from tomacs.cli import app

    out = tmp_path / "probe.json"
    res = CliRunner().invoke(app, ["replay", str(run), str(MAD), "--probe", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "probe" in res.output and "own 5 test debates" in " ".join(res.output.split())
    s = json.loads(out.read_text())["summary"]
    assert s["probe"]["debates"] == 5 and s["probe"]["episodes"] == str(run / "episodes.jsonl")
    rows = {r["round"]: r["probe_auc"] for r in s["rows"]}
    # the run is 6 x 4 at eq50, adversaries from round 3 or 4: its rows 2 and 3 (reading rounds 1..2) hold no
    # acting adversary, so nothing is fitted there; MAD's row 5 has no simulated counterpart; "all" is pooled
    assert rows["2"] is None and rows["3"] is None and rows["5"] is None and rows["all"] is None
    # rows 4 and the decision: the probe of `probe_aucs` on what the policy read, fitted on the run's episodes
    policy = load_policy(run)
    sim_pairs, sim_in = replay_inputs(policy, load_debates([run / "episodes.jsonl"]))
    real_pairs, real_in = replay_inputs(policy, load_debates([MAD]))
    want = probe_aucs(labelled_rows(sim_pairs, sim_in), labelled_rows(real_pairs, real_in))
    assert rows["4"] == want["4"] and rows["decision"] == want["decision"]
    assert 0.0 <= rows["4"] <= 1.0 and 0.0 <= rows["decision"] <= 1.0
    # without --probe nothing changes
    plain = CliRunner().invoke(app, ["replay", str(run), str(MAD), "--out", str(tmp_path / "plain.json")])
    assert (
        plain.exit_code == 0 and "probe" not in json.loads((tmp_path / "plain.json").read_text())["summary"]
    )


@pytest.mark.slow
def test_the_command_refuses_a_policy_without_inputs_to_read(
    gsafeguard_run: Path,  # noqa: F811
    run: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    err = replay_error
    assert "no credit policy" in err(str(gsafeguard_run), str(MAD), "--probe")
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("config.yaml", "best.pt", "checkpoint.pt"):  # the run, less its episodes
        if (run / name).exists():
            (bare / name).write_bytes((run / name).read_bytes())
    assert "episodes.jsonl, which is missing" in err(str(bare), str(MAD), "--probe")


@pytest.mark.slow
def test_held_out_adds_a_probe_fitted_on_the_real_fitting_debates(run: Path, tmp_path: Path) -> None:  # noqa: F811
    from tomacs.cli import app

    out = tmp_path / "real.json"
    res = CliRunner().invoke(app, ["replay", str(run), str(MAD), "--held-out", "--probe", "--out", str(out)])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "real: the same probe fitted on the 4 real debates of the 4 fitting questions" in said
    s = json.loads(out.read_text())["summary"]
    fit, held = split_questions(load_debates([MAD]))  # calibrate's split: 4 questions fitted, 1 held out
    assert s["probe"]["real"] == {"debates": len(fit), "questions": 4} and s["debates"] == len(held) == 1
    policy = load_policy(run)
    fit_pairs, fit_in = replay_inputs(policy, fit)
    held_pairs, held_in = replay_inputs(policy, held)
    want = probe_aucs(labelled_rows(fit_pairs, fit_in), labelled_rows(held_pairs, held_in))
    rows = {r["round"]: r for r in s["rows"]}
    assert {k: rows[k]["real_probe_auc"] for k in want} == want
    assert any(v is not None for v in want.values())  # the check compares numbers, not only Nones
    assert rows["all"]["real_probe_auc"] is None  # pooled over rows: no probe of its own
    # --fold k/K (one fold of a cross-fit) replays that fold and learns the real probe from the others
    fold_out = tmp_path / "fold.json"
    res = CliRunner().invoke(
        app, ["replay", str(run), str(MAD), "--fold", "2/5", "--probe", "--out", str(fold_out)]
    )
    assert res.exit_code == 0, res.output
    fit, held = split_questions(load_debates([MAD]), fold=Fold(2, 5))
    s = json.loads(fold_out.read_text())["summary"]
    assert s["debates"] == len(held) and held != split_questions(load_debates([MAD]))[1]
    assert s["probe"]["real"] == {"debates": len(fit), "questions": 4}
    # without --held-out there is no fitting side to learn from: the first probe only
    plain_out = tmp_path / "p.json"
    plain = CliRunner().invoke(app, ["replay", str(run), str(MAD), "--probe", "--out", str(plain_out)])
    assert plain.exit_code == 0 and "real" not in json.loads(plain_out.read_text())["summary"]["probe"]


def test_the_real_probe_needs_fitting_debates() -> None:
    with pytest.raises(ReplayError, match="no real debate of the fitting questions"):
        with_real_probe([])
