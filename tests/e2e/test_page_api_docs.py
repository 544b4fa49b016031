"""/docs (Swagger UI) and /redoc render from the server's own files with every request to
anything but 127.0.0.1 blocked, in headless Chromium (as tests/e2e/test_page.py drives it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from dataclean_env.settings import Settings
from tests.e2e.test_page import browser  # noqa: F401  (the module's Chromium fixture)
from tests.web import LiveServer

playwright_api = pytest.importorskip("playwright.sync_api")
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
