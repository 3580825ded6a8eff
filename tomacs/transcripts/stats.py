"""A first look at imported debates: per source and model, how many, how long, how good, how parsed.

The honest agents' round-1 accuracy and the unparsed share are the two numbers that tell a user
at once whether an import went wrong (a wrong answer key, a parser that missed every reply) before
anything is fitted to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tomacs.transcripts.schema import Debate

if TYPE_CHECKING:
    from rich.table import Table


def honest_model(d: Debate) -> str | None:
    """The model of the debate's honest agents when they share one (what a fit describes), else
    the debate's model."""
    models = {a.model for a in d.agents if a.role == "honest"}
    return models.pop() if len(models) == 1 and None not in models else d.model


@dataclass
class SourceStats:
    source: str
    model: str | None
    debates: int = 0
    agents: set[int] = field(default_factory=set)
    rounds: set[int] = field(default_factory=set)
    honest_r1: int = 0  # honest round-1 turns
    honest_r1_right: int = 0
    turns: int = 0
    unparsed: int = 0
    unparsed_honest: int = 0
    honest_turns: int = 0

    @property
    def honest_r1_accuracy(self) -> float | None:
        return self.honest_r1_right / self.honest_r1 if self.honest_r1 else None

    @property
    def unparsed_share(self) -> float | None:
        return self.unparsed / self.turns if self.turns else None

    @property
    def unparsed_honest_share(self) -> float | None:
        return self.unparsed_honest / self.honest_turns if self.honest_turns else None


def source_stats(debates: Sequence[Debate]) -> list[SourceStats]:
    """One row per (source, honest agents' model), in first-seen order. "Honest" means role honest:
    an adversary before its onset (MAD-Follower's follower in round 1) may run on another model.
    Round-1 accuracy counts an unparsed answer as wrong (the share beside it says how many)."""
    rows: dict[tuple[str, str | None], SourceStats] = {}
    for d in debates:
        key = (d.source, honest_model(d))
        s = rows.setdefault(key, SourceStats(*key))
        s.debates += 1
        s.agents.add(d.n_agents)
        s.rounds.add(d.n_rounds)
        for t in d.turns:
            honest = d.agents[t.agent].role == "honest"  # never adversarial: the model column's agents
            s.turns += 1
            s.unparsed += t.answer is None
            if honest:
                s.honest_turns += 1
                s.unparsed_honest += t.answer is None
            if honest and t.round == 1:
                s.honest_r1 += 1
                s.honest_r1_right += t.answer == d.gold
    return list(rows.values())


def stats_table(debates: Sequence[Debate]) -> Table:  # rich imported lazily
    from rich import box
    from rich.table import Table

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}"

    def span(v: set[int]) -> str:
        return ",".join(str(x) for x in sorted(v))

    rows = source_stats(debates)
    t = Table(
        title=f"{len(debates)} debates from {len({r.source for r in rows})} sources",
        box=box.SIMPLE_HEAD,
        caption="model: the honest agents'; N agents, T rounds; acc r1: the honest agents' round-1 accuracy %"
        " (unparsed = wrong); unparsed: % of all answers, of the honest agents' answers",
    )
    t.add_column("source", overflow="fold", min_width=12)
    t.add_column("model", overflow="fold", min_width=8)
    for col in ("debates", "N", "T", "acc r1", "unparsed", "honest unparsed"):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(
            r.source or "-",
            r.model or "-",
            str(r.debates),
            span(r.agents),
            span(r.rounds),
            pct(r.honest_r1_accuracy),
            pct(r.unparsed_share),
            pct(r.unparsed_honest_share),
        )
    return t
