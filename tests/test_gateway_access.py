"""Access levels: read-token mode (GET routes with memory text need the token), its default
beyond loopback, and the token file that replaces printing the token."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import httpx
import pytest

from memcore.errors import ConfigError
from memcore.gateway.security import load_or_create_token
from memcore.gateway.server import GatewayOptions, build
from memcore.gateway.workspaces import build_served
from memcore.workspace.core import Workspace
from tests.test_gateway_helpers import FACT, TOKEN, gateway, seed_candidate

MEMORY_TEXT_ROUTES = ("/api/candidates", "/api/review", "/api/sessions")


def test_read_token_mode_guards_memory_text(ws: Workspace) -> None:
    seed_candidate(ws)
    with gateway([ws], scheduler=False, read_token=True) as (running, client, _):
        with httpx.Client(base_url=running.url, timeout=30) as anon:
            for route in MEMORY_TEXT_ROUTES:
                res = anon.get(route)
                assert res.status_code == 401, (route, res.text)
                assert FACT not in res.text
                assert client.get(route).status_code == 200, route
            assert anon.get("/api/status").status_code == 200  # counts, no memory text
            page = anon.get("/")
            assert page.status_code == 200 and TOKEN not in page.text
            assert '<meta name="memcore-read-token" content="1">' in page.text
        assert FACT in client.get("/api/candidates").text


def test_without_read_token_the_text_routes_stay_open(ws: Workspace) -> None:
    seed_candidate(ws)
    with (
        gateway([ws], scheduler=False) as (running, _client, _),
        httpx.Client(base_url=running.url, timeout=30) as anon,
    ):
        assert anon.get("/api/candidates").status_code == 200
        assert TOKEN in anon.get("/").text  # a loopback page may carry it


@pytest.mark.parametrize(
    ("host", "choice", "expected"),
    [
        ("127.0.0.1", None, False),
        ("0.0.0.0", None, True),
        ("192.168.1.5", None, True),
        ("0.0.0.0", False, False),
        ("127.0.0.1", True, True),
    ],
)
def test_read_token_default_follows_the_host(
    ws: Workspace, host: str, choice: bool | None, expected: bool
) -> None:
    served = build_served([(None, ws.root)])
    gw = build(served, GatewayOptions(host=host, token="x", read_token=choice))
    assert gw.guard.read_token is expected


def test_token_file_is_created_0600_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "user" / "gateway.token"
    token, created = load_or_create_token(path)
    assert created and len(token) >= 24
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again, created2 = load_or_create_token(path)
    assert again == token and not created2
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_or_create_token(path)
    path.unlink()
    path.mkdir()
    with pytest.raises(ConfigError, match="regular file"):
        load_or_create_token(path)


@pytest.mark.browser
def test_page_asks_for_the_token_once_and_again_when_wrong(ws: Workspace) -> None:
    from tests.test_page import ARGS, CHROMIUM, _browser_missing, expect

    if _browser_missing():
        pytest.skip(_browser_missing() or "")
    from playwright.sync_api import sync_playwright

    seed_candidate(ws)
    with (
        gateway([ws], scheduler=False, read_token=True) as (running, _client, _),
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(running.url + "/")
            expect(page.locator("#token-bar")).to_be_visible()
            assert FACT[:30] not in page.locator("#candidates").inner_text()
            page.fill("#token-input", "wrong-token")
            page.click("#token-save")
            expect(page.locator("#token-bar")).to_be_visible()  # asked again, not hidden
            expect(page.locator("#token-note")).to_contain_text("refused")
            page.fill("#token-input", TOKEN)
            page.click("#token-save")
            expect(page.locator("#candidates")).to_contain_text(FACT[:30])
            expect(page.locator("#token-bar")).to_be_hidden()
            page.reload()
            page.wait_for_selector("body[data-loaded='1']")
            expect(page.locator("#token-bar")).to_be_hidden()  # asked once
        finally:
            browser.close()
