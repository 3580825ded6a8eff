"""`tomacs view` pages in a real headless browser (issue 42): a tiny sim run's page, its sweep's page and
a real-transcripts page, opened from the file in Chromium (Debian's package, driven by Playwright;
tomacs.testing.browser). Each test checks that the graphs drew (plotly's SVG: the training curves, one
graph per round and one for the decision, with a node per agent and an arrow per edge), that a filter
changes which episodes the list shows (to exactly those the data flags), that navigation and a click
on a node work, and that nothing went wrong: no console error, no uncaught exception, no request off
the file.

Where Playwright or Chromium is missing the tests skip with the reason, unless TOMACS_REQUIRE_BROWSER=1
(set by `.ci/run`, which installs Chromium), where a skip would hide a page that no longer draws and
they fail instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tomacs.testing.browser import chromium, click_node, new_page, unavailable, wait_for_plots, watch
from tomacs.view import build_view
from tomacs.view.page import DATA_ID

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
MAA_SMALL = REPO / "tests" / "data" / "multi_agent_attack_small"
EPISODES = 'section:has(> h2:text-matches("^Episodes"))'
ROUNDS = ".rounds:not(#decision)"  # the round graphs (the decision's box is a .rounds too)


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Browser]:
    why = unavailable()
    if why:
        if os.environ.get("TOMACS_REQUIRE_BROWSER") == "1":
            pytest.fail(f"TOMACS_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)
    # the sim jobs first: while the browser is open Playwright runs an event loop in this thread, and a
    # job, which runs its own, would refuse to start
    request.getfixturevalue("view_sweep")
    with chromium() as b:
        yield b


class Tab:
    """One page of the browser and what went wrong on it (tomacs.testing.browser.watch)."""

    def __init__(self, browser: Browser, html: Path) -> None:
        self.page: Page = new_page(browser)
        self.problems = watch(self.page)
        self.url = html.resolve().as_uri()

    def open(self, fragment: str = "") -> dict[str, Any]:
        """Load the page (at `#fragment`) and return its data blob, as its script reads it."""
        self.page.goto(self.url + fragment)
        return self.page.evaluate(f"JSON.parse(document.getElementById('{DATA_ID}').textContent)")

    def listed(self) -> list[str]:
        """The episode ids the episode list shows now, top to bottom (once the list is drawn: a link
        changes the address before the page's script draws the page it routes to)."""
        self.page.locator(EPISODES).wait_for()
        return self.page.locator(f"{EPISODES} tbody tr td:first-child").all_inner_texts()

    def check_graphs(self, e: dict[str, Any], voters: list[int]) -> None:
        """Every round's graph and the decision's drew: a node per agent, an arrow per edge (voter)."""
        wait_for_plots(self.page, len(e["rounds"]), ROUNDS)
        wait_for_plots(self.page, 1, "#decision")
        graphs = self.page.locator(f"{ROUNDS} .js-plotly-plot")
        assert graphs.count() == e["n_rounds"] == len(e["rounds"])
        for i, r in enumerate(e["rounds"]):
            g = graphs.nth(i)
            assert (g.locator(".gtitle").text_content() or "").startswith(f"round {r['round']} ")
            assert g.locator(".scatterlayer .point").count() == e["n_agents"]
            assert g.locator("g.annotation-arrow-g").count() == len(r["edges"])
        decision = self.page.locator("#decision .js-plotly-plot")
        assert decision.locator(".scatterlayer .point").count() == e["n_agents"] + 1  # and the final answer
        assert decision.locator("g.annotation-arrow-g").count() == len(voters)

    def close(self) -> list[str]:
        self.page.close()
        return self.problems


def _click_node(page: Page, graph: int, agent: int) -> str:
    """Click agent `agent`'s node in the `graph`-th round graph shown once its own hover label shows (not
    an arrow's); the heading of the reply it shows."""
    plot = page.locator(f"{ROUNDS} .js-plotly-plot").nth(graph)
    click_node(page, plot, agent, hover=f"agent {agent} (")
    heading = page.locator(".reply h3")
    heading.wait_for()
    return heading.inner_text()


def test_run_page_draws_filters_and_opens_an_episode(
    browser: Browser, view_sweep: Path, tmp_path: Path
) -> None:
    tab = Tab(browser, build_view(view_sweep / "todycomm", tmp_path / "run.html"))
    data = tab.open()
    (g,) = data["groups"]
    episodes = g["episodes"]
    ids = [e["id"] for e in episodes]
    wrong = [e["id"] for e in episodes if e["flags"]["wrong"]]
    assert 0 < len(wrong) < len(ids), "the tiny run needs right and wrong final answers for the filter"
    page = tab.page

    # training curves: Acc / ADAcc, loss, credit gap, each a line per series over the 2 epochs
    wait_for_plots(page, 3, ".curves")
    curves = page.locator(".curves .js-plotly-plot")
    assert curves.count() == 3
    for i in range(3):
        lines = curves.nth(i).locator(".scatterlayer path.js-line")
        assert lines.count() >= 1 and all(
            d and d.startswith("M") for d in lines.evaluate_all("ps => ps.map(p => p.getAttribute('d'))")
        )
        assert (
            curves.nth(i).locator(".scatterlayer .point").count()
            == 2 * curves.nth(i).locator(".scatterlayer .trace").count()
        )

    # the episode list and its filter
    assert tab.listed() == ids
    page.get_by_label("wrong final answer").check()
    assert tab.listed() == wrong
    assert page.locator(f"{EPISODES} .count").inner_text().startswith(f"{len(wrong)} of {len(ids)} ")
    page.get_by_label("wrong final answer").uncheck()
    assert tab.listed() == ids

    # an episode, opened from the list: its graphs, the round selector, a click on a node
    ei = ids.index(wrong[0])
    e = episodes[ei]
    page.get_by_role("link", name=e["id"], exact=True).click()
    page.wait_for_url(f"**#g/0/e/{ei}")
    tab.check_graphs(e, e["final"]["voters"])
    r2 = e["rounds"][1]
    assert r2["edges"], "round 2 of the episode should have messages"
    page.locator(".filters label", has_text=re.compile("^round")).locator("select").select_option("2")
    wait_for_plots(page, 1, ROUNDS)
    assert page.locator(f"{ROUNDS} .js-plotly-plot").count() == 1
    assert (page.locator(f"{ROUNDS} .gtitle").text_content() or "").startswith("round 2 ")
    # a node with an outgoing arrow (an arrow's label once sat on it and took its clicks) and one without
    senders = {ed["src"] for ed in r2["edges"]}
    agents = [n["agent"] for n in r2["nodes"]]
    for agent in [min(senders), *sorted(set(agents) - senders)[:1]]:
        assert _click_node(page, 0, agents.index(agent)).startswith(f"Agent {agent}, round 2 ")
        text = e["texts"][1][agent]
        if text:
            assert page.locator(".reply pre").inner_text().strip() == text.strip()
    assert tab.close() == []


def test_sweep_page_lists_runs_and_filters_flips(browser: Browser, view_sweep: Path, tmp_path: Path) -> None:
    tab = Tab(browser, build_view(view_sweep, tmp_path / "sweep.html"))
    data = tab.open()
    page = tab.page
    labels = [g["label"] for g in data["groups"]]
    runs = page.locator('section:has(> h2:text-is("Runs")) tbody tr')
    assert runs.count() == len(labels) == 2
    assert runs.locator("td:first-child").all_inner_texts() == labels

    gi = next(i for i, g in enumerate(data["groups"]) if g["path"] == "complete")
    episodes = data["groups"][gi]["episodes"]
    flipped = [e for e in episodes if e["flags"]["flips"]]
    assert 0 < len(flipped) < len(episodes), (
        "the tiny complete run needs an episode with a flip to the target"
    )
    page.get_by_role("link", name=labels[gi], exact=True).click()
    page.wait_for_url(f"**#g/{gi}")
    assert tab.listed() == [e["id"] for e in episodes]
    page.get_by_label("a flip to the target").check()
    assert tab.listed() == [e["id"] for e in flipped]
    page.get_by_label("a flip to the target").uncheck()
    # the round and the agent of a flip narrow the list to the episodes with such a flip
    rnd, agent = flipped[0]["flags"]["flips"][0]
    page.get_by_label("flip in round").select_option(str(rnd))
    assert tab.listed() == [e["id"] for e in episodes if any(r == rnd for r, _ in e["flags"]["flips"])]
    page.get_by_label("by agent").select_option(str(agent))
    assert tab.listed() == [e["id"] for e in episodes if [rnd, agent] in e["flags"]["flips"]]
    nobody = next(
        a
        for a in range(episodes[0]["n_agents"])
        if all(f[1] != a for e in flipped for f in e["flags"]["flips"])
    )
    page.get_by_label("by agent").select_option(str(nobody))
    assert tab.listed() == []
    page.go_back()  # to the sweep's table (a filter changes no address)
    page.wait_for_url(lambda url: "#g/" not in url)
    runs.first.wait_for()
    assert runs.count() == 2
    assert tab.close() == []


def test_real_transcripts_page_draws_a_debate(browser: Browser, tmp_path: Path) -> None:
    tab = Tab(browser, build_view(MAA_SMALL, tmp_path / "maa.html"))
    data = tab.open()
    page = tab.page
    sources = page.locator('section:has(> h2:text-is("Sources")) tbody tr')
    assert sources.count() == len(data["groups"]) == 2
    gi, ei = next(
        (gi, ei) for gi, g in enumerate(data["groups"]) for ei, e in enumerate(g["episodes"]) if e["targets"]
    )
    e = data["groups"][gi]["episodes"][ei]
    page.get_by_role("link", name=data["groups"][gi]["label"], exact=True).click()
    page.get_by_role("link", name=e["id"], exact=True).click()
    page.wait_for_url(f"**#g/{gi}/e/{ei}")
    # the source records no decision: the page draws the majority of the last round's parsed answers
    voters = e["final"].get("voters") or [
        n["agent"] for n in e["rounds"][-1]["nodes"] if n["mark"] != "absent"
    ]
    tab.check_graphs(e, voters)
    assert page.locator(".mark-target").count() > 0  # the adversary's target is marked
    assert tab.close() == []
