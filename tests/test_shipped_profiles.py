"""The shipped sim profiles (issue 39, item 4): one per model with real debates beside the checkout, in
conf/profiles/ (`make profiles` refits them), each with its provenance and held-out scorecard; where
`backbone.profile=NAME` looks (paper, shipped, store, path), the refusal of a shipped name in the user's
store, `tomacs list`'s profile table, and a run on a shipped profile from an empty directory."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tomacs.sim import profiles
from tomacs.sim.model import SimProfile, load_profiles
from tomacs.sim.profiles import (
    describe,
    list_profiles,
    load_profile_file,
    load_text_model,
    resolve_profile,
    save_profile,
    shipped_dir,
    shipped_names,
)

REPO = Path(__file__).resolve().parents[1]
# name -> (source repository as the header names it, commit, the honest model, the debates' folder)
SHIPPED = {
    "mad-qwen3-8b": ("Qi-Smile/MAD-Follower", "b0c0c89c840a16644841bdd5248205a643dd0c34", "qwen3-8b"),
    "mad-qwen-max": ("Qi-Smile/MAD-Follower", "b0c0c89c840a16644841bdd5248205a643dd0c34", "qwen-max"),
    "maa-gpt35": (
        "amayuelas/multi-agent-attack",
        "ce8ab36f7621914a51cb3b148368028a9979bd81",
        "gpt-3.5-turbo",
    ),
    "maa-qwen14": (
        "amayuelas/multi-agent-attack",
        "ce8ab36f7621914a51cb3b148368028a9979bd81",
        "Qwen1.5-14B-Chat",
    ),
    "maa-gpt4o": ("amayuelas/multi-agent-attack", "ce8ab36f7621914a51cb3b148368028a9979bd81", "gpt-4o"),
}
PROV = {"sources": ["x.jsonl"], "models": ["m"], "fit_date": "2026-11-27"}


def _prof(name: str, accuracy: float) -> SimProfile:
    return replace(load_profiles()["mmlu"], name=name, accuracy=accuracy)


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(shipped dir, store): both empty tmp dirs, the shipped one in place of conf/profiles."""
    ship, store = tmp_path / "ship", tmp_path / "store"
    ship.mkdir()
    monkeypatch.setattr(profiles, "shipped_dir", lambda: ship)
    monkeypatch.setenv("TOMACS_PROFILES", str(store))
    return ship, store


# ---------------------------------------------------------------------------------------------
# resolution order and the name rules


def test_resolution_order_is_paper_then_shipped_then_store_then_path(
    dirs: tuple[Path, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ship, store = dirs
    # the store's file first (a shipped name cannot be fitted into the store once it is shipped)
    save_profile(_prof("both", 0.3), PROV)
    save_profile(_prof("both", 0.2), PROV, dest=ship / "both.yaml")  # the shipped dir takes it
    save_profile(_prof("mine", 0.4), PROV)
    # a shipped file under a paper name never wins over the paper profile
    (ship / "mmlu.yaml").write_text((ship / "both.yaml").read_text().replace("name: both", "name: mmlu"))
    assert shipped_names() == ["both", "mmlu"]

    prof, _, source = resolve_profile("mmlu")
    assert source == "paper" and prof == load_profiles()["mmlu"]

    with caplog.at_level(logging.WARNING, logger="tomacs.sim.profiles"):
        prof, prov, source = resolve_profile("both")
    assert prof.accuracy == 0.2 and source == str((ship / "both.yaml").resolve())  # shipped before store
    assert any(
        "using the shipped" in r.getMessage() and "both.yaml" in r.getMessage() for r in caplog.records
    )
    assert describe(prof, prov, source)["profile_source"] == "shipped"

    prof, prov, source = resolve_profile("mine")
    assert prof.accuracy == 0.4 and source == str((store / "mine.yaml").resolve())
    assert describe(prof, prov, source)["profile_source"] == "store"

    prof, _, source = resolve_profile(str(store / "both.yaml"))  # a path names its file, whatever the name
    assert prof.accuracy == 0.3 and source == str((store / "both.yaml").resolve())

    with pytest.raises(ValueError) as e:
        resolve_profile("nope")
    msg = str(e.value)
    assert "\n" not in msg and "shipped: both, mmlu;" in msg and f"stored in {store}: both, mine;" in msg


def test_a_shipped_profile_is_labelled_like_a_user_one(dirs: tuple[Path, Path]) -> None:
    from tomacs.sim.backbone import SimBackbone

    ship, _ = dirs
    save_profile(_prof("shipme", 0.5), PROV, dest=ship / "shipme.yaml")
    bb = SimBackbone("shipme", seed=0)
    assert bb.result_label() == "sim:shipme" and bb.stats()["profile_source"] == "shipped"
    assert SimBackbone("mmlu", seed=0).result_label() == "sim"


def test_a_shipped_name_cannot_be_fitted_into_the_store(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tomacs_here: Callable[..., Any]
) -> None:
    ship, store = dirs
    save_profile(_prof("taken", 0.5), PROV, dest=ship / "taken.yaml")
    for args in (
        ("sim", "fit-episodes", str(tmp_path / "no-debates-here"), "--name", "taken"),
        ("calibrate", "--from-episodes", str(tmp_path / "no-debates-here"), "--name", "taken"),
    ):
        r = tomacs_here(*args)
        lines = [line for line in r.stderr.splitlines() if "error" in line]
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        # refused by its name, before the debates are read (the path does not exist)
        assert "'taken' is a shipped profile's name" in lines[0] and "choose another --name" in lines[0]
    with pytest.raises(ValueError, match=r"^save_profile: 'taken' is a shipped profile's name"):
        save_profile(_prof("taken", 0.1), PROV)
    with pytest.raises(ValueError, match="choose another --name"):  # nor beside it, under the same label
        save_profile(_prof("taken", 0.1), PROV, dest=tmp_path / "elsewhere" / "taken.yaml")
    assert not store.exists() and not (tmp_path / "elsewhere").exists()
    # a name nobody ships goes into the store as before
    assert save_profile(_prof("free", 0.1), PROV) == store / "free.yaml"
    # `make profiles` writes into the shipped directory itself: there a shipped name is refitted
    monkeypatch.setenv("TOMACS_PROFILES", str(ship))
    profiles._check_name("taken", "--name")
    assert save_profile(_prof("taken", 0.7), PROV) == ship / "taken.yaml"
    assert resolve_profile("taken")[0].accuracy == 0.7


def test_the_real_shipped_names_are_refused_in_a_user_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOMACS_PROFILES", str(tmp_path / "store"))
    for name in SHIPPED:
        with pytest.raises(ValueError, match=rf"^--name: '{name}' is a shipped profile's name"):
            profiles._check_name(name, "--name")


# ---------------------------------------------------------------------------------------------
# the shipped files themselves


def test_the_five_profiles_are_shipped_in_the_package_conf() -> None:
    from tomacs.paths import conf_dir

    assert shipped_dir() == conf_dir() / "profiles"
    assert shipped_names() == sorted(SHIPPED)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_a_shipped_profile_loads_with_its_provenance_and_scorecard(name: str) -> None:
    repo, commit, model = SHIPPED[name]
    path = shipped_dir() / f"{name}.yaml"
    prof, prov, source = resolve_profile(name)
    assert isinstance(prof, SimProfile) and prof.name == name and source == str(path.resolve())
    assert load_text_model(path) is not None  # how the model writes, fitted from the same debates
    assert prov is not None and prov["models"] == [model] and prov["split"] == 0.7 and prov["split_seed"] == 0
    # recorded relative to the checkout, not one machine's absolute path
    assert all(not str(s).startswith("/") for s in prov["sources"]), prov["sources"]
    assert prov["debates_fit"] > 0 and prov["questions_fit"] > 0 and prov["questions_held_out"] > 0
    held = prov["held_out"]
    assert 0 <= held["cells_inside"] <= held["cells_total"] and held["cells_total"] > 0
    assert set(held["loglik_per_answer"]) >= {"fitted", "keep_previous", "paper"}
    # the header names where the replies in its text model come from, and their licence
    head = path.read_text(encoding="utf-8").split("\nname:", 1)[0]
    assert f"github.com/{repo}" in head and commit in head and "MIT License" in head
    assert "make profiles" in head and "FITTING questions only" in head


# A known miss, reported, goes here with its reason (strict: the test says so when a refit starts to pass).
# gpt-4o's was one until its lapse rate (docs/experiments/2026-11-29-sim-lapse.md): fitted -0.2612 against the
# paper profile's -0.2566 on its 15 held-out questions, now -0.2390.
KNOWN_MISSES: dict[str, str] = {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[n]))
        if n in KNOWN_MISSES
        else n
        for n in sorted(SHIPPED)
    ],
)
def test_a_shipped_profile_beats_both_baselines_on_held_out_questions(name: str) -> None:
    """The issue's target: on the held-out questions the fitted profile predicts the honest agents'
    answers better (log-likelihood per answer) than keeping the previous answer and than the paper
    profile."""
    _, prov = load_profile_file(shipped_dir() / f"{name}.yaml")
    assert prov is not None
    ll = prov["held_out"]["loglik_per_answer"]
    assert ll["fitted"] > ll["keep_previous"], f"{name}: fitted {ll['fitted']:.4f} <= keep-previous"
    assert ll["fitted"] > ll["paper"], f"{name}: fitted {ll['fitted']:.4f} <= paper {ll['paper']:.4f}"


def test_make_profiles_refits_every_shipped_profile_into_conf_profiles() -> None:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = text.split("\nprofiles:", 1)[1].split("\n\n", 1)[0]
    assert "FIT_PROFILE = TOMACS_PROFILES=conf/profiles $(BIN)/tomacs sim fit-episodes" in text
    fitted = re.findall(r"\$\(FIT_PROFILE\) (\S+) --model (\S+) --name (\S+)", recipe)
    assert {name: model for _, model, name in fitted} == {n: v[2] for n, v in SHIPPED.items()}


def test_the_howto_table_shows_the_shipped_files_scorecards() -> None:
    """docs/howto/fit-profile.md's table of shipped profiles is the files' (a refit must update it)."""
    doc = (REPO / "docs" / "howto" / "fit-profile.md").read_text(encoding="utf-8")
    rows = {
        m.group(1): [c.strip().replace("**", "") for c in m.group(2).split("|")]
        for m in re.finditer(r"^\| `([a-z0-9.-]+)` \|(.*)\|$", doc, re.MULTILINE)
    }
    assert sorted(rows) == sorted(SHIPPED)
    for name, cells in rows.items():
        _, prov = load_profile_file(shipped_dir() / f"{name}.yaml")
        assert prov is not None
        h, ll = prov["held_out"], prov["held_out"]["loglik_per_answer"]
        assert cells[1:] == [
            f"{prov['debates_fit']} / {prov['questions_fit']}",
            f"{h['cells_inside']}/{h['cells_total']}",
            f"{ll['fitted']:.4f} / {ll['keep_previous']:.4f} / {ll['paper']:.4f}",
        ], name


# ---------------------------------------------------------------------------------------------
# tomacs list


def _rows(output: str) -> dict[str, list[str]]:
    out = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == 8 and cells[0]:
            out.setdefault(cells[0], cells)  # the first row of a name: the one it resolves to
    return out


def test_list_shows_every_profile_with_its_source_and_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tomacs.cli import app

    store = tmp_path / "store"
    monkeypatch.setenv("TOMACS_PROFILES", str(store))
    held = {
        "debates": 9,
        "questions": 3,
        "answers": 60,
        "cells_inside": 7,
        "cells_total": 9,
        "loglik_per_answer": {"fitted": -0.125, "keep_previous": -0.5, "paper": -0.75},
    }
    mine = {
        **PROV,
        "sources": ["runs/x/episodes.jsonl"],
        "debates_fit": 21,
        "questions_fit": 7,
        "held_out": held,
    }
    save_profile(_prof("my-fit", 0.5), mine)
    store.joinpath("maa-gpt35.yaml").write_text(store.joinpath("my-fit.yaml").read_text())  # hidden

    res = CliRunner().invoke(app, ["list"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    rows = _rows(res.output)
    assert rows["mmlu"][1:] == ["paper", "TodyComm Tables 7-8, Table 2 Complete", "-", "-", "-", "-", "-"]
    for name, (_, _, model) in SHIPPED.items():
        _, prov = load_profile_file(shipped_dir() / f"{name}.yaml")
        assert prov is not None
        h, ll = prov["held_out"], prov["held_out"]["loglik_per_answer"]
        source = ("mad-follower " if name.startswith("mad-") else "multi-agent-attack ") + model
        assert rows[name] == [
            name,
            "shipped",
            source,
            f"{prov['debates_fit']}/{prov['questions_fit']}",
            f"{h['cells_inside']}/{h['cells_total']}",
            f"{ll['fitted']:.4f}",
            f"{ll['keep_previous']:.4f}",
            f"{ll['paper']:.4f}",
        ]
    assert rows["my-fit"] == [
        "my-fit",
        "user",
        "episodes.jsonl m",
        "21/7",
        "7/9",
        "-0.1250",
        "-0.5000",
        "-0.7500",
    ]
    # the store's maa-gpt35.yaml is listed after the shipped one, marked as hidden by it
    lines = [line for line in res.output.splitlines() if "│ maa-gpt35 " in line]
    assert len(lines) == 2 and "shipped" in lines[0] and "user" in lines[1] and "hidden" in lines[1]
    names = [e.name for e in list_profiles()]
    assert names.index("openbookqa") < names.index("maa-gpt35") < names.index("my-fit")


def test_list_reads_no_text_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fast: the listing parses the files' heads, never their (long) `text` sections."""
    monkeypatch.setenv("TOMACS_PROFILES", str(tmp_path))
    parsed: list[str] = []
    real = yaml.load

    def recording(stream: Any, Loader: Any) -> Any:  # noqa: N803 - yaml's own keyword
        if isinstance(stream, str):
            parsed.append(stream)
        return real(stream, Loader=Loader)

    monkeypatch.setattr(yaml, "load", recording)
    entries = [e for e in list_profiles() if e.kind == "shipped"]
    assert len(entries) == len(SHIPPED) == len(parsed)
    assert all("\ntext:" not in text and "\nprovenance:" in text for text in parsed)
    assert max(len(text) for text in parsed) < 20_000  # the heads, not the ~150-330 kB files


# ---------------------------------------------------------------------------------------------
# a run on a shipped profile


def test_evaluate_on_a_shipped_profile_from_an_empty_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tomacs_here: Callable[..., Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOMACS_PROFILES", raising=False)  # the store: ./outputs/profiles, absent here
    run = tmp_path / "run"
    r = tomacs_here(
        "evaluate", "method=debate", "backbone=sim", "backbone.profile=maa-gpt35", "agents=3", "rounds=3",
        "attack=maa", "eval.size=2", "benchmark=mmlu", "embedder=hashing", f"hydra.run.dir={run}",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((run / "results.json").read_text())
    assert res["backbone"] == "sim:maa-gpt35"
    st = res["backbone_stats"]
    assert st["profile"] == "maa-gpt35" and st["profile_source"] == "shipped"
    assert st["profile_file"] == str((shipped_dir() / "maa-gpt35.yaml").resolve())
    assert str(st.get("profile_texts", "")).startswith("fitted")  # the shipped text model writes the replies
    # and its replies draw words near each question from its vocabulary (`tomacs.sim.topic_words`)
    tm = profiles.load_text_model(shipped_dir() / "maa-gpt35.yaml")
    assert tm is not None and st["profile_topic_words"] == len(tm.vocabulary) > 1000
    assert not (tmp_path / "outputs" / "profiles").exists()
