"""Progress bars on long work, silent in tests and when asked to be."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress


class Progress:
    """One rich progress display per job; `task` yields a callable that advances by k calls."""

    def __init__(self, enabled: bool = True, console: Console | None = None) -> None:
        self.enabled = enabled
        self.console = console or Console(stderr=True)

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[Callable[[int], None]]:
        if not self.enabled or total <= 0:
            yield lambda k=1: None
            return
        with RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("LLM calls"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        ) as bar:
            tid = bar.add_task(description, total=total)
            yield lambda k=1: bar.advance(tid, k)
