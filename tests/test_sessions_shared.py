"""One budget and one global memory per user: workspaces dreaming at once take turns on the
global step (no failure, no backoff) and charge one daily ledger in the user directory."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

from memcore.judge.llm import Completion, OpenAICompatibleLLM
from memcore.sessions import due, status
from memcore.sessions.budget import budget_status
from memcore.sessions.run import execute
from memcore.sessions.store import get_state, latest, latest_all, uplinks
from memcore.sessions.userdb import open_user_db
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.chat_server import chat_server
from tests.test_sessions_dream import NOW, make_session, turns_for


class GlobalStall(OpenAICompatibleLLM):
    """The first global call waits until a second one starts (or a second passes), so two
    global steps overlap whenever nothing serialises them."""

    entered = threading.Event()
    second = threading.Event()

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int) -> Completion:
        if json.loads(messages[-1]["content"])["task"] == "global":
            if GlobalStall.entered.is_set():
                GlobalStall.second.set()
            else:
                GlobalStall.entered.set()
                GlobalStall.second.wait(1.0)
        return super().complete(messages, max_tokens=max_tokens)


def workspaces(tmp_path: Path, n: int) -> list[Workspace]:
    out = []
    for k in range(n):
        ws = Workspace(tmp_path / f"ws{k}")
        ws.memory_dir.mkdir(parents=True)
        ws.config_path.write_text(
            "[sessions]\nenabled = true\nmin_sessions = 1\ninterval_days = 1\n"
        )
        for i in range(2):
            make_session(ws, f"s{i}", turns_for(k + i), start=NOW - timedelta(days=2, hours=i))
        out.append(ws)
    return out


def run_all(wss: list[Workspace], url: str) -> list[dict[str, Any]]:
    reports: list[dict[str, Any]] = [{} for _ in wss]

    def one(k: int) -> None:
        reports[k] = execute(wss[k], now=NOW, llm=GlobalStall(url, "m", timeout=10))

    threads = [threading.Thread(target=one, args=(k,)) for k in range(len(wss))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return reports


def test_two_workspaces_at_once_take_turns_on_the_global_step(tmp_path: Path) -> None:
    wss = workspaces(tmp_path, 2)
    with chat_server() as srv:
        reports = run_all(wss, srv.url)
    assert [r["status"] for r in reports] == ["ok", "ok"], reports
    assert not any(r["deferred"] for r in reports), reports
    # Each global step folds every project mirrored so far: usually one after the other
    # (v1, then v2 on top of it), but when the second workspace mirrored its project before
    # the first one read the projects, the first fold covers both and the second has nothing
    # left to fold. Either way, the global memory ends up covering both projects.
    folds = [r for r in reports if any(w.startswith("global@") for w in r["wrote"])]
    assert folds, reports
    user = open_user_db()
    try:
        g = latest(user, "global", "")
        assert g is not None and g.version == len(folds)  # each fold on the latest
        projects = {p.owner for p in latest_all(user, "project")}
        assert len(projects) == 2
        assert set(uplinks(user, "global", "")) == {f"project:{p}" for p in projects}
        rows = user.execute("SELECT workspace, charged FROM sess_budget_calls").fetchall()
    finally:
        user.close()
    for ws in wss:
        conn = connect(ws.db_path)
        try:  # no failure recorded, so no backoff; no ledger of its own
            assert get_state(conn, "last_failure_at") is None
            assert conn.execute("SELECT count(*) FROM sess_budget_calls").fetchone()[0] == 0
        finally:
            conn.close()
        assert "backing off" not in due(ws, NOW + timedelta(minutes=5)).reason
    charged = sum(r["tokens"]["charged"] for r in reports)
    assert sum(r["charged"] for r in rows) == charged > 0
    assert {r["workspace"] for r in rows} == {str(ws.root) for ws in wss}
    for ws in wss:  # every workspace reports the same, shared use of the day
        assert status(ws, NOW)["budget"]["used"] == charged


def test_the_daily_budget_is_one_for_all_workspaces(tmp_path: Path) -> None:
    a, b = workspaces(tmp_path, 2)
    with chat_server() as srv:
        first = execute(a, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=10))
        used = first["tokens"]["charged"]
        assert first["status"] == "ok" and used > 0
        # b allows as much as a already spent: nothing is left today for b either
        b.config_path.write_text(
            "[sessions]\nenabled = true\nmin_sessions = 1\ninterval_days = 1\n"
            f"daily_token_budget = {used + 10}\n"
        )
        calls = len(srv.bodies)
        second = execute(b, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=10))
        assert len(srv.bodies) == calls  # no call was made
    assert second["status"] == "budget", second
    assert "daily token budget reached" in second["error"]
    gate = due(b, NOW + timedelta(hours=1))
    assert not gate.due and "budget" in gate.reason
    user = open_user_db()
    try:
        assert budget_status(user, used + 10, NOW).used >= used
    finally:
        user.close()


def test_old_workspace_ledger_rows_still_count(ws: Workspace) -> None:
    from memcore.sessions import budget as bud
    from memcore.sessions.store import ensure_schema

    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    bud.reserve(conn, budget=1000, amount=700, now=NOW, run_id="old", model="m")
    conn.close()
    ws.config_path.write_text("[sessions]\ndaily_token_budget = 1000\n")
    assert status(ws, NOW)["budget"]["used"] == 700
    assert status(ws, NOW)["budget"]["used"] == 700  # moved once, not counted twice
