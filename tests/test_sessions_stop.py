"""Stopping a session dream: SIGTERM or a gateway stop records the run ``stopped`` and
releases the lease at once; an answer arriving after the stop is never published; the lease
names its holder's pid and host so a dead holder is cleared without waiting for the expiry."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta
from typing import Any

import pytest

from memcore.errors import LockBusy
from memcore.judge.llm import OpenAICompatibleLLM
from memcore.sessions import due
from memcore.sessions.control import clear_stop_all, stop_all
from memcore.sessions.lease import Lease
from memcore.sessions.run import execute
from memcore.sessions.store import ensure_schema, get_state, latest
from memcore.workspace.clock import parse_iso
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.chat_server import Reply, chat_server
from tests.test_sessions_dream import NOW, make_session, turns_for


def db(ws: Workspace):
    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    return conn


def wait_for(cond: Any, seconds: float = 20.0) -> None:
    end = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def test_sigterm_marks_the_run_stopped_and_releases_the_lease(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(0))
    with chat_server() as srv:
        srv.default = lambda _r: Reply(delay=5)
        ws.config_path.write_text(
            f'[llm]\nbase_url = "{srv.url}"\nmodel = "m"\ntimeout = 60\n'
            "[sessions]\nenabled = true\nmin_sessions = 1\ninterval_days = 1\n"
        )
        env = {**os.environ, "MEMCORE_NOW": NOW.isoformat()}
        proc = subprocess.Popen(
            [sys.executable, "-m", "memcore", "-w", str(ws.root), "sessions", "dream", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: srv.requests)  # the model call is in flight
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
        elapsed = time.monotonic() - started
    assert proc.returncode == 1, err
    assert elapsed < 4.5  # ended the call in flight, did not wait for the 5 s answer
    report = json.loads(out)
    assert report["status"] == "stopped" and "SIGTERM" in report["error"]
    conn = db(ws)
    try:
        row = conn.execute("SELECT status, error FROM sess_runs").fetchone()
        assert row["status"] == "stopped" and "SIGTERM" in row["error"]
        assert conn.execute("SELECT count(*) FROM sess_lease").fetchone()[0] == 0
        assert latest(conn, "session", "s0") is None
        stopped = parse_iso(get_state(conn, "last_stopped_at"))
    finally:
        conn.close()
    assert stopped is not None
    gate = due(ws, stopped + timedelta(minutes=5))
    assert not gate.due and "after a stopped run" in gate.reason
    assert due(ws, stopped + timedelta(hours=2)).due


def test_gateway_stop_ends_a_run_and_a_late_answer_is_not_published(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(0))
    reports: list[dict[str, Any]] = []
    with chat_server() as srv:
        srv.default = lambda _r: Reply(delay=0.5)
        llm = OpenAICompatibleLLM(srv.url, "m", timeout=10)
        t = threading.Thread(target=lambda: reports.append(execute(ws, now=NOW, llm=llm)))
        t.start()
        try:
            wait_for(lambda: srv.requests)
            stop_all([ws.root], "the gateway is stopping")
            t.join(20)
        finally:
            clear_stop_all([ws.root])
    assert reports and reports[0]["status"] == "stopped", reports
    assert "gateway is stopping" in reports[0]["error"]
    conn = db(ws)
    try:  # the answer came back after the stop: nothing from it was published
        assert latest(conn, "session", "s0") is None
        assert conn.execute("SELECT count(*) FROM sess_lease").fetchone()[0] == 0
    finally:
        conn.close()
    report = execute(ws, now=NOW + timedelta(minutes=1), llm=llm_extractive())
    assert report["status"] == "ok" and report["reviewed"] == ["s0"]  # the next run continues


def llm_extractive() -> Any:
    from memcore.judge.llm import ExtractiveLLM

    return ExtractiveLLM()


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_dead_holder_on_this_host_is_cleared_before_expiry(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(0))
    conn = db(ws)
    Lease(conn, holder="crashed", pid=dead_pid()).acquire(NOW)
    conn.execute(
        "INSERT INTO sess_runs (id, started_at, status, trigger, holder) VALUES"
        " ('old', '2026-11-03T11:59:00.000Z', 'running', 'auto', 'crashed')"
    )
    report = execute(ws, now=NOW + timedelta(minutes=1), llm=llm_extractive())
    assert report["status"] == "ok" and report["reviewed"] == ["s0"]
    row = conn.execute("SELECT status, error FROM sess_runs WHERE id='old'").fetchone()
    assert row["status"] == "failed" and "interrupted" in row["error"]
    conn.close()


@pytest.mark.parametrize("where", ["live process here", "another host"])
def test_a_live_or_unknown_holder_still_blocks(ws: Workspace, where: str) -> None:
    make_session(ws, "s0", turns_for(0))
    conn = db(ws)
    if where == "live process here":
        lease = Lease(conn, holder="other", pid=os.getppid())
    else:
        lease = Lease(conn, holder="other", pid=dead_pid(), host=socket.gethostname() + "-x")
    lease.acquire(NOW)
    row = conn.execute("SELECT pid, host FROM sess_lease").fetchone()
    assert (row["pid"], row["host"]) == (lease.pid, lease.host)
    conn.close()
    with pytest.raises(LockBusy, match=f"pid {lease.pid} on {lease.host}"):
        execute(ws, now=NOW + timedelta(minutes=1), llm=llm_extractive())
