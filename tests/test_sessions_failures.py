"""A run whose every model answer is rejected is a failed run: recorded so, non-zero exit with
one line of reason, and retried after the short failure backoff, not after the interval."""

from __future__ import annotations

import json
from datetime import timedelta

from memcore.sessions import FAILURE_BACKOFF, due
from memcore.sessions.store import get_state, last_run
from memcore.workspace.clock import parse_iso
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.chat_server import Reply, chat_server
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, make_session, turns_for


def test_every_answer_rejected_fails_the_run_and_retries_soon(ws: Workspace) -> None:
    for i in range(3):
        make_session(ws, f"s{i}", turns_for(i), start=NOW - timedelta(days=2, hours=i))
    with chat_server() as srv:
        srv.default = lambda request: Reply(content="Sure! Here is the memory you asked for.")
        ws.config_path.write_text(
            f'[llm]\nbase_url = "{srv.url}"\nmodel = "m"\n'
            "[sessions]\nenabled = true\nmin_sessions = 1\ninterval_days = 7\n"
        )
        result = invoke(ws, "sessions", "dream", "--json")
        assert len(srv.requests) == 3
        text = invoke(ws, "sessions", "dream")  # the text form says it in its first line
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["status"] == "failed"
    error = report["error"]
    assert "\n" not in error and "every model answer was rejected (3 of 3)" in error
    assert "not a JSON object" in error
    conn = connect(ws.db_path)
    try:
        run = last_run(conn)
        assert run is not None and run["status"] == "failed" and run["error"] == error
        assert get_state(conn, "last_success_at") is None
        failed_at = get_state(conn, "last_failure_at")
    finally:
        conn.close()
    assert failed_at is not None
    assert text.exit_code == 1 and "every model answer was rejected" in text.output.splitlines()[0]
    t = parse_iso(failed_at)
    assert t is not None
    gate = due(ws, t + timedelta(minutes=5))
    assert not gate.due and "backing off" in gate.reason
    assert due(ws, t + FAILURE_BACKOFF + timedelta(minutes=1)).due  # not a week away
