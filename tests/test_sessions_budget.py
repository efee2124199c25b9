"""The daily token budget: reserve before a call, settle with reported usage, reset at 00:00 UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memcore.judge.llm import OpenAICompatibleLLM, Usage
from memcore.sessions import budget as bud
from memcore.sessions import status
from memcore.sessions.run import execute
from memcore.sessions.store import ensure_schema
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.chat_server import Reply, chat_server
from tests.test_sessions_dream import NOW, make_session, turns_for


def test_reserve_settle_cancel_and_daily_reset(ws: Workspace) -> None:
    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    a = bud.reserve(conn, budget=1000, amount=600, now=NOW, run_id="r", model="m")
    assert bud.budget_status(conn, 1000, NOW).used == 600
    with pytest.raises(bud.BudgetExhausted, match=r"00:00 UTC"):
        bud.reserve(conn, budget=1000, amount=500, now=NOW, run_id="r", model="m")
    assert bud.settle(conn, a, Usage(200, 50, 10), NOW) == 250
    st = bud.budget_status(conn, 1000, NOW)
    assert (st.used, st.settled, st.reserved_open, st.remaining) == (250, 250, 0, 750)
    b = bud.reserve(conn, budget=1000, amount=300, now=NOW, run_id="r", model="m")
    bud.cancel(conn, b, NOW)  # a cancelled call keeps its reservation
    c = bud.reserve(conn, budget=1000, amount=100, now=NOW, run_id="r", model="m")
    assert bud.settle(conn, c, None, NOW) == 100  # no usage: the reservation stays
    assert bud.budget_status(conn, 1000, NOW).used == 650
    tomorrow = datetime(2026, 11, 4, 0, 0, tzinfo=UTC)
    assert bud.budget_status(conn, 1000, tomorrow).used == 0
    assert bud.budget_status(conn, 1000, tomorrow - timedelta(seconds=1)).used == 650


def test_token_accounting_matches_server_usage_exactly(ws: Workspace) -> None:
    for i in range(4):
        make_session(ws, f"s{i}", turns_for(i))
    with chat_server() as srv:
        report = execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=5))
        usages = list(srv.usages)
    assert report["status"] == "ok"
    assert len(usages) == report["tokens"]["calls"] == 6  # 4 sessions + project + global
    total = sum(u["total_tokens"] for u in usages)
    assert report["tokens"]["charged"] == total
    assert report["tokens"]["prompt"] == sum(u["prompt_tokens"] for u in usages)
    assert report["tokens"]["completion"] == sum(u["completion_tokens"] for u in usages)
    assert report["tokens"]["cached"] == sum(
        u["prompt_tokens_details"]["cached_tokens"] for u in usages
    )
    b = status(ws, NOW)["budget"]
    assert b["settled"] == b["used"] == total and b["reserved_open"] == 0
    assert report["tokens"]["reserved"] > total  # the estimate is conservative


def test_missing_usage_and_failed_calls_keep_reservations(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(0))
    with chat_server() as srv:
        srv.push(Reply(status=500, body=b"{}"))
        failed = execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=5))
        assert failed["status"] == "failed"
        assert status(ws, NOW)["budget"]["used"] == failed["tokens"]["reserved"] > 0
        srv.default = lambda _req: Reply(usage=None)
        ok = execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=5))
    assert ok["status"] == "ok" and ok["tokens"]["no_usage"] == ok["tokens"]["calls"] == 3
    assert (
        status(ws, NOW)["budget"]["used"] == failed["tokens"]["reserved"] + ok["tokens"]["reserved"]
    )


def test_a_call_that_does_not_fit_waits_for_tomorrow(ws: Workspace) -> None:
    for i in range(3):
        make_session(ws, f"s{i}", turns_for(i))
    ws.config_path.write_text(
        "[sessions]\ndaily_token_budget = 3000\nenabled = true\nmin_sessions = 1\n"
    )
    with chat_server() as srv:
        llm = OpenAICompatibleLLM(srv.url, "m", timeout=5)
        report = execute(ws, now=NOW, llm=llm)
        assert report["status"] == "budget"
        assert (
            "daily token budget reached" in report["error"]
            and "2026-11-04T00:00:00.000Z" in report["error"]
        )
        calls_today = len(srv.requests)
        from memcore.sessions import due

        gate = due(ws, NOW + timedelta(hours=1))
        assert not gate.due and "budget" in gate.reason
        assert len(report["queued"]) >= 1
        nxt = execute(ws, now=NOW + timedelta(days=1), llm=llm)
        assert len(srv.requests) > calls_today
    assert nxt["status"] in ("ok", "budget")
    assert status(ws, NOW)["budget"]["used"] <= 2600
