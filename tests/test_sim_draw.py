"""`backbone.draw`: other draws of the simulated agents on the same adversary plans and question latents.

It is how a user measures the evaluation's own noise (one checkpoint scored under several draws), so it must
change what the agents answer and nothing the run's seed fixes, and draw 0 must be every earlier run.
"""

from __future__ import annotations

import pytest

from tomacs.config import ConfigError, compose
from tomacs.job.components import build
from tomacs.launch.spec import job_spec
from tomacs.sim.backbone import SimBackbone


def _episodes(*extra: str) -> list[dict]:
    over = ["method=complete", "attack=gt50", "embedder=hashing", "eval.size=12", *extra]
    comps = build(job_spec(compose(over)), need_train=False)
    eps, _ = comps.executor.run_batch(comps.test_qs, comps.method, train=False, phase="eval")
    return [e.to_dict() for e in eps]


def _answers(eps: list[dict]) -> list[str | None]:
    return [o["answer"] for e in eps for rnd in e["rounds"] for o in rnd]


def test_a_draw_keeps_the_plans_and_redraws_the_agents() -> None:
    plain, zero, one, two = (
        _episodes(),
        _episodes("backbone.draw=0"),
        _episodes("backbone.draw=1"),
        _episodes("backbone.draw=2"),
    )
    assert zero == plain  # draw 0 is the run's own: earlier runs reproduce
    for other in (one, two):
        assert [e["question"]["id"] for e in other] == [e["question"]["id"] for e in plain]
        assert [e["plan"] for e in other] == [e["plan"] for e in plain]
    a0, a1, a2 = _answers(plain), _answers(one), _answers(two)
    assert len(a0) == len(a1) == len(a2) == 12 * 6 * 4
    assert a1 != a0 and a2 != a1 and a2 != a0
    # a redraw, not another model: most answers stay (the question latents are shared)
    assert sum(x == y for x, y in zip(a0, a1, strict=True)) > len(a0) / 2
    assert [e["rounds"][0][0]["text"] for e in one] != [e["rounds"][0][0]["text"] for e in plain]


@pytest.mark.parametrize("bad", [-1, 1.5, True, "1"])
def test_a_bad_draw_is_refused_naming_the_key(bad: object) -> None:
    with pytest.raises(ValueError, match=r"backbone\.draw must be an integer >= 0"):
        SimBackbone.check_settings({"name": "sim", "draw": bad})


def test_a_negative_draw_is_refused_where_the_config_is_validated() -> None:
    with pytest.raises(ConfigError, match=r"backbone\.draw must be an integer >= 0 .*got -1"):
        compose(["method=complete", "backbone.draw=-1"])
