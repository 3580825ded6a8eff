"""What every command module shares: the consoles, the one-line failure, the output-file check and the
notice an old spelling prints."""

from __future__ import annotations

import typer
from rich.console import Console

console = Console()
err = Console(stderr=True)
EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True}
MULTIRUN_HELP = "Hydra multirun: sweep over comma lists."


def fail(msg: str, code: int = 2) -> None:
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


def wide(width: int) -> Console:
    """The console for wide tables: in a pipe, do not squeeze them into rich's default 80 columns."""
    return console if console.is_terminal else Console(width=width)
