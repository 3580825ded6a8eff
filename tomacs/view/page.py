"""Write the page: one HTML file that carries its data, its drawing library and its code.

Why one self-contained file: it must open from a file share or a mail attachment, with no server
and no network. plotly.js comes from the pinned `plotly` package (inlined once per page), the
page's own script and style from tomacs/view/assets, and all data as one JSON blob that the
script renders on demand (only the section in view is drawn, so a page of many runs opens fast).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

DATA_ID = "tomacs-view-data"


@cache
def plotly_js() -> str:
    """plotly.min.js as the installed plotly package ships it (no CDN)."""
    from plotly.offline import get_plotlyjs  # lazy: only writing a page needs it

    return get_plotlyjs()


def _asset(name: str) -> str:
    return resources.files("tomacs.view").joinpath("assets", name).read_text(encoding="utf-8")


def _finite(obj: object) -> Any:
    """NaN and infinities as null: JSON has neither, and a metric may be NaN (no decision call)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def json_blob(data: Mapping[str, object]) -> str:
    """The data as JSON that is safe inside <script>: `<`, `>` and `&` are escaped as JSON
    unicode escapes, so no reply text can close the tag, and `JSON.parse` gives back the text."""
    s = json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return s.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _inline_script(code: str) -> str:
    # a script's text ends at the first "</script": break any inside the library's strings
    return code.replace("</script", "<\\/script")


def _text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render(data: dict[str, Any]) -> str:
    """The whole page."""
    title = _text(str(data.get("title", "tomacs view")))
    sampling = _text(str((data.get("sampling") or {}).get("text", "")))
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{title}</title>",
            f"<style>\n{_asset('view.css')}\n</style>",
            "</head>",
            "<body>",
            # replaced by the script; without one (JavaScript off) it still says what the page holds
            f'<div id="app"><h1>{title}</h1><p id="sampling">{sampling}</p>',
            "<noscript>This page needs JavaScript.</noscript></div>",
            f'<script type="application/json" id="{DATA_ID}">{json_blob(data)}</script>',
            f"<script>\n{_inline_script(plotly_js())}\n</script>",
            f"<script>\n{_inline_script(_asset('view.js'))}\n</script>",
            "</body>",
            "</html>",
            "",
        ]
    )
