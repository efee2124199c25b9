"""A corrupt database never resets the budget or reuses a version number: the ledger lives in
the user database (a corrupt workspace file does not touch it), a ledger lost with a corrupt
user database makes the day count as spent, version numbers continue past those the exports
name, and ``sessions status`` says where the old file is and how to restore it."""

from __future__ import annotations

import json
from datetime import timedelta

from memcore.judge.llm import ExtractiveLLM, OpenAICompatibleLLM
from memcore.sessions import due, status
from memcore.sessions.run import execute
from memcore.sessions.settings import user_dir
from memcore.sessions.store import ensure_schema, latest
from memcore.sessions.userdb import USER_DB_NAME
from memcore.workspace import db
from memcore.workspace.core import Workspace
from tests.chat_server import chat_server
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, append_turn, make_session, turns_for


def spoil(path) -> None:
    path.write_bytes(b"not a database at all " * 200)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.unlink()
    db._checked.clear()  # as a new process would see it


def test_corrupt_workspace_database_keeps_budget_and_version_numbers(ws: Workspace) -> None:
    ws.config_path.write_text("[sessions]\nenabled = true\nmin_sessions = 1\n")
    path = make_session(ws, "s0", turns_for(0))
    with chat_server() as srv:
        llm = OpenAICompatibleLLM(srv.url, "m", timeout=10)
        first = execute(ws, now=NOW, llm=llm)
        assert first["status"] == "ok"
        append_turn(path, "We decided to pin Node 22.", "ok", NOW + timedelta(minutes=1))
        assert execute(ws, now=NOW + timedelta(minutes=2), llm=llm)["status"] == "ok"
    spent = status(ws, NOW)["budget"]["used"]
    assert spent > 0
    spoil(ws.db_path)
    out = status(ws, NOW + timedelta(minutes=3))
    assert out["budget"]["used"] == spent  # not reset: the ledger is the user's
    (q,) = out["database"]
    assert q["database"] == str(ws.db_path) and ".corrupt-" in q["aside"]
    assert f"copy it over {ws.db_path}" in q["restore"]
    text = invoke(ws, "sessions", "status").output
    assert "was corrupt" in text and "to restore it" in text and q["aside"] in text
    # everything was lost: the session is read again, but v1 and v2 stay taken
    report = execute(ws, now=NOW + timedelta(minutes=4), llm=ExtractiveLLM())
    assert report["status"] == "ok" and "session:s0@v3" in report["wrote"], report
    conn = db.connect(ws.db_path)
    ensure_schema(conn)
    assert latest(conn, "session", "s0").version == 3
    conn.close()


def test_a_lost_user_ledger_counts_the_day_as_spent(ws: Workspace) -> None:
    ws.config_path.write_text("[sessions]\nenabled = true\nmin_sessions = 1\n")
    make_session(ws, "s0", turns_for(0))
    with chat_server() as srv:
        assert (
            execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=10))["status"]
            == "ok"
        )
    spoil(user_dir() / USER_DB_NAME)
    out = status(ws, NOW + timedelta(minutes=1))
    budget = out["budget"]
    assert budget["ledger_lost"] is True and budget["used"] == budget["budget"]
    assert any(q["database"].endswith(USER_DB_NAME) for q in out["database"])
    make_session(ws, "s1", turns_for(1))
    with chat_server() as srv:
        report = execute(
            ws, now=NOW + timedelta(minutes=2), llm=OpenAICompatibleLLM(srv.url, "m", timeout=10)
        )
        assert srv.bodies == []  # not one call on a day whose spending is unknown
    assert report["status"] == "budget" and "counts as spent" in report["error"]
    assert not due(ws, NOW + timedelta(hours=2)).due
    # the next UTC day starts afresh
    assert status(ws, NOW + timedelta(days=1))["budget"]["used"] == 0
    json.dumps(out)  # the status stays plain JSON


def _spoil_table(path, table: str) -> None:
    """Overwrite the root page of ``table`` (a small table: all its rows) with garbage, so a
    salvage loses that table and keeps the others: the partial loss real disks give."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name=?", (table,)).fetchone()
    conn.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * size : root * size] = b"\x5a" * size
    path.write_bytes(bytes(data))
    db._checked.clear()
    stamp = path.with_name(path.name + ".checked")
    if stamp.exists():
        stamp.unlink()


def test_memories_lost_with_a_corrupt_database_are_made_again(ws: Workspace) -> None:
    """The memories went with the corrupt part while the review progress came across: the
    sessions whose memory is gone are read again (nothing else is), instead of staying
    without a memory for good because nothing in them looks new."""
    make_session(ws, "s0", turns_for(0))
    make_session(ws, "s1", turns_for(1))
    assert execute(ws, now=NOW, llm=ExtractiveLLM())["status"] == "ok"
    _spoil_table(ws.db_path, "sess_memories")
    out = status(ws, NOW + timedelta(minutes=1))
    (q,) = out["database"]
    assert "sess_memories" in json.dumps(q) and "sess_seen" not in json.dumps(q["lost"])
    report = execute(ws, now=NOW + timedelta(minutes=2), llm=ExtractiveLLM())
    assert report["status"] == "ok", report
    assert {"session:s0@v2", "session:s1@v2"} <= set(report["wrote"]), report
    conn = db.connect(ws.db_path)
    ensure_schema(conn)
    assert latest(conn, "session", "s0").version == 2  # past v1, which the exports named
    conn.close()
    again = execute(ws, now=NOW + timedelta(minutes=3), llm=ExtractiveLLM())
    assert again["wrote"] == []  # once: the next run has nothing new
