"""/docs (Swagger UI) and /redoc render from the server's own files with every request to
anything but 127.0.0.1 blocked, in headless Chromium (as tests/e2e/test_page.py drives it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from dataclean_env.settings import Settings
from tests.e2e.test_page import browser  # noqa: F401  (the module's Chromium fixture)
from tests.web import LiveServer

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.needs("chromium")
TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer(Settings(openenv_mount="eager")) as live:
        yield live


def offline_page(browser: Any) -> tuple[Any, Any, list[str]]:  # noqa: F811
    """A tab whose requests to any host but 127.0.0.1 are aborted (and listed)."""
    context = browser.new_context()
    blocked: list[str] = []

    def only_local(route: Any) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_local)
    return context, context.new_page(), blocked


def test_swagger_ui_renders_every_operation_offline(browser: Any, server: LiveServer) -> None:  # noqa: F811
    paths = httpx.get(f"{server.url}/openapi.json", timeout=30).json()["paths"]
    operations = sum(len(methods) for methods in paths.values())
    context, page, blocked = offline_page(browser)
    try:
        page.goto(f"{server.url}/docs")
        page.wait_for_selector(".opblock", timeout=TIMEOUT_MS)
        assert page.locator(".opblock").count() == operations
        assert page.locator(".opblock-summary-path", has_text="/reset/{task_id}").count() == 1
        assert blocked == []
    finally:
        context.close()


def test_redoc_renders_offline(browser: Any, server: LiveServer) -> None:  # noqa: F811
    context, page, blocked = offline_page(browser)
    try:
        page.goto(f"{server.url}/redoc")
        page.get_by_text("Start a new episode of the task in the path.").first.wait_for(
            timeout=TIMEOUT_MS
        )
        assert page.title() == "Data Cleaning OpenEnv - ReDoc"
        assert blocked == []
    finally:
        context.close()


def test_swagger_try_it_out_resets_with_the_documented_example(
    browser: Any,  # noqa: F811
    server: LiveServer,
) -> None:
    """Swagger UI itself, untouched: "Try it out" then "Execute" on POST /reset/{task_id}
    sends the documented example and the server answers 200 (it was 422: a seed made up
    from the schema's bound)."""
    context, page, blocked = offline_page(browser)
    try:
        page.goto(f"{server.url}/docs")
        operation = page.locator("#operations-episodes-reset_task_reset__task_id__post")
        operation.locator(".opblock-summary").click()
        operation.get_by_role("button", name="Try it out").click()
        body = json.loads(operation.locator("textarea.body-param__text").input_value())
        assert body == {"seed": 7, "episode_id": "my-run-1"}
        task = operation.locator("tr[data-param-name='task_id'] select").input_value()
        assert task == "easy_dedup_rename"
        operation.get_by_role("button", name="Execute").click()
        status = operation.locator(".live-responses-table tbody .response-col_status").first
        status.wait_for(timeout=TIMEOUT_MS)
        assert status.inner_text().strip() == "200"
        assert blocked == []
    finally:
        context.close()
