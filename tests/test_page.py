"""The Dreams page end to end in a real headless Chromium (Debian's + playwright's driver)."""

from __future__ import annotations

import os
import tomllib

import pytest

from memcore.workspace.core import Workspace
from tests.test_gateway_helpers import gateway, seed_candidate, seed_weak

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOT = "/tmp/dreams-page.png"
MARKUP = 'Never paste <img src=x onerror="document.title=1"> into the wiki.'

pytestmark = pytest.mark.browser


def _browser_missing() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install playwright)"
    return None


@pytest.fixture
def page_factory():
    reason = _browser_missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def expect(locator):
    from playwright.sync_api import expect as pw_expect

    return pw_expect(locator)


def figure(page, name: str) -> str:
    return page.locator(f'[data-figure="{name}"]').inner_text().strip()


def test_dreams_page(ws: Workspace, page_factory) -> None:
    seed_candidate(ws)
    seed_weak(ws)
    ws.memory_md.write_text("# Long-Term Memory\n\n- Prefers tea over coffee.\n", encoding="utf-8")
    ws.config_path.write_text(
        '[dreaming]\nmode = "core"\ntimezone = "Europe/Berlin"\n', encoding="utf-8"
    )
    with gateway([ws], scheduler=False) as (running, _client, _):
        page = page_factory.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(running.url + "/")
        page.wait_for_selector("body[data-loaded='1']")

        assert figure(page, "short-term") == "2"
        assert figure(page, "long-term") == "1"
        assert figure(page, "promoted") == "0"
        next_cycle = figure(page, "next-cycle")
        assert "03:00" in next_cycle  # core's 03:00, shown in the workspace's zone
        assert "UTC" in page.locator("#next-cycle-utc").inner_text()

        rows = page.locator("#candidates tbody tr")
        assert rows.count() == 2
        assert page.locator("#candidates tr.qualifies").count() == 1
        assert "more recall" in page.locator("#candidates td.gate.fail").first.inner_text()
        assert page.locator("#candidates tr.qualifies .bar").count() == 4

        page.click("#dream-now")
        expect(page.locator("#promoted")).to_have_text("1")
        assert figure(page, "long-term") == "2"
        expect(page.locator("#action-status")).to_contain_text("promoted 1")
        page.wait_for_selector("#runs td.st.ok")

        page.click("button.mode[data-mode='rem']")
        page.wait_for_selector("button.mode.active[data-mode='rem']")
        expect(page.locator("#cadence")).to_contain_text("*/6")
        page.screenshot(path=SCREENSHOT, full_page=True)
        assert not errors, errors
    cfg = tomllib.loads(ws.config_path.read_text(encoding="utf-8"))
    assert cfg["dreaming"]["mode"] == "rem"
    assert cfg["dreaming"]["timezone"] == "Europe/Berlin"


def test_page_updates_without_reload(ws: Workspace, page_factory) -> None:
    with gateway([ws], scheduler=False) as (running, _client, _):
        page = page_factory.new_page()
        page.goto(running.url + "/")
        page.wait_for_selector("body[data-loaded='1']")
        assert figure(page, "short-term") == "0"
        page.evaluate("window.__marker = 42")
        seed_candidate(ws)  # a search elsewhere recorded recalls
        expect(page.locator("#short-term")).to_have_text("1", timeout=15000)
        assert page.evaluate("window.__marker") == 42  # same document: no reload


def test_page_shows_config_error(ws: Workspace, page_factory) -> None:
    ws.config_path.write_text('[dreaming]\nmode = "sometimes"\n', encoding="utf-8")
    with gateway([ws], scheduler=False) as (running, _client, _):
        page = page_factory.new_page()
        page.goto(running.url + "/")
        page.wait_for_selector("#alert:not([hidden])")
        assert "sometimes" in page.locator("#alert").inner_text()


def test_page_review_sessions_and_health(ws: Workspace, page_factory) -> None:
    from memcore import sessions
    from tests.test_gateway_review import (
        NOW,
        PORT_NEW,
        PORT_OLD,
        queue_conflict,
        write_session,
    )

    write_session(ws, "alpha")
    (ws.root / "sessions" / "broken.jsonl").write_bytes(b"\xff\xfe not text")
    (ws.memory_dir / "topic.md").write_text("# A topic\n", encoding="utf-8")
    queue_conflict(ws, lossy_merge=True)
    with ws.memory_md.open("a", encoding="utf-8") as f:
        f.write("- Deploy notes live in [deploy](memory/deploy.md).\n")
        f.write(f"- {MARKUP}\n")
    sessions.dream(ws, now=NOW)
    with gateway([ws], scheduler=False) as (running, _client, _):
        page = page_factory.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(running.url + "/")
        page.wait_for_selector("body[data-loaded='1']")

        conflict = page.locator(".review-item[data-kind='conflict']")
        expect(conflict).to_have_count(1)
        expect(page.locator(".review-item[data-kind='merge']")).to_have_count(1)
        assert PORT_OLD in conflict.inner_text() and PORT_NEW in conflict.inner_text()
        assert "8080" in conflict.locator(".reason").inner_text()
        assert conflict.locator("button[data-choice]").count() == 4  # A, B, keep both, skip
        assert conflict.locator("button[data-choice='both']").inner_text() == "Keep both"

        report = page.locator("#sessions")
        expect(report.locator("dd.read")).to_contain_text("alpha")
        expect(report.locator("dd.skipped")).to_contain_text("broken: unreadable")
        expect(report.locator("dd.wrote")).to_contain_text("session:alpha")
        expect(report.locator("dd.tokens")).to_contain_text("calls")
        health = page.locator("#health")
        expect(health.locator(".missing-links")).to_contain_text("memory/deploy.md")
        expect(health.locator(".unlinked")).to_contain_text("memory/topic.md")
        expect(health.locator(".memory-size")).to_contain_text("of 20000 characters")
        assert health.locator("table.unverified tbody tr").count() >= 4
        assert MARKUP in health.inner_text()  # shown as text, never parsed as markup
        assert page.locator("img").count() == 0
        page.screenshot(path="/tmp/dreams-page2.png", full_page=True)

        page.evaluate("window.__marker = 7")
        conflict.locator("button[data-choice='a']").click()
        expect(conflict).to_have_count(0, timeout=15000)
        expect(page.locator(".review-item")).to_have_count(1)  # the merge still waits
        expect(page.locator("#action-status")).to_contain_text("resolved")
        assert page.evaluate("window.__marker") == 7  # no reload
        assert not errors, errors
    text = ws.memory_md.read_text(encoding="utf-8")
    assert PORT_NEW in text and PORT_OLD not in text
