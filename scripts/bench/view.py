"""How big a sweep's `tomacs view` page is and how fast it opens (issue 42, item 7: a sweep of 45 jobs with
153 test questions each opens in under 3 s and stays under 20 MB).

Builds such a sweep on the simulator (5 static methods x 3 attack rates x 3 seeds, MMLU, 153 questions;
a few minutes on 2 cores; reused if the folder exists), writes its page, and opens the page in headless
Chromium (/usr/bin/chromium, Debian's package) several times: the page's own clock (performance.now() at
the end of the load event, after its scripts have drawn the sweep table or an episode's graphs) and the
wall time of the whole browser process (start, parse, draw, exit).

    python scripts/bench/view.py [--sweep outputs/bench_view_sweep] [--repeats 3]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

METHODS = ("complete", "random", "chain", "star", "layered")
ATTACKS = ("lt50", "eq50", "gt50")
SEEDS = (0, 1, 2)
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# appended after the page's own scripts: its load listener runs after theirs
PROBE = (
    "<script>window.addEventListener('load', () => "
    "{ document.title = 'OPENED ' + performance.now().toFixed(1); });</script>"
)


def build_sweep(root: Path) -> Path:
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    root.mkdir(parents=True, exist_ok=True)
    jobs = [(m, a, s) for m in METHODS for a in ATTACKS for s in SEEDS]
    t0 = time.perf_counter()
    for i, (m, a, s) in enumerate(jobs, 1):
        out = root / f"{m}_{a}_s{s}"
        if (out / "results.json").is_file():
            continue
        overrides = [
            f"method={m}",
            f"attack={a}",
            f"seed={s}",
            "benchmark=mmlu",
            "eval.size=153",
            "logger=none",
        ]
        run_job(compose(overrides), "evaluate", out)
        print(f"job {i}/{len(jobs)} {out.name} ({time.perf_counter() - t0:.0f} s)", flush=True)
    return root


def open_ms(page: Path, fragment: str, profile_dir: Path) -> tuple[float, float]:
    """(the page's own ms to the end of its load event, the browser process's wall seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={profile_dir}",
            "--dump-dom",
            f"{page.resolve().as_uri()}{fragment}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    wall = time.perf_counter() - t0
    m = re.search(r"<title>OPENED ([0-9.]+)</title>", proc.stdout)
    if not m:
        raise RuntimeError(
            f"the page did not report its load (chromium rc {proc.returncode}): {proc.stderr[-400:]}"
        )
    return float(m.group(1)), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sweep", default="outputs/bench_view_sweep")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if not Path(CHROMIUM).is_file():
        raise SystemExit(f"{CHROMIUM} not found: install Debian's chromium package to time the page")
    from tomacs.view import build_view

    sweep = build_sweep(Path(args.sweep))
    t0 = time.perf_counter()
    page = build_view(sweep, sweep / "view.html")
    build_s = time.perf_counter() - t0
    html = page.read_text(encoding="utf-8")
    shown = re.search(r"showing [0-9]+ of [0-9]+ episodes[^<\"]*", html)
    size_mb = page.stat().st_size / 1e6
    print(f"page: {page} ({size_mb:.1f} MB, built in {build_s:.1f} s); {shown.group(0) if shown else ''}")
    with tempfile.TemporaryDirectory() as tmp:
        probed = Path(tmp) / "view.html"
        probed.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
        for label, fragment in (("sweep table", ""), ("an episode page", "#g/0/e/0")):
            runs = []
            for _ in range(args.repeats):
                prof = Path(tmp) / "chromium"
                shutil.rmtree(prof, ignore_errors=True)
                runs.append(open_ms(probed, fragment, prof))
            page_ms = [r[0] for r in runs]
            walls = [r[1] for r in runs]
            each_ms = ", ".join(f"{x:.0f}" for x in page_ms)
            each_s = ", ".join(f"{x:.2f}" for x in walls)
            print(
                f"{label}: page load {statistics.median(page_ms):.0f} ms (median of {len(runs)}; {each_ms}), "
                f"browser process {statistics.median(walls):.2f} s ({each_s})"
            )


if __name__ == "__main__":
    main()
