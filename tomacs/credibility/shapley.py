"""Shapley values of a coalition game over agents: exact for small teams, Monte-Carlo beyond.

Why exact up to N = 10: the game's value of a coalition is cheap (aggregate the coalition's
existing outputs, no LLM call), so 2^10 evaluations per query cost milliseconds and remove the
sampling noise that would otherwise leak into every credibility update.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

ValueFn = Callable[[frozenset[int]], float]

__all__ = ["ValueFn", "exact_shapley", "monte_carlo_shapley", "shapley"]


def _memo(value: ValueFn) -> ValueFn:
    cache: dict[frozenset[int], float] = {}

    def v(s: frozenset[int]) -> float:
        if s not in cache:
            cache[s] = float(value(s))
        return cache[s]

    return v


def exact_shapley(value: ValueFn, n: int) -> np.ndarray:
    """phi_i = sum over S not containing i of |S|!(n-|S|-1)!/n! * (v(S+i) - v(S))."""
    if n < 1:
        return np.zeros(0)
    v = _memo(value)
    weights = [math.factorial(k) * math.factorial(n - k - 1) / math.factorial(n) for k in range(n)]
    phi = np.zeros(n)
    for mask in range(1 << n):
        s = frozenset(j for j in range(n) if mask >> j & 1)
        vs = v(s)
        w = weights
        for i in range(n):
            if i not in s:
                phi[i] += w[len(s)] * (v(s | {i}) - vs)
    return phi


def monte_carlo_shapley(value: ValueFn, n: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """Average marginal contributions over `samples` random permutations (antithetic pairs:
    each permutation is also walked reversed, which halves the variance for the same cost)."""
    if n < 1:
        return np.zeros(0)
    if samples < 1:
        raise ValueError(f"shapley samples must be >= 1, got {samples}")
    v = _memo(value)
    phi = np.zeros(n)
    walks = 0
    while walks < samples:
        perm = rng.permutation(n)
        for order in (perm, perm[::-1]):
            if walks >= samples:
                break
            s: frozenset[int] = frozenset()
            prev = v(s)
            for i in order:
                s = s | {int(i)}
                cur = v(s)
                phi[int(i)] += cur - prev
                prev = cur
            walks += 1
    return phi / walks


def shapley(
    value: ValueFn, n: int, exact_max: int = 10, samples: int = 200, rng: np.random.Generator | None = None
) -> np.ndarray:
    """Exact for n <= exact_max, Monte-Carlo permutation sampling beyond."""
    if n <= exact_max:
        return exact_shapley(value, n)
    return monte_carlo_shapley(value, n, samples, rng if rng is not None else np.random.default_rng(0))
