"""The Dreams page on a phone and a desktop in real Chromium: no horizontal scroll, times in
local + relative form with UTC on hover, gates in words, charts from the run history,
banners for an unreadable MEMORY.md and a failing job, status messages that clear."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.schedule.jobs import JobState, save_state
from memcore.workspace.core import Workspace
from tests.test_gateway_helpers import gateway, seed_candidate, seed_weak
from tests.test_page import expect, page_factory  # noqa: F401

pytestmark = pytest.mark.browser

LONG = "A very long note without spaces " + "x" * 300


def _workspace(ws: Workspace) -> None:
    seed_candidate(ws)
    seed_weak(ws)
    seed_candidate(ws, text=LONG, queries=1)
    ws.memory_md.write_text("# Long-Term Memory\n\n- Prefers tea over coffee.\n", encoding="utf-8")
    ws.config_path.write_text('[dreaming]\nmode = "core"\ntimezone = "UTC"\n', encoding="utf-8")


@pytest.mark.parametrize(("width", "height"), [(390, 844), (360, 740), (1280, 800)])
def test_no_horizontal_scroll_and_charts(
    ws: Workspace,
    page_factory,  # noqa: F811
    tmp_path: Path,
    width: int,
    height: int,
) -> None:
    _workspace(ws)
    with gateway([ws], scheduler=False) as (running, client, _):
        assert client.post("/api/memories/dream", json={}).status_code == 200
        page = page_factory.new_page(viewport={"width": width, "height": height})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(running.url + "/")
        page.wait_for_selector("body[data-loaded='1']")
        page.wait_for_selector("#charts svg .run-mark")
        shot = tmp_path / f"dreams-{width}x{height}.png"
        page.screenshot(path=str(shot), full_page=True)
        sizes = page.evaluate(
            "() => [document.documentElement.scrollWidth, window.innerWidth,"
            " document.body.scrollWidth]"
        )
        assert sizes[0] <= sizes[1] and sizes[2] <= sizes[1], sizes
        assert shot.stat().st_size > 1000
        nxt = page.locator("#next-cycle")
        assert "in " in nxt.inner_text() and "UTC" in (nxt.get_attribute("title") or "")
        started = page.locator("#runs td.when").first
        assert "ago" in started.inner_text() and "UTC" in (started.get_attribute("title") or "")
        gate = page.locator("#candidates td.gate.fail").first.inner_text()
        assert gate and " < " not in gate and "recallCount" not in gate, gate  # words, not code
        assert page.locator("#charts .chart").count() == 3
        assert page.locator("#charts circle").count() >= 2  # store and MEMORY.md points
        assert page.locator("link[rel='icon']").count() == 1
        assert not errors, errors


def test_banners_and_status_that_clears(
    ws: Workspace,
    page_factory,  # noqa: F811
    tmp_path: Path,
) -> None:
    _workspace(ws)
    save_state(
        ws,
        JobState(
            "promote", last_status="failed", last_error="disk on fire", consecutive_failures=3
        ),
    )
    (tmp_path / "outside.md").write_text("- elsewhere\n", encoding="utf-8")
    ws.memory_md.unlink()
    ws.memory_md.symlink_to(tmp_path / "outside.md")
    with gateway([ws], scheduler=False) as (running, _client, _):
        page = page_factory.new_page(viewport={"width": 390, "height": 844})
        page.clock.install()
        page.goto(running.url + "/")
        page.wait_for_selector("body[data-loaded='1']")
        alert = page.locator("#alert")
        expect(alert).to_contain_text("MEMORY.md cannot be read")
        expect(alert).to_contain_text("outside the workspace")
        expect(alert).to_contain_text("Job promote failed 3 times in a row: disk on fire")
        page.click("button.mode[data-mode='rem']")
        expect(page.locator("#action-status")).to_contain_text("rem")
        page.clock.run_for(16_000)
        expect(page.locator("#action-status")).to_have_text("")
        assert "Dreaming mode" not in page.locator("#action-status").inner_text()
