"""The page against axe-core's WCAG 2 A and AA rules, in headless Chromium, in each state a
visitor meets: loaded, an episode reset, a step taken, a step refused, the heuristic's run
finished (the page's first run: its default task, untouched), and the leaderboard tab.

axe-core comes from the npm registry at the version `.ci/setup-browser.sh` pins, and is
injected by the test (the page's content policy admits only its own scripts, so the test's
browser context bypasses it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.test_page import ARGS, CHROMIUM, TIMEOUT_MS
from tests.tools import axe_script
from tests.web import LiveServer

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
pytestmark = [pytest.mark.needs("chromium"), pytest.mark.needs("axe-core")]

WCAG2_A_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    with LiveServer() as server, playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1366, "height": 1000}, bypass_csp=True)
            context.set_default_timeout(TIMEOUT_MS)
            opened = context.new_page()
            opened.goto(f"{server.url}/web")
            opened.wait_for_selector(".task-card")
            yield opened
        finally:
            browser.close()


def violations(page: Any) -> list[str]:
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(axe_script()))
    found = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})"
        ".then(r => r.violations.map(v => ({id: v.id, impact: v.impact,"
        " nodes: v.nodes.map(n => n.target.join(' '))})))",
        WCAG2_A_AA,
    )
    return [json.dumps(v) for v in found]


def test_every_state_of_the_page_meets_wcag_2_a_and_aa(page: Any) -> None:
    assert violations(page) == []  # loaded

    # The first run, as a visitor meets it: the default task, reset untouched, then the
    # heuristic plays it to the end without a refused step.
    page.click("#reset-button")
    page.wait_for_selector("#data-table tbody td")
    assert violations(page) == []

    page.select_option("#op-select", "normalize_dates")
    page.fill("#param-column", "no_such_column")
    page.click("#step-button")
    page.locator("#action-error").wait_for(state="visible")
    assert violations(page) == []  # a refused step's error shown inline

    page.click("#agent-play")
    page.locator("#finished-banner").wait_for(state="visible", timeout=120_000)
    assert violations(page) == []
    banner = page.locator("#finished-banner").inner_text()
    steps = int(page.locator("#ep-step").inner_text().split(" / ")[0])
    assert f"Finished after {steps} steps — final score 0.9999" in banner
    # Every step the heuristic offered was taken: one history row each, no error shown.
    assert page.locator("#history tbody tr").count() == steps
    assert page.locator("#action-error").is_hidden()

    page.click("#tab-board")
    expect(page.locator("#self-total")).to_contain_text("submission")
    assert violations(page) == []
