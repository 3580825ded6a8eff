"""The dynamic adversary schedule (config group `attack`).

TodyComm §5: "6 agents collaborate over 4 rounds, with adversarial transitions occurring at round 3
or 4. Attack rates of <50%, =50%, >50% correspond to 2, 3 and 4 adversarial agents." Per episode we
draw, from an RNG the executor seeds per episode:

1. which agents turn adversarial — uniform over positions (`rng.choice(N, k, replace=False)`), so no
   agent index is a safer bet than another and a method cannot learn "agent 0 is honest";
2. each adversary's onset round, uniform over `onset_rounds` (default `DEFAULT_ONSET_ROUNDS`), or with
   `ordered_onsets` the i-th adversary drawn at `onset_rounds[i]` (a source with one adversary per onset);
3. ONE wrong target answer shared by all adversaries of the episode, uniform over the wrong answers
   given (a coordinated attack: adversaries agreeing with each other is what makes >=50% hard). With
   `target_lure` (a source's target rule, fitted from its debates) the target is instead the
   question's lure (the wrong answer the backbone's agents find most attractive) with that
   probability, else uniform over the other wrong answers. With `target_letters` (a source that fixes
   its target by letter, MAD-Follower: "B", or "A" when B is the gold) the target is the first letter
   of that list that is a wrong answer of the question, and nothing is drawn for it.

Before its onset an adversary runs the identical honest path; from onset on it uses the Appendix D
prompt (`tomacs.agents.prompts.adversarial_messages`) and appends the persuasive suffix (unless
`suffix=False`: stealthy adversaries, config `attack.suffix=false`). The plan is
stored in every episode record; ground truth for ADAcc is "adversarial iff onset <= T"
(`AdversaryPlan.labels`).

Draw order is fixed (positions, then onsets in position order, then target) so that one seed gives
one plan. With k = 0 nothing is drawn from the RNG.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tomacs.types import AdversaryPlan, Question

# TodyComm §5: "adversarial transitions occurring at round 3 or 4". The one place this default is
# written: the attack schema (tomacs.config.AttackSchema) and the calibration simulator read it here.
DEFAULT_ONSET_ROUNDS: tuple[int, ...] = (3, 4)
LURE_FROM_PROFILE = "profile"  # attack.target_lure: the sim profile's fitted target rule
ADVERSARY_PROMPTS: tuple[str, ...] = ("appd", "debate")
"""`attack.prompt`: App. D's (TodyComm) or the multi-agent-attack debates' (tomacs.agents.prompts)."""


def count_from_rate(rate: float, n_agents: int) -> int:
    """Number of adversaries for an attack rate: round half up, rate * N.

    Half-up (not Python's banker's `round`) so that e.g. rate 1/2 with N=5 gives 3 rather than 2
    and the rule is easy to state. A tiny epsilon absorbs float error (1/3 * 6 = 1.9999...). Rates
    1/3, 1/2, 2/3 give 2/3/4 of 6, 3/5/7 of 10, 5/8/10 of 15 and 7/10/13 of 20.
    """
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"attack.rate must be in [0, 1] (got {rate})")
    return int(math.floor(rate * n_agents + 0.5 + 1e-9))


@dataclass
class AdversarySchedule:
    """Draws one `AdversaryPlan` per episode; see the module docstring for the protocol.

    `count` wins over `rate`; with neither the schedule is empty (attack `none`). After init,
    `count` holds the resolved number of adversaries (an int, also available as `k`) whatever was
    given, so callers read one field; `rate` keeps what was configured. The count must be between
    0 and N and, with adversaries, every onset round in 1..rounds (an onset after the last round
    would label an agent adversarial that never turns).

    This is the one validation of the attack settings: `tomacs.config.validate` builds the schedule
    from the config and turns a ValueError into its one-line ConfigError, so each message names the
    config key to fix.
    """

    n_agents: int
    rounds: int
    count: int | None = None
    rate: float | None = None
    onset_rounds: Sequence[int] = DEFAULT_ONSET_ROUNDS
    name: str = "custom"
    fixed_agents: Sequence[int] | None = None  # the same adversaries in every episode (credibility)
    protected: Sequence[int] = ()  # agents never drawn as adversaries (the receiver of Tables 7-8)
    suffix: bool = True  # App. D's persuasive suffix after an adversary's answer; False = stealthy
    # the adversary's prompt: "appd" (TodyComm App. D: target only, < 100 words, reads nothing) or
    # "debate" (multi-agent-attack: told its target, reads the others like an honest agent, no limit)
    prompt: str = "appd"
    # P(the target is the question's lure); None = uniform over the wrong answers (App. D). Only a
    # backbone that knows each question's lure (the simulator) can follow it.
    target_lure: float | None = None
    # True: the i-th adversary drawn turns at onset_rounds[i] (one adversary per listed onset: MAD-Follower's
    # attacker from round 1 and follower from round 2); False: each draws its onset from the list
    ordered_onsets: bool = False
    # the target by letter: the first of these that is a wrong answer of the question (MAD-Follower:
    # [B, A]); None = drawn (uniformly, or by `target_lure`). Multiple choice only
    target_letters: Sequence[str] | None = None

    def __post_init__(self) -> None:
        if self.n_agents < 1:
            raise ValueError(f"n_agents must be >= 1, got {self.n_agents}")
        if self.rounds < 1:
            raise ValueError(f"rounds must be >= 1, got {self.rounds}")
        k = count_from_rate(float(self.rate), self.n_agents) if self.rate is not None else 0
        if self.count is not None:  # wins over the rate, which must still be a rate
            k = int(self.count)
            if not 0 <= k <= self.n_agents:
                raise ValueError(
                    f"attack.count={self.count} but only {self.n_agents} agents: "
                    f"set attack.count between 0 and agents={self.n_agents}"
                )
        if self.prompt not in ADVERSARY_PROMPTS:
            raise ValueError(
                f"attack.prompt={self.prompt!r} is not a known adversary prompt; "
                f"valid: {', '.join(ADVERSARY_PROMPTS)}"
            )
        if self.target_lure is not None and not 0.0 <= float(self.target_lure) <= 1.0:
            raise ValueError(
                f"attack.target_lure={self.target_lure} is not a probability: set it in [0, 1], "
                "'profile' (the sim profile's fitted value) or null (uniform)"
            )
        if not isinstance(self.suffix, bool):
            raise ValueError(f"attack.suffix must be true or false (got {self.suffix!r})")
        if self.target_letters is not None:
            letters = tuple(str(x).strip().upper() for x in self.target_letters)
            if len(letters) < 2 or len(set(letters)) != len(letters) or not all(len(x) == 1 for x in letters):
                raise ValueError(
                    f"attack.target_letters={list(self.target_letters)}: list two or more distinct option "
                    "letters, the first wrong one is the target (e.g. '[B,A]': B, or A when B is the gold)"
                )
            if self.target_lure is not None:
                raise ValueError(
                    "attack.target_letters and attack.target_lure are two target rules: "
                    "set one of them to null"
                )
            self.target_letters = letters
        self.onset_rounds = tuple(int(r) for r in self.onset_rounds)
        if k > 0 and (not self.onset_rounds or not all(1 <= r <= self.rounds for r in self.onset_rounds)):
            raise ValueError(
                f"attack.onset_rounds must lie in 1..rounds={self.rounds} (got {list(self.onset_rounds)}); "
                f"with fewer rounds set e.g. 'attack.onset_rounds=[{self.rounds}]'"
            )
        if not isinstance(self.ordered_onsets, bool):
            raise ValueError(f"attack.ordered_onsets must be true or false (got {self.ordered_onsets!r})")
        if self.ordered_onsets and k > 0 and len(self.onset_rounds) != k:
            raise ValueError(
                f"attack.ordered_onsets gives the i-th adversary onset_rounds[i], so it needs one onset per "
                f"adversary: {k} adversaries but onset_rounds={list(self.onset_rounds)}; list {k} rounds"
            )
        self.count = k
        self.protected = tuple(sorted({int(a) for a in self.protected}))
        if any(not 0 <= a < self.n_agents for a in self.protected):
            raise ValueError(
                f"attack {self.name!r}: protected agents {list(self.protected)} must lie in "
                f"0..{self.n_agents - 1}"
            )
        if k > self.n_agents - len(self.protected):
            raise ValueError(
                f"attack {self.name!r}: {k} adversaries but only {self.n_agents - len(self.protected)} "
                "unprotected agents; lower attack.count or drop attack.protect_last"
            )
        if self.fixed_agents is not None:
            fixed = tuple(sorted({int(a) for a in self.fixed_agents}))
            if len(fixed) != k or any(not 0 <= a < self.n_agents for a in fixed):
                raise ValueError(
                    f"attack {self.name!r}: fixed adversaries {list(fixed)} must be {k} distinct agents "
                    f"in 0..{self.n_agents - 1}"
                )
            if set(fixed) & set(self.protected):
                raise ValueError(
                    f"attack {self.name!r}: fixed adversaries {list(fixed)} include protected agents "
                    f"{list(self.protected)}"
                )
            self.fixed_agents = fixed

    @property
    def k(self) -> int:
        """The resolved number of adversaries per episode."""
        return int(self.count or 0)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], n_agents: int, rounds: int) -> AdversarySchedule:
        """Build from an `attack` config group entry (`name`, `count`, `rate`, `onset_rounds`,
        `suffix`, `prompt`, `protect_last`: the last agent is never an adversary); a key left out takes the
        field's default. `persistent` needs the run's seed: `tomacs.job.components.adversary_schedule`."""
        keys = ("count", "rate", "suffix", "prompt", "ordered_onsets")
        letters = cfg.get("target_letters")
        given = {k: cfg[k] for k in keys if cfg.get(k) is not None}
        lure = cfg.get("target_lure")
        if lure is not None and lure != LURE_FROM_PROFILE:  # 'profile' is settled with the backbone
            try:
                given["target_lure"] = float(lure)
            except (TypeError, ValueError):
                raise ValueError(
                    f"attack.target_lure={lure!r}: give a probability in [0, 1], "
                    f"'{LURE_FROM_PROFILE}' (the sim profile's fitted value) or null (uniform)"
                ) from None
        onsets = cfg.get("onset_rounds")
        if onsets is not None:
            given["onset_rounds"] = tuple(onsets)
        if letters is not None:
            given["target_letters"] = tuple(str(x) for x in letters)
        return cls(
            n_agents=n_agents,
            rounds=rounds,
            name=str(cfg.get("name") or "custom"),
            protected=(n_agents - 1,) if cfg.get("protect_last") else (),
            **given,
        )

    def plan(
        self,
        question: Question,
        wrong_answers: Sequence[str],
        rng: np.random.Generator,
        lure: str | None = None,
    ) -> AdversaryPlan:
        """Draw who, from when, and toward which shared wrong answer, for one episode.

        `wrong_answers` are the candidate targets (the executor passes
        `tomacs.benchmarks.base.wrong_answers`: every label but the gold, or the numeric candidates
        but the gold). Any entry equal to the gold answer is dropped, so the target is always
        wrong. The returned `adversaries` are sorted. `lure`: the question's lure, which
        `target_lure` needs (the executor asks the backbone).
        """
        if self.k == 0:
            return AdversaryPlan(adversaries=(), onsets={}, target=None)
        wrong = [str(a) for a in wrong_answers if str(a) != str(question.answer)]
        if not wrong:
            raise ValueError(f"question {question.id!r}: no wrong answer to use as adversarial target")
        pool = [a for a in range(self.n_agents) if a not in set(self.protected)]
        if self.k > len(pool):
            raise ValueError(
                f"attack {self.name!r}: {self.k} adversaries but only {len(pool)} unprotected agents"
            )
        agents = np.asarray(pool)[rng.choice(len(pool), size=self.k, replace=False)]
        if self.fixed_agents is not None:
            agents = np.asarray(self.fixed_agents)
        if self.ordered_onsets:  # the agents are drawn in random order, so who gets which onset is random
            onsets = {int(a): int(r) for a, r in zip(agents, self.onset_rounds, strict=True)}
        else:
            onset_idx = rng.integers(len(self.onset_rounds), size=self.k)
            onsets = {int(a): int(self.onset_rounds[int(j)]) for a, j in zip(agents, onset_idx, strict=True)}
        if self.target_letters is not None:
            fixed = [x for x in self.target_letters if x in wrong]
            if question.kind != "mc" or not fixed:
                raise ValueError(
                    f"attack.target_letters={list(self.target_letters)}: none is a wrong answer of question "
                    f"{question.id!r} (its wrong answers: {', '.join(wrong)}); list one more letter"
                )
            target = fixed[0]
        elif self.target_lure is None:
            target = wrong[int(rng.integers(len(wrong)))]
        else:
            if lure not in wrong:
                raise ValueError(
                    f"attack.target_lure needs the lure of question {question.id!r} among its wrong "
                    f"answers (got {lure!r}): only backbone=sim knows a question's lure"
                )
            others = [a for a in wrong if a != lure]
            pick_lure = rng.random() < float(self.target_lure) or not others
            target = lure if pick_lure else others[int(rng.integers(len(others)))]
        adversaries = tuple(sorted(int(a) for a in agents))
        ordered = {a: onsets[a] for a in adversaries}
        return AdversaryPlan(adversaries=adversaries, onsets=ordered, target=target)
