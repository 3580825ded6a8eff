"""Headless Chromium for the `tomacs view` page: the browser test and the docs' screenshots.

Why Playwright with the system's Chromium: the page is drawn by its own script (plotly.js), so only a
real browser shows whether it draws, filters and navigates. Playwright (pinned in the `[dev]` extra,
from PyPI) drives the Chromium that Debian's `chromium` package installs (`make setup-browser`); it
downloads no browser of its own. Where neither is there, `unavailable()` says why, so a test can
skip with the reason.

    with chromium() as browser:
        page = browser.new_page()
        problems = watch(page)          # console errors, uncaught exceptions, any request off the file
        page.goto(Path("view.html").resolve().as_uri())
        wait_for_plots(page, 3)
        assert problems == []
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Locator, Page, Request

# the names Debian, Ubuntu and Google's package give the browser's command, looked up on PATH in this order
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
VIEWPORT = {"width": 1280, "height": 900}
TIMEOUT_MS = 30_000  # one page step (load, draw, click); a 2-core machine beside a training job is slow
# what a self-contained page may load: itself and what its script makes in memory
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def find_chromium() -> str | None:
    """The path of the first of CHROMIUM_NAMES on PATH, or None."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def unavailable() -> str | None:
    """Why no page can be opened here (a sentence naming the fix), or None."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed: `make setup` installs it (the [dev] extra)"
    if find_chromium() is None:
        names = ", ".join(CHROMIUM_NAMES)
        return f"no Chromium on PATH ({names}): `make setup-browser` installs Debian's chromium package"
    return None


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium (the first of CHROMIUM_NAMES on PATH) driven by Playwright; closed on exit.
    Raises RuntimeError with `unavailable()`'s reason where there is none. While it is open,
    Playwright's event loop runs in this thread: run sim jobs (they run their own) before."""
    why = unavailable()
    if why:
        raise RuntimeError(why)
    from playwright.sync_api import sync_playwright  # lazy: a dev dependency, only the browser needs it

    with sync_playwright() as p:
        # Playwright passes --no-sandbox itself (chromium_sandbox=False), which running as root needs
        browser = p.chromium.launch(executable_path=find_chromium(), headless=True)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser: Browser) -> Page:
    """A page of VIEWPORT's size with TIMEOUT_MS for every step."""
    page = browser.new_page(viewport={"width": VIEWPORT["width"], "height": VIEWPORT["height"]})
    page.set_default_timeout(TIMEOUT_MS)
    return page


def watch(page: Page) -> list[str]:
    """A list that collects, while the page lives, every console error, every uncaught exception of
    its scripts, every request for anything but the file itself and what its script makes in memory
    (a self-contained page needs no network), and every request that failed."""
    problems: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"console error: {message.text}")

    def request(req: Request) -> None:
        if not req.url.startswith(LOCAL_SCHEMES):
            problems.append(f"request off the page: {req.url}")

    page.on("console", console)
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    page.on("request", request)
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    return problems


def wait_for_plots(page: Page, n: int, within: str = "body") -> None:
    """Wait until at least `n` plotly graphs under the CSS selector `within` have drawn their SVG."""
    page.wait_for_function(
        "([sel, n]) => [...document.querySelectorAll(`${sel} .js-plotly-plot`)]"
        ".filter((d) => d.querySelector('.main-svg .scatterlayer')).length >= n",
        arg=[within, n],
    )


def click_node(page: Page, plot: Locator, index: int, hover: str) -> None:
    """Click the `index`-th point of the plotly graph `plot` as a person would: the mouse onto it, a wait
    for its hover label (which must contain `hover`: plotly's click goes to what its hover found, and a
    click right after a redraw would still find the point hovered before), then press and release."""
    point = plot.locator(".scatterlayer .point").nth(index)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    if box is None:
        raise RuntimeError(f"point {index} of the graph is not drawn")
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    plot.locator(".hoverlayer .hovertext", has_text=hover).wait_for(timeout=10_000)
    page.mouse.down()
    page.mouse.up()


# A tiny sim run's overrides (a few seconds on 2 cores): 6 test questions, 2 short training epochs. The view
# tests draw pages from it; scripts/view_screenshots.py builds the docs' screenshots with the same settings.
TINY_SIM_RUN = [
    "benchmark=synthetic",
    "embedder=hashing",
    "attack=gt50",
    "train.size=4",
    "train.val_size=2",
    "train.batch_size=4",
    "train.epochs=2",
    "eval.size=6",
    "eval.batch_size=6",
    "seed=0",
]
