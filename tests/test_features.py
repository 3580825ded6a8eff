"""TodyComm node features (Appendix C) against hand computations on 3-agent examples.

Embeddings are 2-dimensional so every cosine and distance can be worked out on paper:
e0 = (1, 0), e1 = (0, 1), e2 = (0.6, 0.8).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tomacs.methods.features import (
    FEATURE_SETS,
    SOL_DIM,
    build_features,
    encode_solution,
    feature_dim,
    feature_names,
    same_answer,
)
from tomacs.types import AgentOutput

E0, E1, E2 = (1.0, 0.0), (0.0, 1.0), (0.6, 0.8)
D = 2


def _row(answers: list[str | None], embs: list[tuple[float, float]], rnd: int) -> list[AgentOutput]:
    return [
        AgentOutput(
            agent=i, round=rnd, text="", answer=a, participated=True, behaviour="honest", embedding=list(e)
        )
        for i, (a, e) in enumerate(zip(answers, embs, strict=True))
    ]


def _get(f: np.ndarray, name: str, features: str = "full") -> np.ndarray:
    sl = dict(feature_names(D, features))[name]
    out = f[..., sl]
    return out[..., 0] if sl.stop - sl.start == 1 else out


def _onehot(letter: str) -> np.ndarray:
    v = np.zeros(SOL_DIM, dtype=np.float32)
    v["ABCDEFGHIJ".index(letter)] = 1.0
    return v


# Round-2 graph 0->1, 0->2, 1->2 with round-2 credits c = (0.8, 0.2, 0.5):
# agent 0 has no in-neighbours, agent 1 hears 0 (weight 1), agent 2 hears 0 and 1 (weights 0.8, 0.2).
EDGES = [(0, 1), (0, 2), (1, 2)]
CREDITS = [0.8, 0.2, 0.5]


@pytest.fixture
def example() -> np.ndarray:
    # q0: round-1 answers A B A, round-2 answers A A C; q1: round-2 answers A B A (neighbours of 2 disagree)
    first = [_row(["A", "B", "A"], [E0, E0, E2], 1), _row(["A", "B", "A"], [E0, E0, E2], 1)]
    prev = [_row(["A", "A", "C"], [E0, E1, E2], 2), _row(["A", "B", "A"], [E0, E1, E2], 2)]
    return build_features(prev, first, [EDGES, EDGES], np.array([CREDITS, CREDITS]), ["mc", "mc"], D)


def test_self_block(example: np.ndarray) -> None:
    f = example[0]
    assert np.allclose(_get(f, "sol"), [_onehot("A"), _onehot("A"), _onehot("C")])
    assert np.allclose(_get(f, "ana"), [E0, E1, E2])
    assert np.allclose(_get(f, "sol_per"), [1, 0, 0])  # A->A kept; B->A and A->C changed
    assert np.allclose(_get(f, "ana_per"), [1, 0, 1])  # cos(e0,e0), cos(e1,e0), cos(e2,e2)


def test_neighbour_block(example: np.ndarray) -> None:
    f = example[0]
    assert np.allclose(_get(f, "has_nbr"), [0, 1, 1])
    assert np.allclose(_get(f, "nbr_sol"), [np.zeros(SOL_DIM), _onehot("A"), _onehot("A")])
    # agent 2: 0.8*e0 + 0.2*e1
    assert np.allclose(_get(f, "nbr_ana"), [(0, 0), E0, (0.8, 0.2)])
    assert np.allclose(_get(f, "sol_disp"), [0, 0, 0])  # both neighbours of 2 say A
    # agent 2: centroid (0.5, 0.5); each neighbour at cosine 1/sqrt2 -> 1 - 0.70711
    assert np.allclose(_get(f, "ana_disp"), [0, 0, 1 - 1 / math.sqrt(2)], atol=1e-6)
    g = example[1]  # neighbours of 2 answer A (credit 0.8) and B (credit 0.2)
    assert np.allclose(_get(g, "sol_disp")[2], 0.5)
    assert np.allclose(_get(g, "nbr_sol")[2], 0.8 * _onehot("A") + 0.2 * _onehot("B"))


def test_difference_block(example: np.ndarray) -> None:
    f = example[0]
    assert np.allclose(_get(f, "sol_agree"), [0, 1, 0])  # agent 1 (A) hears A; agent 2 (C) hears A, A
    # agent 2: cos((0.6,0.8),(0.8,0.2)) = 0.64 / sqrt(0.68)
    assert np.allclose(_get(f, "ana_agree"), [0, 0, 0.64 / math.sqrt(0.68)], atol=1e-6)
    assert np.allclose(_get(f, "sol_dist"), [0, 0, math.sqrt(2)], atol=1e-6)
    # agent 1: |e1 - e0| = sqrt2; agent 2: |(0.6-0.8, 0.8-0.2)| = sqrt(0.4)
    assert np.allclose(_get(f, "ana_dist"), [0, math.sqrt(2), math.sqrt(0.4)], atol=1e-6)
    g = example[1]  # agent 2 answers A; neighbours A (0.8) and B (0.2)
    assert np.allclose(_get(g, "sol_agree")[2], 0.8)
    assert np.allclose(_get(g, "sol_dist")[2], math.sqrt(0.2**2 + 0.2**2), atol=1e-6)


def test_round_two_has_no_neighbours_and_equal_weights_without_credits() -> None:
    first = [_row(["A", "B", "A"], [E0, E1, E2], 1)]
    f = build_features(first, first, None, None, ["mc"], D)[0]
    for name in ("has_nbr", "sol_disp", "ana_disp", "sol_agree", "ana_agree", "sol_dist", "ana_dist"):
        assert np.allclose(_get(f, name), 0), name
    assert np.allclose(_get(f, "nbr_ana"), 0) and np.allclose(_get(f, "sol_per"), 1)
    # with a graph but no credits (or all-zero credits), neighbours weigh equally
    for credits in (None, np.zeros((1, 3))):
        g = build_features(first, first, [EDGES], credits, ["mc"], D)[0]
        assert np.allclose(_get(g, "nbr_ana")[2], (0.5, 0.5))
        assert np.allclose(_get(g, "sol_agree")[2], 0.5)  # A hears A and B


def test_numeric_answers_compare_as_numbers() -> None:
    first = [_row(["3", "3", "-2.5"], [E0, E1, E2], 1)]
    prev = [_row(["3", "3.0", "-2.5"], [E0, E1, E2], 2)]
    f = build_features(prev, first, [EDGES], np.array([CREDITS]), ["numeric"], D)[0]
    sol = _get(f, "sol")
    assert np.allclose(sol[2, 10:], [-1.0, math.log10(3.5), 0.0])
    assert np.allclose(sol[:, :10], 0)
    assert np.allclose(_get(f, "sol_per"), [1, 1, 1])
    assert np.allclose(_get(f, "sol_agree"), [0, 1, 0])  # "3.0" agrees with "3"
    assert np.allclose(_get(f, "sol_disp"), [0, 0, 0])  # 3 and 3.0 are one group


def test_unparsed_answers_agree_with_nothing() -> None:
    assert np.array_equal(encode_solution(None, "mc")[-1:], [1.0])
    assert encode_solution("Z", "mc")[-1] == 1.0 and encode_solution("x1", "numeric")[-1] == 1.0
    assert not same_answer(None, None, "mc") and same_answer("b", "B", "mc")
    first = [_row([None, None, None], [E0, E1, E2], 1)]
    f = build_features(first, first, [EDGES], None, ["mc"], D)[0]
    assert np.allclose(_get(f, "sol_disp"), [0, 0, 0.5])  # two unparsed neighbours = two groups
    assert np.allclose(_get(f, "sol_agree"), 0) and np.allclose(_get(f, "sol_per"), 0)
    with pytest.raises(ValueError, match="kind"):
        encode_solution("A", "essay")


@pytest.mark.parametrize("features", FEATURE_SETS)
def test_feature_sets_select_blocks(example: np.ndarray, features: str) -> None:
    first = [_row(["A", "B", "A"], [E0, E0, E2], 1)]
    prev = [_row(["A", "A", "C"], [E0, E1, E2], 2)]
    f = build_features(prev, first, [EDGES], np.array([CREDITS]), ["mc"], D, features=features)
    assert f.shape == (1, 3, feature_dim(D, features))
    names = [n for n, _ in feature_names(D, features)]
    assert ("sol_per" in names) == (features != "no_persist")
    assert ("has_nbr" in names) == (features in ("full", "no_persist", "self_neighbor"))
    assert ("sol_agree" in names) == (features in ("full", "no_persist", "self_diff"))
    for name in names:  # every selected column equals the same column of the full features
        assert np.allclose(_get(f[0], name, features), _get(example[0], name)), name
    sizes = {"full": 2 * SOL_DIM + 2 * D + 9, "no_persist": 2 * SOL_DIM + 2 * D + 7}
    if features in sizes:
        assert feature_dim(D, features) == sizes[features]


def test_missing_or_wrong_embeddings_fail_clearly() -> None:
    row = _row(["A", "B", "A"], [E0, E1, E2], 1)
    row[1].embedding = None
    with pytest.raises(ValueError, match="needs_embeddings"):
        build_features([row], [row], None, None, ["mc"], D)
    with pytest.raises(ValueError, match="dimension"):
        build_features(
            [_row(["A"] * 3, [E0, E1, E2], 1)], [_row(["A"] * 3, [E0, E1, E2], 1)], None, None, ["mc"], 5
        )
    with pytest.raises(ValueError, match="feature set"):
        feature_dim(D, "everything")
