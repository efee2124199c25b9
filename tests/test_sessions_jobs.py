"""Session dreams as jobs: ``memcore sessions jobs`` lists them with scope, progress and the
failure reason; ``stop ID`` stops a running one from another process and keeps what it
finished; ``retry ID`` continues in the same scope from the saved progress."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

from memcore.judge.llm import OpenAICompatibleLLM
from memcore.sessions.run import execute
from memcore.sessions.store import ensure_schema, latest
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.chat_server import Reply, chat_server
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, make_session, turns_for
from tests.test_sessions_stop import wait_for


def jobs(ws: Workspace) -> list[dict[str, Any]]:
    r = invoke(ws, "sessions", "jobs", "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["jobs"]


def test_stop_keeps_finished_work_and_retry_continues(ws: Workspace) -> None:
    for i in range(3):
        make_session(ws, f"s{i}", turns_for(i), start=NOW - timedelta(days=2, hours=i))
    reports: list[dict[str, Any]] = []
    with chat_server() as srv:
        srv.default = lambda _r: Reply(delay=0.4)
        llm = OpenAICompatibleLLM(srv.url, "m", timeout=10)
        t = threading.Thread(
            target=lambda: reports.append(execute(ws, now=NOW, llm=llm, session=None))
        )
        t.start()
        wait_for(lambda: len(srv.requests) >= 2)  # s0 is done, s1's call is in flight
        (running,) = [j for j in jobs(ws) if j["status"] == "running"]
        assert running["progress"]["done"] >= 1 and running["progress"]["total"] == 3
        r = invoke(ws, "sessions", "stop", running["id"][:6])
        assert r.exit_code == 0 and "asked" in r.output, r.output
        t.join(20)
        (job,) = jobs(ws)
        assert job["status"] == "stopped" and "memcore sessions stop" in job["error"]
        assert reports[0]["status"] == "stopped"
        conn = connect(ws.db_path)
        ensure_schema(conn)
        assert latest(conn, "session", "s0") is not None  # finished work is kept
        assert latest(conn, "session", "s1") is None  # the late answer was not published
        conn.close()
        srv.default = None
        ws.config_path.write_text(f'[llm]\nbase_url = "{srv.url}"\nmodel = "m"\n')
        asked = len(srv.requests)
        r = invoke(
            ws, "sessions", "retry", job["id"], "--json", env={"MEMCORE_NOW": NOW.isoformat()}
        )
        assert r.exit_code == 0, r.output
        retry = json.loads(r.output)
        assert retry["retryOf"] == job["id"] and retry["status"] == "ok"
        assert sorted(retry["reviewed"]) == ["s1", "s2"]  # s0 is not read again
        tasks = [json.loads(q["messages"][-1]["content"])["task"] for q in srv.requests[asked:]]
        assert tasks.count("session") == 2
    listed = jobs(ws)
    assert [j["status"] for j in listed] == ["ok", "stopped"]
    assert listed[0]["tokens"] > 0 and listed[0]["calls"] == 4
    text = invoke(ws, "sessions", "jobs").output
    assert "stopped" in text and "reason: stopped: memcore sessions stop" in text


def test_failed_job_shows_its_reason_and_bad_ids_are_one_line(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(0))
    with chat_server() as srv:
        srv.push(Reply(status=500, body=b'{"error": {"message": "overloaded"}}'))
        execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=5))
    (job,) = jobs(ws)
    assert job["status"] == "failed" and "HTTP 500" in job["error"] and job["scope"] == {}
    r = invoke(ws, "sessions", "stop", job["id"])
    assert r.exit_code == 1 and "is failed, not running" in r.output
    r = invoke(ws, "sessions", "retry", "zzzz")
    assert r.exit_code == 1 and "no session dream with that id" in r.output
