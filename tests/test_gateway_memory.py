"""The Memory view's routes on a real gateway: ``GET /api/recall`` answers what ``memcore recall
--json`` prints (one library call), pages and searches; bad query values are one-line 400s;
``GET/POST /api/sessions/jobs`` list, start, stop and continue session dreams under the same
token, Origin and content-type rules as every POST; a completed job's checklist is cleared
and run records go after 30 days."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
import pytest

from memcore.sessions.control import ensure_control_columns, jobs
from memcore.sessions.run import execute
from memcore.sessions.settings import project_id
from memcore.sessions.store import ensure_schema, latest
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.chat_server import Reply, chat_server
from tests.conftest import invoke
from tests.test_gateway_helpers import gateway
from tests.test_sessions_dream import NOW, make_session, turns_for
from tests.test_sessions_stop import wait_for


def _dreamed(ws: Workspace, n: int = 3) -> None:
    for i in range(n):
        make_session(ws, f"s{i:02d}", turns_for(i), start=NOW - timedelta(days=2, hours=i))
    assert execute(ws, now=NOW)["status"] == "ok"


def _cli(ws: Workspace, *args: str) -> dict[str, Any]:
    r = invoke(ws, "recall", *args, "--json")
    assert r.exit_code == 0, r.output
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def _route(client: httpx.Client, **params: Any) -> dict[str, Any]:
    res = client.get("/api/recall", params=params)
    assert res.status_code == 200, res.text
    out: dict[str, Any] = res.json()
    assert out.pop("workspace") == "ws"
    return out


def test_recall_route_answers_what_the_cli_prints(ws: Workspace) -> None:
    _dreamed(ws)
    pid = project_id(ws)
    cases = [
        (("projects",), {"memory": "projects"}),
        (("project", pid), {"memory": "project", "project": pid}),
        (("global",), {"memory": "global"}),
        (("sessions",), {"memory": "sessions"}),
        (("session", "s01"), {"memory": "session", "session": "s01"}),
        (
            ("session", "s01", "--from", "1", "--to", "2"),
            {"memory": "session", "session": "s01", "from": 1, "to": 2},
        ),
        (("session", "s01", "--to", "1"), {"memory": "session", "session": "s01", "to": 1}),
        (("sources", "session:s01@v1"), {"memory": "sources", "reference": "session:s01@v1"}),
        (("sources", f"project:{pid}@v1"), {"memory": "sources", "reference": f"project:{pid}@v1"}),
        (("sources", "session:s00#0-3"), {"memory": "sources", "reference": "session:s00#0-3"}),
    ]
    with gateway([ws], scheduler=False) as (_running, client, _):
        for argv, params in cases:
            assert _route(client, **params) == _cli(ws, *argv), argv
    messages = _cli(ws, "session", "s01", "--from", "1", "--to", "2")["items"]
    assert [m["index"] for m in messages] == [1, 2] and "(session 1)" in messages[1]["text"]


def test_recall_pages_keep_their_order_and_search_finds_words(ws: Workspace) -> None:
    for i in range(25):
        make_session(ws, f"s{i:02d}", turns_for(i), start=NOW - timedelta(days=3, hours=i))
    execute(ws, now=NOW)
    execute(ws, now=NOW)  # at most 20 sessions a run: the second takes the last 5
    with gateway([ws], scheduler=False) as (_running, client, _):
        seen: list[str] = []
        cursor = None
        while True:
            page = _route(
                client, memory="sessions", limit=10, **({"cursor": cursor} if cursor else {})
            )
            assert page["total"] == 25 and len(page["items"]) <= 10
            seen += [it["session"] for it in page["items"]]
            cursor = page["nextCursor"]
            if cursor is None:
                break
        assert seen == [f"s{i:02d}" for i in range(25)]  # newest first, each once
        hits = _route(client, memory="sessions", query="POSTGRES main", limit=50)
        # every word, any case: the sessions whose short memory holds the Postgres decision
        assert {it["session"] for it in hits["items"]} == {f"s{i:02d}" for i in range(0, 25, 5)}
        assert hits["total"] == 5
        assert _route(client, memory="sessions", query="s07")["items"][0]["session"] == "s07"
        assert _route(client, memory="sessions", query="nothing-like-this")["items"] == []
    cli = _cli(ws, "sessions", "--query", "postgres", "--limit", "2")
    assert cli["total"] == 5 and len(cli["items"]) == 2 and cli["nextCursor"] == "2"


BAD_QUERIES = [
    ("memory=nope", "memory must be one of"),
    ("memory=sessions&cursor=abc", "'cursor'"),
    ("memory=sessions&cursor=-1", "'cursor'"),
    ("memory=sessions&limit=0", "limit must be from 1 to 100"),
    ("memory=sessions&limit=101", "limit must be from 1 to 100"),
    ("memory=sessions&limit=ten", "'limit'"),
    ("memory=session&session=s00&version=99999999999999999999", "'version'"),
    ("memory=session&session=s00&version=0", "'version'"),
    ("memory=session&session=s00&from=-1", "'from'"),
    ("memory=session&session=s00&from=5&to=2", "empty range"),
    ("memory=session&session=s00&from=0&cursor=zz", "'cursor'"),
    ("memory=session&session=nobody", "unknown session"),
    ("memory=session", "needs a session id"),
    ("memory=session&session=s00&version=7", "does not exist"),
    ("memory=sources&reference=zzz", "not a memory reference"),
    ("memory=sources&reference=session:s00@v9", "does not exist"),
    ("memory=sources", "needs a reference"),
    ("memory=sources&reference=global@v99999999999999999999", "out of range"),
    ("memory=sources&reference=session:s00@v9223372036854775808", "out of range"),
    ("memory=project&project=elsewhere", "unknown project"),
    ("memory=sessions&bogus=1", "unknown query parameter"),
    ("memory=sessions&memory=global", "given 2 times"),
    ("memory=sessions&query=" + "x" * 1001, "at most 1000"),
    ("memory=sessions&query=a%00b", "at most 1000"),
    ("memory=sessions&project=%ED%A0%80", "unknown project"),
]


def test_bad_query_values_are_one_line_4xx_never_500(ws: Workspace) -> None:
    _dreamed(ws, 1)
    with gateway([ws], scheduler=False) as (_running, client, _):
        for query, words in BAD_QUERIES:
            res = client.get("/api/recall?" + query)
            assert 400 <= res.status_code < 500, (query, res.status_code, res.text)
            error = res.json()["error"]
            assert words in error and "\n" not in error, (query, error)
        for query in ("limit=0", "limit=x", "limit=201", "workspace=nope"):
            res = client.get("/api/sessions/jobs?" + query)
            assert 400 <= res.status_code < 500 and "\n" not in res.json()["error"], query
        odd = ["", "-1", "1e3", "\uff10", "x" * 999, "s00", "../../etc/passwd", "%", "0:0"]
        odd += ["session:s00#0-99999999999999999999", "session:s00#99999999999999999999-1"]
        odd += ["global@v1", "project:x@v1", "9" * 30, "session:s00@v1"]
        for memory in ("global", "projects", "project", "sessions", "session", "sources"):
            for name in ("project", "session", "reference", "version", "from", "to", "cursor"):
                for value in odd:
                    res = client.get("/api/recall", params={"memory": memory, name: value})
                    assert res.status_code < 500, (memory, name, value, res.text)
                    assert "error" not in res.json() or "\n" not in res.json()["error"]
    r = invoke(ws, "recall", "sources", "global@v99999999999999999999")
    assert r.exit_code == 1 and "out of range" in r.output and "Traceback" not in r.output
    r = invoke(ws, "recall", "global", "--version", "99999999999999999999")
    assert r.exit_code == 1 and "at most" in r.output


def test_memory_text_routes_need_the_token_in_read_token_mode(ws: Workspace) -> None:
    _dreamed(ws, 1)
    with gateway([ws], scheduler=False, read_token=True) as (running, client, _):
        with httpx.Client(base_url=running.url, timeout=30) as anon:
            for route in ("/api/recall?memory=sessions", "/api/sessions/jobs"):
                res = anon.get(route)
                assert res.status_code == 401 and "s00" not in res.text, route
                assert client.get(route).status_code == 200, route
            body = {"action": "start"}
            assert anon.post("/api/sessions/jobs", json=body).status_code == 401
        headers = {"Origin": "http://evil.example"}
        res = client.post("/api/sessions/jobs", json=body, headers=headers)
        assert res.status_code == 403
        res = client.post(
            "/api/sessions/jobs", content=json.dumps(body), headers={"Content-Type": "text/plain"}
        )
        assert res.status_code == 415
        assert len(jobs(_db(ws))) == 1  # none of them started a run


def _db(ws: Workspace) -> Any:
    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    ensure_control_columns(conn)
    return conn


def _jobs(client: httpx.Client) -> dict[str, Any]:
    res = client.get("/api/sessions/jobs")
    assert res.status_code == 200, res.text
    out: dict[str, Any] = res.json()
    return out


def test_page_routes_start_stop_and_continue_a_job(ws: Workspace) -> None:
    for i in range(3):
        make_session(ws, f"s{i}", turns_for(i), start=NOW - timedelta(days=2, hours=i))
    with chat_server() as srv, gateway([ws], scheduler=False) as (_running, client, _):
        srv.default = lambda _r: Reply(delay=0.4)
        ws.config_path.write_text(f'[llm]\nbase_url = "{srv.url}"\nmodel = "m"\n')
        res = client.post("/api/sessions/jobs", json={"action": "start"})
        assert res.status_code == 200 and res.json()["started"] is True, res.text
        again = client.post("/api/sessions/jobs", json={"action": "start"})
        assert again.status_code == 409, again.text  # one run per workspace
        wait_for(lambda: len(srv.requests) >= 2)
        (running,) = [j for j in _jobs(client)["jobs"] if j["status"] == "running"]
        assert running["progress"]["total"] == 3 and running["progress"]["done"] >= 1
        res = client.post("/api/sessions/jobs", json={"action": "stop", "job": running["id"]})
        assert res.status_code == 200 and res.json()["stopRequested"] is True, res.text
        wait_for(lambda: _jobs(client)["jobs"][0]["status"] == "stopped")
        wait_for(lambda: _jobs(client)["running"] is None)
        stopped = _jobs(client)["jobs"][0]
        assert "stopped from the Dreams page" in stopped["error"]
        assert latest(_db(ws), "session", "s0") is not None  # finished work is kept
        res = client.post("/api/sessions/jobs", json={"action": "stop", "job": stopped["id"]})
        assert res.status_code == 409 and "not running" in res.json()["error"]
        asked = len(srv.requests)
        res = client.post("/api/sessions/jobs", json={"action": "continue", "job": stopped["id"]})
        assert res.status_code == 200 and res.json()["retryOf"] == stopped["id"], res.text
        wait_for(lambda: _jobs(client)["jobs"][0]["status"] == "ok", 60)
        done = _jobs(client)
        ok = done["jobs"][0]
        assert ok["progress"]["step"] == "done" and ok["progress"]["done"] >= 2
        tasks = [json.loads(q["messages"][-1]["content"])["task"] for q in srv.requests[asked:]]
        assert tasks.count("session") == 2  # s0 is not read again
        usage = done["usage"]
        assert usage["used"] >= ok["tokens"] > 0 and usage["budget"] == 200_000
        assert usage["resetsAt"].endswith("T00:00:00.000Z")
        for bad, words in (
            ({"action": "explode"}, "must be one of"),
            ({"action": "retry", "job": "zzz"}, "no session dream with that id"),
            ({"action": "retry", "job": " "}, "must name a session dream"),
            ({"action": "retry"}, "must name a session dream"),
            ({"action": "start", "session": "nobody"}, "no such session"),
            ({"action": "start", "project": "elsewhere"}, "not this workspace's project"),
            ({"action": "start", "session": "s0", "project": "x"}, "cannot be combined"),
            ({"action": "start", "job": ok["id"]}, "start takes a scope"),
            ({"action": 3}, "must be a string"),
        ):
            res = client.post("/api/sessions/jobs", json=bad)
            assert res.status_code == 400 and words in res.json()["error"], (bad, res.text)


def test_completed_checklist_cleared_and_runs_kept_thirty_days(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(0), start=NOW - timedelta(days=2))
    conn = _db(ws)
    conn.execute(
        "INSERT INTO sess_runs (id, started_at, status, progress) VALUES"
        " ('old31', ?, 'stopped', '{\"done\": 1, \"total\": 2}'),"
        " ('old29', ?, 'failed', '{\"done\": 0, \"total\": 1}')",
        (iso_ms(NOW - timedelta(days=31)), iso_ms(NOW - timedelta(days=29))),
    )
    conn.commit()
    report = execute(ws, now=NOW)
    assert report["status"] == "ok"
    rows = {r["id"]: r for r in conn.execute("SELECT id, progress FROM sess_runs")}
    assert set(rows) == {report["run_id"], "old29"}  # the 31-day-old record is gone
    assert rows[report["run_id"]]["progress"] is None  # the checklist, cleared at once
    assert json.loads(rows["old29"]["progress"]) == {"done": 0, "total": 1}  # kept for retry
    listed = {j["id"]: j for j in jobs(conn, now=NOW + timedelta(days=2))}
    assert set(listed) == {report["run_id"]}  # old29 is past 30 days by then
    assert listed[report["run_id"]]["progress"] == {"step": "done", "done": 1, "total": 1}
    conn.close()
    r = invoke(ws, "sessions", "jobs", "--json")
    assert r.exit_code == 0, r.output
    usage = json.loads(r.stdout)["usage"]  # the CLI shows the same budget day as the page
    assert usage["budget"] == 200_000 and usage["dayStartsAt"].endswith("T00:00:00.000Z")
    assert "tokens today:" in invoke(ws, "sessions", "jobs").output


@pytest.mark.parametrize("action", ["continue", "retry"])
def test_continue_and_retry_refuse_a_running_job(ws: Workspace, action: str) -> None:
    make_session(ws, "s0", turns_for(0))
    conn = _db(ws)
    conn.execute(
        "INSERT INTO sess_runs (id, started_at, status) VALUES ('live1', ?, 'running')",
        (iso_ms(NOW),),
    )
    conn.commit()
    conn.close()
    with gateway([ws], scheduler=False) as (_running, client, _):
        res = client.post("/api/sessions/jobs", json={"action": action, "job": "live"})
        assert res.status_code == 409 and "still running" in res.json()["error"]


def test_start_is_409_while_another_process_holds_the_session_lease(ws: Workspace) -> None:
    from memcore.sessions.lease import Lease
    from memcore.workspace.clock import utcnow

    make_session(ws, "s0", turns_for(0))
    conn = _db(ws)
    lease = Lease(conn)
    lease.acquire(utcnow())  # as a `memcore sessions dream` running elsewhere
    try:
        with gateway([ws], scheduler=False) as (_running, client, _):
            res = client.post("/api/sessions/jobs", json={"action": "start"})
            assert res.status_code == 409 and "a session dream is running" in res.json()["error"]
            assert jobs(conn) == []  # nothing was started
    finally:
        lease.release()
        conn.close()
