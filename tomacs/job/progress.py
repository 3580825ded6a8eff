"""Progress of a job's long loops, in the form its output can show.

On a terminal: a live rich bar. Anywhere else (nohup, SLURM, a pipe, a CI log): one plain line per
step (a training iteration, an evaluation batch), flushed at once, because a log file cannot redraw
a bar and a job that writes nothing for hours cannot be told from a hung one.

Totals count questions, not LLM calls: how many calls a question costs depends on the policy
(sparse graphs skip agents, a vote decision makes no call), so a total in calls is only a guess
and a bar built on it stops short (TodyComm at 3885/6400). Calls are shown as a counter.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

if TYPE_CHECKING:
    from tomacs.types import Episode

Style = Literal["auto", "bar", "lines"]


def _hms(seconds: float) -> str:
    s = int(max(0.0, seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def pct(x: float | None, digits: int = 1) -> str:
    """A rate as the percent a line of output shows; "-" when there is none (None or NaN)."""
    return "-" if x is None or x != x else f"{100 * x:.{digits}f}"


class Running:
    """Acc and ADAcc over every episode seen so far (pooled, exactly as the final metrics are)."""

    def __init__(self, n_agents: int, rounds: int) -> None:
        from tomacs.metrics import AdaccCounts

        self.n, self.rounds = n_agents, rounds
        self.correct = 0
        self.seen = 0
        self.counts = AdaccCounts()

    def add(self, episodes: Sequence[Episode]) -> dict[str, float]:
        from tomacs.metrics import adacc_counts

        self.correct += sum(1 for e in episodes if e.correct)
        self.seen += len(episodes)
        self.counts = self.counts + adacc_counts(episodes, self.n, self.rounds)
        return {"acc": self.correct / self.seen if self.seen else math.nan, "adacc": self.counts.accuracy}


class Task:
    """One loop's progress. Call it with k to count k LLM calls (the executor's `on_call`); `step`
    advances by k units of the total and shows the given metrics.

    With unit="calls" (analyses whose total really is a call count) a call also advances."""

    def __init__(self, owner: Progress, description: str, total: int, unit: str, label: str = "") -> None:
        self.owner, self.description, self.total, self.unit = owner, description, total, unit
        self.label = label  # whose Acc/ADAcc these are: "explore" (the sampling policy in training), "val"
        self.done = 0
        self.calls = 0
        self.steps = 0
        self.fields: dict[str, Any] = {}
        self.t0 = time.perf_counter()
        self.quiet = False
        self._bar: Any = None
        self._tid: Any = None

    def __call__(self, k: int = 1) -> None:
        self.calls += k
        if self.unit == "calls":
            self.done += k
        self._refresh(line=False)

    def step(self, k: int = 1, **fields: object) -> None:
        """Advance by k units; fields (loss, acc, adacc, ...) are shown with the step."""
        if self.unit != "calls":
            self.done += k
            self.owner.job_done += k
        self.steps += 1
        self.fields.update(fields)
        self._refresh(line=True)
        for hook in self.owner.on_step:
            hook()

    def info(self) -> str:
        parts = []
        for key, value in self.fields.items():
            if value is None:
                continue
            if key in ("acc", "adacc"):
                name = "Acc" if key == "acc" else "ADAcc"
                parts.append(f"{self.label + ' ' if self.label else ''}{name} {pct(value)}")
            elif isinstance(value, float):
                parts.append(f"{key} {value + 0.0:.4g}")  # + 0.0: no "-0"
            else:
                parts.append(f"{key} {value}")
        if self.unit != "calls":
            parts.append(f"calls {self.calls}")
        return " | ".join(parts)

    def line(self) -> str:
        elapsed = time.perf_counter() - self.t0
        left = elapsed / self.done * (self.total - self.done) if self.done else math.nan
        eta = _hms(left) if left == left else "?"
        head = f"{self.description} | {self.unit} {self.done}/{self.total}"
        info = self.info()
        tail = f" | elapsed {_hms(elapsed)} | ETA {eta}{self.owner.job_eta()}"
        return f"{head}{' | ' + info if info else ''}{tail}"

    def _refresh(self, line: bool) -> None:
        if self._bar is not None:
            self._bar.update(self._tid, completed=self.done, info=self.info())
        elif line and not self.quiet and self.owner.style == "lines":
            self.owner.write(self.line())


class Progress:
    """One progress display per job. style="auto": a bar when the stream is a terminal, else lines."""

    def __init__(
        self,
        enabled: bool = True,
        console: Console | None = None,
        style: Style = "auto",
        stream: TextIO | None = None,
    ) -> None:
        self.enabled = enabled
        self.stream = stream
        out = stream if stream is not None else sys.stderr
        if style == "auto":
            style = "bar" if out.isatty() else "lines"
        self.style = style
        self.console = console or Console(stderr=True)
        self.job_total = 0  # questions the whole job walks (training epochs, validation, test); 0 = unknown
        self.job_done = 0
        self.job_bound = False  # the total is a bound (early stopping may end training sooner)
        self.job_t0 = time.perf_counter()
        self.on_step: list[Any] = []  # called after every step of every task (the job's clock ticks)
        # before every task's name: work a job does for another purpose ("baseline complete: ")
        self.prefix = ""

    def start_job(self, total_questions: int, bound: bool = False) -> None:
        """The whole job's work in questions, so every progress line also gives the job's ETA."""
        self.job_total, self.job_done, self.job_bound = int(total_questions), 0, bound
        self.job_t0 = time.perf_counter()

    def skip_job(self, questions: int) -> None:
        """Questions of the job's total that an earlier process finished (a resumed job: its epochs,
        its evaluated questions) or that will not run (training that had stopped early): out of the
        total, so the job's ETA sets what remains against what this process has done."""
        if self.job_total > 0 and questions > 0:
            self.job_total = max(0, self.job_total - int(questions))

    def job_eta(self) -> str:
        if self.job_total <= 0 or self.job_done <= 0:
            return ""
        elapsed = time.perf_counter() - self.job_t0
        left = elapsed / self.job_done * max(0, self.job_total - self.job_done)
        return f" | job ETA {'<= ' if self.job_bound else ''}{_hms(left)}"

    @classmethod
    def for_job(cls, multirun: bool) -> Progress:
        """A job's display: the bar on a terminal (none in a multirun, whose jobs print one line
        each), lines in a log (every job of a sweep, so a SLURM log shows where each one is)."""
        p = cls()
        if multirun and p.style == "bar":
            p.enabled = False
        return p

    def write(self, text: str) -> None:
        print(text, file=self.stream or sys.stderr, flush=True)

    def log(self, text: str) -> None:
        """A one-off line (a validation result, early stopping) in either style."""
        if not self.enabled:
            return
        if self.style == "bar":
            self.console.print(text, highlight=False, markup=False, soft_wrap=True)
        else:
            self.write(text)

    @contextmanager
    def task(self, description: str, total: int, unit: str = "calls", label: str = "") -> Iterator[Task]:
        t = Task(self, self.prefix + description, total, unit, label)
        if not self.enabled or total <= 0:
            t.quiet = True
            yield t
            return
        if self.style == "lines":
            yield t
            return
        with RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(unit),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        ) as bar:
            t._bar, t._tid = bar, bar.add_task(description, total=total, info="")
            yield t
