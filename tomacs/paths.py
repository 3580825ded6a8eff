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
