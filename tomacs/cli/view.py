"""`tomacs view`: a run, a sweep or real transcripts as one self-contained HTML page (docs/view.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from tomacs.cli.common import check_out_file, console, err, fail


def view(
    path: Path = typer.Argument(..., help="A run directory, a sweep or outputs tree, or debate transcripts."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="The HTML file (default: view.html in the run/sweep; outputs/views/ else)."
    ),
    max_episodes: int = typer.Option(50, "--max-episodes", min=1, help="Episodes shown per run or source."),
    max_total: int = typer.Option(400, "--max-total", min=1, help="Episodes shown per page at most."),
    seed: int = typer.Option(0, "--seed", help="Which episodes are shown (chosen per question)."),
    serve: bool = typer.Option(False, "--serve", help="Also serve the page on 127.0.0.1 until Ctrl-C."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="--serve: the port (0 = any free one)."),
) -> None:
    """Write one HTML page (no server, no network; plotly inlined) to look at runs and debates."""
    from tomacs.view import build_view
    from tomacs.view import serve as serve_page
    from tomacs.view.build import default_out

    if not path.exists():
        fail(f"{path} does not exist; give a run directory, a sweep, or a transcript file or folder")
    target = out or default_out(path)
    check_out_file(target)
    try:
        page = build_view(path, target, max_episodes=max_episodes, max_total=max_total, seed=seed)
    except (ValueError, FileNotFoundError) as e:
        fail(f"{path}: {e}")
    size = page.stat().st_size / 1e6
    console.print(str(page), highlight=False, soft_wrap=True)
    err.print(f"wrote {page} ({size:.1f} MB); open it in a browser", highlight=False, soft_wrap=True)
    if serve:
        try:
            server = serve_page(page, port)
        except OSError as e:
            fail(f"cannot serve on 127.0.0.1:{port}: {e}; choose another --port (0 = any free one)")
        err.print(f"serving {server.url} (Ctrl-C stops)", highlight=False, soft_wrap=True)
        server.wait()
