"""Where tomacs finds its shipped configs, whether installed as a wheel or run from a checkout."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def conf_dir() -> Path:
    """The Hydra config directory: `tomacs/conf` inside a wheel, top-level `conf/` in a checkout."""
    for cand in (_PKG / "conf", _PKG.parent / "conf"):
        if (cand / "config.yaml").is_file():
            return cand
    raise FileNotFoundError(
        "tomacs config directory not found (looked in tomacs/conf and ./conf); reinstall tomacs"
    )


def unwritable_reason(directory: Path) -> str | None:
    """Why files cannot be created in ``directory`` (None if they can), found out by trying.

    Tried before a job or an analysis starts, so a read-only or mistyped output path fails in one
    line at once instead of with an OSError after the work is done. Permission bits alone would not
    do: root ignores them, and a read-only mount or a file in the path is what usually goes wrong.
    Nothing is created: the test file lives in the nearest existing ancestor and vanishes."""
    import tempfile

    p = Path(directory).expanduser().absolute()
    probe = p
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is a file, not a directory"
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        return f"cannot create files in {probe} ({exc.strerror or type(exc).__name__})"
    return None
