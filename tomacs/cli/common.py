"""What every command module shares: the consoles, the one-line failure, the output-file check and the
notice an old spelling prints."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NoReturn, ParamSpec

import typer
from rich.console import Console

console = Console()
err = Console(stderr=True)
EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True}
MULTIRUN_HELP = "Hydra multirun: sweep over comma lists."


P = ParamSpec("P")


def fail(msg: str, code: int = 2) -> NoReturn:
    err.print(f"[bold red]error:[/] {msg}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def check_out_file(path: object, fix: str = "choose another --out") -> None:
    """Fail before the work, not after it, when the result file could not be written."""
    from pathlib import Path

    from tomacs.paths import unwritable_reason

    why = unwritable_reason(Path(str(path)).parent)
    if why:
        fail(f"cannot write {path}: {why}; {fix}")


def renamed(old: str, new: str) -> None:
    """One line on stderr: the command as typed has a new spelling; stdout stays the command's."""
    err.print(
        f"notice: '{old}' is now '{new}'; the old spelling will be removed",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def old_spelling(old: str, new: str, command: Callable[P, None]) -> Callable[P, None]:
    """`command` under its old spelling: the same options, help and code, after the one-line notice."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        renamed(old, new)
        command(*args, **kwargs)

    return run


def wide(width: int) -> Console:
    """The console for wide tables: in a pipe, do not squeeze them into rich's default 80 columns."""
    return console if console.is_terminal else Console(width=width)
