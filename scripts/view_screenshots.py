"""One screenshot per `tomacs view` page kind for docs/view.md (`make screenshots`).

Builds a tiny sim sweep (TodyComm trained, a complete graph evaluated: tomacs.testing.browser's TINY_SIM_RUN,
about 5 s on 2 cores) and the real-transcripts fixture tests/data/multi_agent_attack_small in a scratch
folder, writes their pages and photographs them in headless Chromium (tomacs.testing.browser: Playwright
driving the system's Chromium, `make setup-browser`):

    run.png          a run's page (the TodyComm run): settings, metrics beside the paper's, training curves,
                     cost and time, the episode list
    episode.png      one of its episodes: the question, the agents, a graph per round and the decision, an
                     agent's reply (clicked)
    sweep.png        the sweep's page: its runs with Acc / Token / ADAcc, and the report's warnings (the
                     complete job is copied once, so a seed appears twice)
    transcripts.png  real transcripts (multi-agent-attack): the page of the source with adversaries

    python scripts/view_screenshots.py [--out docs/img/view]

Each is the page's top VIEWPORT width wide and at most --max-height tall, written as an 8-bit palette PNG
(pillow) so that it stays commit-sized.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
MAA_SMALL = REPO / "tests" / "data" / "multi_agent_attack_small"
KINDS = ("run", "episode", "sweep", "transcripts")
BIG = 300_000  # bytes: a screenshot above it is reported


class Shot(NamedTuple):
    page: Path
    fragment: str = ""  # the page's route: "#g/<group>/e/<episode>"
    click: int | None = None  # an agent whose round-2 node is clicked, so its reply shows


def build_pages(work: Path) -> dict[str, Shot]:
    """The pages to photograph, built under `work` (the current folder, so the pages show short relative
    paths)."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job
    from tomacs.testing.browser import TINY_SIM_RUN
    from tomacs.view import build_view, view_data

    sweep = Path("outputs") / "sweep"
    if not (sweep / "todycomm" / "results.json").is_file():
        run_job(compose(["method=todycomm", *TINY_SIM_RUN]), "train", sweep / "todycomm")
    if not (sweep / "complete" / "results.json").is_file():
        run_job(compose(["method=complete", *TINY_SIM_RUN]), "evaluate", sweep / "complete")
    # the complete job once more, as a sweep rerun into a second folder leaves it: the sweep page's WARNINGS
    # then say that its seed appears twice
    if not (sweep / "complete_rerun").exists():
        shutil.copytree(sweep / "complete", sweep / "complete_rerun")
    maa = Path("multi_agent_attack_small")
    if not maa.exists():
        shutil.copytree(MAA_SMALL, maa)
    run = sweep / "todycomm"
    # the episode: an adversary's win, with a flip to the target where there is one; its reply shown: the
    # first agent that took part in round 2
    episodes = view_data(run)["groups"][0]["episodes"]
    ei = max(
        range(len(episodes)),
        key=lambda i: (episodes[i]["flags"]["adversary_win"], len(episodes[i]["flags"]["flips"])),
    )
    agent = next(n["agent"] for n in episodes[ei]["rounds"][1]["nodes"] if not n["excluded"])
    # the transcripts: the page of the source with adversaries (its summary and its debates)
    sources = view_data(maa)["groups"]
    gi = next(i for i, g in enumerate(sources) if any(e["targets"] for e in g["episodes"]))
    pages = work / "pages"
    run_page = build_view(run, pages / "run.html")
    return {
        "run": Shot(run_page),
        "episode": Shot(run_page, f"#g/0/e/{ei}", agent),
        "sweep": Shot(build_view(sweep, pages / "sweep.html")),
        "transcripts": Shot(build_view(maa, pages / "transcripts.html"), f"#g/{gi}"),
    }


def shoot(pages: dict[str, Shot], out: Path, max_height: int) -> list[str]:
    """Photograph every page into `out`/<kind>.png; what went wrong on the pages (console errors, ...)."""
    from PIL import Image

    from tomacs.testing.browser import VIEWPORT, chromium, click_node, new_page, wait_for_plots, watch

    problems: list[str] = []
    out.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        for kind in KINDS:
            shot = pages[kind]
            page = new_page(browser)
            seen = watch(page)
            page.goto(shot.page.resolve().as_uri() + shot.fragment)
            if kind == "run":
                wait_for_plots(page, 3, ".curves")
            if "/e/" in shot.fragment:
                wait_for_plots(page, 1, "#decision")
            if shot.click is not None:
                plot = page.locator(".rounds:not(#decision) .js-plotly-plot").nth(1)  # round 2
                click_node(page, plot, shot.click, hover=f"agent {shot.click} (")
                page.locator(".reply h3").wait_for()
                page.mouse.move(0, 0)  # no hover label in the picture
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_timeout(300)  # plotly's transitions
            # down to the end of the page's content (a short page leaves no empty viewport below it)
            bottom = page.evaluate(
                "Math.ceil(document.getElementById('app').getBoundingClientRect().bottom) + 16"
            )
            target = out / f"{kind}.png"
            page.screenshot(
                path=str(target),
                full_page=True,
                clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": min(max_height, int(bottom))},
            )
            with Image.open(target) as im:
                small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
            small.save(target, optimize=True)
            page.close()
            problems += [f"{kind}: {p}" for p in seen]
    return problems


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "img" / "view", help="where the PNGs go")
    ap.add_argument("--max-height", type=int, default=2200, help="px: a longer page is cut at the bottom")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    args = ap.parse_args()
    from tomacs.testing.browser import unavailable

    why = unavailable()
    if why:
        raise SystemExit(why)
    out = args.out.resolve()
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        work = (args.work or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        os.chdir(work)
        try:
            pages = build_pages(work)  # before the browser: Playwright's event loop would stop a sim job
            problems = shoot(pages, out, args.max_height)
        finally:
            os.chdir(here)
    for kind in KINDS:
        f = out / f"{kind}.png"
        size = f.stat().st_size
        print(f"{f}: {size / 1000:.0f} KB{'  (over 300 KB)' if size > BIG else ''}")
    if problems:
        raise SystemExit("the pages reported problems:\n" + "\n".join(problems))


if __name__ == "__main__":
    main()
