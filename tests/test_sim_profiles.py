"""The user profile store (issue 26 item 2): save/resolve, the path form, one-line errors, and runs
on a stored profile that name it in results.json, W&B and the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tomacs.sim.backbone import SimBackbone
from tomacs.sim.model import SimProfile, load_profiles
from tomacs.sim.profiles import (
    DEFAULT_STORE,
    HEADER,
    load_profile_file,
    resolve_profile,
    save_profile,
    store_dir,
    stored_names,
)
from tomacs.types import Question

PAPER = ("arc_c", "gsm8k", "medqa", "mmlu", "openbookqa")
PROV = {"sources": ["a.jsonl", "b.jsonl"], "models": ["qwen-max"], "fit_date": "2026-11-25", "split_seed": 7}


def _mine(name: str = "mine", **kw: float) -> SimProfile:
    """A profile with values no YAML rounding would keep by accident."""
    base = replace(load_profiles()["mmlu"], name=name, n_cand=5, accuracy=1 / 3, persuasion=2.0 / 7)
    return replace(base, **kw)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "store"
    monkeypatch.setenv("TOMACS_PROFILES", str(d))
    return d


def test_store_is_outputs_profiles_of_the_working_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOMACS_PROFILES", raising=False)
    assert store_dir() == DEFAULT_STORE == Path("outputs/profiles")
    monkeypatch.setenv("TOMACS_PROFILES", "/x/y")
    assert store_dir() == Path("/x/y")


def test_save_then_resolve_by_name_round_trips_exactly(store: Path) -> None:
    prof = _mine()
    path = save_profile(prof, {**PROV, "heldout": {"loglik": np.float64(-0.5), "n": np.int64(90)}})
    assert path == store / "mine.yaml" and stored_names() == ["mine"]
    text = path.read_text()
    assert text.startswith(HEADER.format(name="mine")) and "FITTED FROM REAL DEBATE EPISODES" in text
    assert "not a paper profile" in text
    got, prov, source = resolve_profile("mine")
    assert got == prof  # every float exactly, 1/3 included
    assert prov == {**PROV, "heldout": {"loglik": -0.5, "n": 90}}
    assert source == str(path.resolve())
    # the documented layout: name, profile (every field but name), provenance
    import yaml

    doc = yaml.safe_load(text)
    assert list(doc) == ["name", "profile", "provenance"] and doc["name"] == "mine"
    assert "name" not in doc["profile"] and doc["profile"]["n_cand"] == 5


def test_a_refit_under_the_same_name_replaces_the_stored_one(store: Path) -> None:
    save_profile(_mine(), PROV)
    save_profile(_mine(accuracy=0.5), {**PROV, "fit_date": "2026-11-26"})
    got, prov, _ = resolve_profile("mine")
    assert got.accuracy == 0.5 and prov is not None and prov["fit_date"] == "2026-11-26"
    assert sorted(p.name for p in store.iterdir()) == ["mine.yaml"]  # no temp file left behind


def test_path_form(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dest = tmp_path / "elsewhere" / "fit.yml"
    assert save_profile(_mine("other"), PROV, dest=dest) == dest
    assert stored_names() == []  # a dest is not the store
    for value in (str(dest), dest):
        prof, prov, source = resolve_profile(value)
        assert prof.name == "other" and prov == PROV and source == str(dest.resolve())
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert resolve_profile("fit.yml")[0].name == "other"  # ends in .yml: a path relative to the cwd
    assert resolve_profile("./fit.yml")[0].name == "other"
    with pytest.raises(ValueError, match=r"^sim profile file nope/x\.yaml not found; fit one with"):
        resolve_profile("nope/x.yaml")


def test_paper_profiles_come_first_and_are_unchanged(store: Path) -> None:
    for name in PAPER:
        prof, prov, source = resolve_profile(name)
        assert prof == load_profiles()[name] and prov is None and source == "paper"


def test_unknown_name_lists_paper_and_stored_profiles_and_how_to_make_one(store: Path) -> None:
    with pytest.raises(ValueError) as e:
        resolve_profile("nope")
    msg = str(e.value)
    assert "\n" not in msg and "unknown sim profile 'nope'" in msg
    assert "paper profiles: arc_c, gsm8k, medqa, mmlu, openbookqa" in msg and "(none)" in msg
    assert "tomacs sim fit-episodes PATH --name NAME" in msg
    save_profile(_mine("zeta"), PROV)
    save_profile(_mine("alpha"), PROV)
    with pytest.raises(ValueError, match=rf"stored in {store}: alpha, zeta;"):
        resolve_profile("nope")


@pytest.mark.parametrize("name", PAPER)
def test_a_paper_profile_name_is_refused(store: Path, name: str) -> None:
    with pytest.raises(
        ValueError, match=rf"^save_profile: '{name}' is a paper profile's name .*choose another"
    ):
        save_profile(_mine(name), PROV)
    assert not store.exists()


def test_bad_names_and_provenance_are_refused(store: Path) -> None:
    for bad in ("a/b", "x.yaml", "", "-x"):
        with pytest.raises(ValueError, match="profile name"):
            save_profile(_mine(bad), PROV)
    with pytest.raises(TypeError, match="provenance value"):
        save_profile(_mine(), {"fn": object()})
    assert not store.exists()


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("name: mmlu\nprofile: {}\n", r"'mmlu' is a paper profile's name"),
        ("- 1\n- 2\n", r"expected a mapping with `name`, `profile`"),
        ("name: x\n", r"expected a mapping with `name`, `profile`"),
        (
            "name: x\nprofile: {n_cand: 4, accuracy: 0.5, bogus: 1}\n",
            r"unknown `profile` field\(s\) \['bogus'\]",
        ),
        ("name: x\nprofile: {n_cand: 4, accuracy: 0.5}\n", r"`profile`: SimProfile 'x' lacks keys"),
        ("name: x\nprofile: {}\nprovenance: [1]\n", r"lacks keys|`provenance` must be a mapping"),
        ("name: x\nprofile: {n_cand: 4\n", r"not a readable profile file"),
    ],
)
def test_a_malformed_file_fails_in_one_line_naming_file_and_field(
    tmp_path: Path, body: str, error: str
) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(body)
    with pytest.raises(ValueError, match=error) as e:
        load_profile_file(f)
    assert str(e.value).startswith(str(f)) and "\n" not in str(e.value)


def test_a_stored_file_whose_name_disagrees_is_refused(store: Path) -> None:
    path = save_profile(_mine("mine"), PROV)
    path.rename(store / "yours.yaml")
    with pytest.raises(ValueError, match=r"yours\.yaml: `name: mine` but the file is yours\.yaml"):
        resolve_profile("yours")


def test_a_five_option_profile_answers_four_option_questions(store: Path) -> None:
    save_profile(_mine(), PROV)
    bb = SimBackbone("mine", seed=0)
    assert bb.name == "sim:mine" and bb.user_profile and bb.profile.n_cand == 5
    q = Question(id="q1", text="?", options=("a", "b", "c", "d"), answer="B", benchmark="mmlu", kind="mc")
    cands, truth, _ = bb._question_state(q)
    assert len(cands) == 4 and cands[truth] == "B"
    info = bb.stats()
    assert info["profile"] == "mine" and info["profile_source"] == "store"
    assert (
        info["profile_file"] == str((store / "mine.yaml").resolve())
        and info["profile_fit_date"] == "2026-11-25"
    )
    paper = SimBackbone("mmlu", seed=0).stats()
    assert paper["profile_source"] == "paper" and paper["profile_fit_date"] is None
    assert paper["profile_file"].endswith(os.path.join("conf", "backbone", "sim.yaml"))


# ---------------------------------------------------------------------------------------------
# end to end through the CLI, in a fresh working directory (the store is outputs/profiles there)
def _train(cwd: Path, run: str, *overrides: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TOMACS_PROFILES"}
    env.setdefault("WANDB_MODE", "offline")
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "train", "method=complete", "backbone=sim", "eval.size=3",
         "embedder=hashing", f"hydra.run.dir=outputs/runs/{run}", *overrides],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads((cwd / "outputs" / "runs" / run / "results.json").read_text())


@pytest.mark.slow
def test_cli_runs_on_a_stored_profile_and_results_wandb_and_report_name_it(tmp_path: Path) -> None:
    from tomacs.launch.tracking import read_offline_run

    # a profile that is sure of every answer and one that never knows it: the run follows the profile
    sure = replace(_mine("sure"), accuracy=0.999, concentration=500.0)
    lost = replace(_mine("lost"), accuracy=0.001, concentration=500.0)
    save_profile(sure, PROV, dest=tmp_path / DEFAULT_STORE / "sure.yaml")
    save_profile(lost, {}, dest=tmp_path / "lost.yaml")

    res = _train(tmp_path, "stored", "backbone.profile=sure", "logger=wandb")
    assert res["backbone"] == "sim:sure" and res["metrics"]["acc"] == 1.0
    st = res["backbone_stats"]
    assert (
        st["profile"] == "sure" and st["profile_source"] == "store" and st["profile_fit_date"] == "2026-11-25"
    )
    assert st["profile_file"] == str((tmp_path / "outputs" / "profiles" / "sure.yaml").resolve())
    assert res["config"]["backbone"]["profile"] == "sure"
    wb = read_offline_run(next((tmp_path / "outputs" / "runs" / "stored").rglob("offline-run-*")))
    assert wb["summary"]["backbone"] == "sim:sure"
    assert wb["config"]["sim_profile"]["profile"] == "sure"
    assert wb["config"]["sim_profile"]["profile_file"] == st["profile_file"]
    assert wb["config"]["sim_profile"]["profile_fit_date"] == "2026-11-25"

    res = _train(tmp_path, "path", "backbone.profile=lost.yaml", "benchmark=synthetic_numeric")
    assert res["backbone"] == "sim:lost" and res["metrics"]["acc"] == 0.0
    st = res["backbone_stats"]
    assert st["profile_source"] == "file" and st["profile_file"] == str((tmp_path / "lost.yaml").resolve())
    assert st["profile_fit_date"] is None

    paper = _train(tmp_path, "paper")
    assert paper["backbone"] == "sim" and paper["backbone_stats"]["profile_source"] == "paper"

    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "report", "outputs/runs"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    md = (tmp_path / "outputs" / "runs" / "report" / "report.md").read_text()
    assert "backbone=sim, backbone=sim:lost, backbone=sim:sure" in md
    rows = {line.split("|")[2].strip() for line in md.splitlines() if line.startswith("| complete |")}
    assert rows == {
        "backbone.profile=lost.yaml (sim:lost)",
        "backbone.profile=null (sim)",
        "backbone.profile=sure (sim:sure)",
    }


@pytest.mark.slow
def test_cli_unknown_profile_is_one_line(tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "train", "backbone=sim", "backbone.profile=nope", "eval.size=3"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert p.returncode != 0
    err = [line for line in (p.stdout + p.stderr).splitlines() if "nope" in line]
    assert (
        len(err) == 1 and "paper profiles: arc_c" in err[0] and "sim fit-episodes PATH --name NAME" in err[0]
    )
