"""The Memory view and the session jobs of the Dreams page in real Chromium, on a phone and a
desktop: projects → sessions → a session → its sources → the messages; Escape goes back one
level to the same page and scroll position; search; the current-session shortcut; stop,
continue and retry from the jobs table; nothing wider than the screen."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from memcore.sessions.run import execute
from memcore.workspace.core import Workspace
from tests.chat_server import Reply, chat_server
from tests.test_gateway_helpers import gateway
from tests.test_page import expect, page_factory  # noqa: F401
from tests.test_sessions_dream import NOW, make_session, turns_for

pytestmark = pytest.mark.browser

SIZES = [(390, 844), (1280, 800)]
MARKUP = "Never paste <img src=x onerror=alert(1)> into chat."


def _sessions(ws: Workspace, n: int) -> None:
    for i in range(n):
        turns = turns_for(i)
        if i == 3:
            turns = [(MARKUP, "Understood, I will not."), *turns]
        make_session(ws, f"s{i:03d}", turns, start=NOW - timedelta(days=3, hours=i))
    for _ in range((n + 19) // 20):  # a run takes at most 20 sessions
        assert execute(ws, now=NOW)["status"] == "ok"


def _no_overflow(page) -> None:
    sizes = page.evaluate(
        "() => [document.documentElement.scrollWidth, window.innerWidth, document.body.scrollWidth]"
    )
    assert sizes[0] <= sizes[1] and sizes[2] <= sizes[1], sizes


def _level(page, kind: str) -> None:
    page.wait_for_selector(f"#mem-body[data-level='{kind}']")


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_memory_view_walks_down_and_escape_goes_back_to_the_same_place(
    ws: Workspace,
    page_factory,  # noqa: F811
    width: int,
    height: int,
) -> None:
    _sessions(ws, 60)
    with gateway([ws], scheduler=False) as (running, _client, _):
        page = page_factory.new_page(viewport={"width": width, "height": height})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(running.url + "/")
        expect(page.locator("#jobs tr.job[data-status='ok']")).to_have_count(3)
        _no_overflow(page)  # the Dreams view with its jobs table
        page.click("#tab-memory")
        _level(page, "project")
        items = page.locator("#mem-body .mem-item[data-session]")
        expect(items).to_have_count(50)
        assert items.first.get_attribute("data-session") == "s000"  # newest first
        expect(page.locator("#mem-page")).to_have_text("page 1 of 2")
        _no_overflow(page)

        page.click("#mem-next")
        expect(page.locator("#mem-page")).to_have_text("page 2 of 2")
        expect(items).to_have_count(10)
        assert items.first.get_attribute("data-session") == "s050"
        target = page.locator("#mem-body .mem-item[data-session='s058']")
        target.scroll_into_view_if_needed()
        scrolled = page.evaluate("window.scrollY")
        assert scrolled > 0
        target.locator(".mem-open").click()
        _level(page, "session")
        assert page.evaluate("window.scrollY") == 0
        card = page.locator("#mem-body .mem-card")
        expect(card).to_contain_text("session:s058@v1")
        expect(card).to_contain_text("write migrations as plain SQL")  # its short memory
        _no_overflow(page)

        page.click("#mem-body .mem-card .view-sources")
        _level(page, "sources")
        source = page.locator("#mem-body .mem-item.messages .mem-open")
        expect(source).to_have_count(1)
        assert source.inner_text().startswith("session:s058#")  # a message range of s058
        source.click()
        _level(page, "messages")
        msgs = page.locator("#mem-body .reader .msg")
        expect(msgs).to_have_count(4)
        expect(msgs.nth(2)).to_contain_text("(session 58)")
        crumbs = page.locator("#mem-crumbs")
        expect(crumbs.locator(".crumb.here")).to_contain_text("Messages")
        _no_overflow(page)

        for kind in ("sources", "session"):
            page.keyboard.press("Escape")
            _level(page, kind)
        page.keyboard.press("Escape")
        _level(page, "project")
        expect(page.locator("#mem-page")).to_have_text("page 2 of 2")  # the same page
        assert items.first.get_attribute("data-session") == "s050"
        assert page.evaluate("window.scrollY") == scrolled  # and the same place on it
        page.click("#mem-prev")
        expect(page.locator("#mem-page")).to_have_text("page 1 of 2")
        page.keyboard.press("Escape")
        _level(page, "projects")
        expect(page.locator("#mem-body .mem-item.current")).to_contain_text("this workspace")
        expect(page.locator("#mem-body .mem-card").first).to_contain_text("Global memory")
        page.keyboard.press("Escape")  # the top level stays
        _level(page, "projects")
        assert not errors, errors


def test_search_current_session_and_text_never_parsed_as_markup(
    ws: Workspace,
    page_factory,  # noqa: F811
) -> None:
    _sessions(ws, 12)
    with gateway([ws], scheduler=False) as (running, _client, _):
        page = page_factory.new_page(viewport={"width": 390, "height": 844})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(running.url + "/#memory")  # the Memory view opens from its address
        _level(page, "project")
        items = page.locator("#mem-body .mem-item[data-session]")
        expect(items).to_have_count(12)
        page.fill("#mem-query", "postgres MAIN")
        expect(items).to_have_count(3)  # sessions 0, 5 and 10 hold the Postgres decision
        assert {items.nth(i).get_attribute("data-session") for i in range(3)} == {
            "s000",
            "s005",
            "s010",
        }
        expect(page.locator("#mem-body h3")).to_contain_text("matching")
        page.locator("#mem-query").press("Escape")  # the first Escape clears the search
        expect(items).to_have_count(12)
        _level(page, "project")

        page.click("#mem-current")
        _level(page, "session")
        expect(page.locator("#mem-body .mem-card")).to_contain_text("session:s000@v1")
        page.keyboard.press("Escape")
        _level(page, "project")

        page.locator("#mem-body .mem-item[data-session='s003'] .mem-open").click()
        _level(page, "session")
        page.click("#mem-body .mem-card .view-sources")
        page.locator("#mem-body .mem-item.messages .mem-open").click()
        _level(page, "messages")
        expect(page.locator("#mem-body .reader")).to_contain_text(MARKUP)  # text, not markup
        assert page.locator("#mem-body img").count() == 0
        _no_overflow(page)

        page.click("#tab-dreams")
        page.wait_for_selector("body[data-loaded='1']")
        assert page.locator("#memory-view").is_hidden()
        assert not errors, errors


def _job_row(page, status: str):
    return page.locator(f"#jobs tr.job[data-status='{status}']")


def test_jobs_stop_continue_and_retry_from_the_page(
    ws: Workspace,
    page_factory,  # noqa: F811
) -> None:
    for i in range(3):
        make_session(ws, f"s{i}", turns_for(i), start=NOW - timedelta(days=2, hours=i))
    with chat_server() as srv, gateway([ws], scheduler=False) as (running, _client, _):
        srv.push(Reply(status=500, body=b'{"error": {"message": "overloaded"}}'))
        ws.config_path.write_text(f'[llm]\nbase_url = "{srv.url}"\nmodel = "m"\n')
        page = page_factory.new_page(viewport={"width": 390, "height": 844})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(running.url + "/")
        page.wait_for_selector("body[data-loaded='1']")
        expect(page.locator("#jobs tbody")).to_contain_text("No session dream has run yet")
        usage = page.locator("#usage")
        expect(usage).to_contain_text("of 200,000 tokens today")
        expect(usage).to_contain_text("00:00 UTC")
        expect(usage).to_contain_text("local")

        page.click("#sessions-dream")  # the model answers 500: the job fails
        failed = _job_row(page, "failed")
        expect(failed).to_have_count(1, timeout=20_000)
        expect(failed.locator("td.reason")).to_contain_text("HTTP 500")
        expect(failed.locator("td.scope")).to_have_text("all sessions")
        _no_overflow(page)

        srv.default = lambda _r: Reply(delay=2.0)  # slow enough to stop it half-way
        failed.locator("button.job-action.retry").click()
        run_row = _job_row(page, "running")
        expect(run_row).to_have_count(1, timeout=20_000)
        expect(run_row.locator("td.progress")).to_contain_text("/3", timeout=20_000)
        run_row.locator("button.job-action.stop").click()
        stopped = _job_row(page, "stopped")
        expect(stopped).to_have_count(1, timeout=30_000)
        expect(stopped.locator("td.reason")).to_contain_text("stopped from the Dreams page")
        expect(page.locator("#sessions-dream")).to_be_enabled(timeout=20_000)

        srv.default = None
        stopped.locator("button.job-action.continue").click()
        ok = _job_row(page, "ok")
        expect(ok).to_have_count(1, timeout=30_000)
        expect(ok.locator("td.progress")).to_contain_text("sources read")
        assert ok.locator("button").count() == 0  # nothing to do on a finished job
        figure = usage.locator(".usage-figure")  # the tokens it charged count today
        expect(figure).not_to_have_text(re.compile(r"^\s*0 of 200,000"))
        expect(figure).to_have_text(re.compile(r"^\s*[1-9][\d,]* of 200,000 tokens today"))
        assert _job_row(page, "failed").count() == 1 and _job_row(page, "stopped").count() == 1
        _no_overflow(page)
        assert not errors, errors


def test_read_token_mode_asks_for_the_token_then_shows_memory(
    ws: Workspace,
    page_factory,  # noqa: F811
) -> None:
    from tests.test_gateway_helpers import TOKEN

    _sessions(ws, 2)
    with gateway([ws], scheduler=False, read_token=True) as (running, _client, _):
        page = page_factory.new_page(viewport={"width": 390, "height": 844})
        page.goto(running.url + "/#memory")
        expect(page.locator("#mem-body")).to_contain_text("Cannot read memory")
        expect(page.locator("#token-bar")).to_be_visible()
        assert "s000" not in page.locator("#mem-body").inner_text()
        page.fill("#token-input", TOKEN)
        page.click("#token-save")
        expect(page.locator("#mem-body .mem-item[data-session]")).to_have_count(2)


def test_decisions_open_the_messages_they_were_said_in(
    ws: Workspace,
    page_factory,  # noqa: F811
) -> None:
    _sessions(ws, 6)  # session 1 holds the blue-green decision
    with gateway([ws], scheduler=False) as (running, _client, _):
        page = page_factory.new_page(viewport={"width": 390, "height": 844})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(running.url + "/#memory")
        _level(page, "project")
        page.click("#mem-body .open-decisions")
        _level(page, "decisions")
        quote = page.locator("#mem-body .mem-item.decision", has_text="blue-green")
        expect(quote).to_have_count(1)
        quote.locator(".mem-open").click()
        _level(page, "messages")
        expect(page.locator("#mem-body .reader")).to_contain_text("blue-green releases")
        page.keyboard.press("Escape")
        _level(page, "decisions")
        page.keyboard.press("Escape")
        _level(page, "project")
        page.locator("#mem-body .mem-item[data-session='s001'] .mem-open").click()
        _level(page, "session")
        page.click("#mem-body .open-decisions")
        _level(page, "decisions")
        expect(page.locator("#mem-body h3")).to_contain_text("of session s001")
        expect(page.locator("#mem-body .mem-item.decision")).to_have_count(1)
        _no_overflow(page)
        assert not errors, errors


def test_opened_on_memory_the_first_requests_go_once_and_the_dreams_view_waits(
    ws: Workspace,
    page_factory,  # noqa: F811
) -> None:
    _sessions(ws, 3)
    with gateway([ws], scheduler=False) as (running, _client, _):
        page = page_factory.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url.split("/", 3)[-1]))
        page.goto(running.url + "/#memory")
        _level(page, "project")
        expect(page.locator("#mem-body .mem-item[data-session]")).to_have_count(3)
        recalls = sorted(u for u in asked if u.startswith("api/recall"))
        # sent by the page's first script and taken by the Memory view: once each
        assert recalls == [
            "api/recall?memory=project&workspace=ws",
            "api/recall?memory=sessions&limit=50&workspace=ws",
        ], asked
        assert page.evaluate("window.memcoreEarly.size") == 0
        assert not [u for u in asked if u.startswith(("api/status", "api/candidates"))]
        assert page.locator("#dreams-view").is_hidden()

        page.click("#tab-dreams")  # the Dreams view is drawn when asked for
        page.wait_for_selector("body[data-loaded='1']")
        assert page.locator("#dreams-view").is_visible()
        assert page.locator("#memory-view").is_hidden()
        page.click("#tab-memory")  # back: the level is kept, nothing is asked twice
        _level(page, "project")
        assert sorted(u for u in asked if u.startswith("api/recall")) == recalls
        assert not errors, errors
