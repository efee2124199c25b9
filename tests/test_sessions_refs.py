"""Stable message references: repairing a broken line or rewriting a transcript in place does
not shift them, a repaired or changed message is read again by the next dream, and a database
written with position references is migrated without losing a memory."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from memcore.judge.llm import ExtractiveLLM
from memcore.sessions import status
from memcore.sessions.recall_api import recall
from memcore.sessions.refs import resolve
from memcore.sessions.run import execute
from memcore.sessions.store import ensure_schema, latest, version_sources
from memcore.sessions.transcripts import read_transcript
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.test_sessions_dream import NOW, CountingLLM

T0 = "2026-11-01T10:00:00Z"


def plain(role: str, content: str, minute: int) -> str:
    return json.dumps({"role": role, "content": content, "ts": f"2026-11-01T10:{minute:02d}:00Z"})


def write_lines(ws: Workspace, sid: str, lines: list[str]) -> Path:
    path = ws.root / "sessions" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def db(ws: Workspace):
    conn = connect(ws.db_path)
    ensure_schema(conn)
    return conn


def session_sources(ws: Workspace, sid: str) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    conn = db(ws)
    try:
        v = latest(conn, "session", sid)
        assert v is not None
        return [(s.ref, s.messages) for s in version_sources(conn, v.id) if s.kind == "messages"]
    finally:
        conn.close()


BROKEN = '{"role": "user", "content": "We decided to keep the ledger in Postg'
REPAIRED = plain("user", "We decided to keep the ledger in Postgres 16, never MySQL.", 0)
GOOD = [
    plain("assistant", "Noted, Postgres it is.", 1),
    plain("user", "Let's always run migrations with sqitch.", 2),
    plain("assistant", "Will do.", 3),
] + [plain("user" if i % 2 == 0 else "assistant", f"Thanks, step {i}.", 4 + i) for i in range(8)]


def test_repairing_a_broken_line_keeps_references_and_reads_the_repaired_message(
    ws: Workspace,
) -> None:
    path = write_lines(ws, "s0", [*GOOD[:1], BROKEN, *GOOD[1:]])
    report = execute(ws, now=NOW, llm=CountingLLM())
    assert report["status"] == "ok"
    assert status(ws, NOW)["broken_lines"] == [{"session": "s0", "file": str(path), "lines": [2]}]
    [(src_ref, msgs)] = session_sources(ws, "s0")
    old_items = recall(ws, {"reference": src_ref})["items"]
    old_text = {i["ref"]: i["text"] for i in old_items}
    assert [i["index"] for i in old_items if i["text"].startswith("Let's always")] == [1]

    path.write_text("\n".join([*GOOD[:1], REPAIRED, *GOOD[1:]]) + "\n", encoding="utf-8")
    after = read_transcript(path)
    assert status(ws, NOW)["broken_lines"] == []
    # every old reference still names the same message, though positions moved by one
    for ref, digest in msgs:
        found = resolve(after.messages, ref, digest)
        assert found.message is not None and found.message.text == old_text[ref], ref
        assert found.status == ("same" if ref.startswith("@0:") else "moved")
    assert resolve(after.messages, msgs[1][0]).message.index == 2  # "Let's always", moved
    again = recall(ws, {"reference": src_ref})["items"]  # the range now holds the repaired one
    assert [i["text"] for i in again] == [old_items[0]["text"], after.messages[1].text] + [
        i["text"] for i in old_items[1:]
    ]
    states = recall(ws, {"memory": "sources", "reference": "session:s0@v1"})["items"][0]
    assert {m["status"] for m in states["messages"]} == {"same", "moved"}

    # the repaired message is unread: the next dream reads it, and only it
    assert status(ws, NOW)["candidates"] == ["s0"]
    llm = CountingLLM()
    nxt = execute(ws, now=NOW + timedelta(hours=1), llm=llm)
    assert nxt["reviewed"] == ["s0"], nxt
    [read] = nxt["read"]
    assert (read["from"], read["messages"], read["changed"]) == (1, 1, 0), read
    conn = db(ws)
    text = latest(conn, "session", "s0").text
    conn.close()
    assert "never MySQL" in text
    assert execute(ws, now=NOW + timedelta(hours=2), llm=CountingLLM())["read"] == []


def cc(uid: str, kind: str, text: str, minute: int, stop: str | None = None) -> dict:
    msg: dict = {"role": kind, "content": [{"type": "text", "text": text}]}
    if stop:
        msg["stop_reason"] = stop
    return {
        "type": kind,
        "uuid": uid,
        "timestamp": f"2026-11-01T10:{minute:02d}:00Z",
        "message": msg,
    }


def test_claude_code_uuid_references_survive_a_rewrite_and_a_changed_message_is_reread(
    ws: Workspace,
) -> None:
    recs = [
        cc("u-1", "user", "We decided to deploy with blue-green releases.", 0),
        cc("a-1", "assistant", "Understood.", 1, "end_turn"),
        cc("u-2", "user", "Never push on Fridays.", 2),
        cc("a-2", "assistant", "Noted.", 3, "end_turn"),
    ]
    path = ws.root / "sessions" / "cc.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    execute(ws, now=NOW, llm=ExtractiveLLM())
    [(src_ref, msgs)] = session_sources(ws, "cc")
    assert src_ref == "session:cc#u-1..a-2" and [r for r, _ in msgs] == ["u-1", "a-1", "u-2", "a-2"]

    # rewritten in place: a summary record on top, other spacing, same messages
    head = json.dumps({"type": "summary", "summary": "Deploy rules"})
    body = "".join(json.dumps(r, indent=None, separators=(", ", ": ")) + "\n" for r in recs)
    path.write_text(head + "\n" + body, encoding="utf-8")
    assert status(ws, NOW)["candidates"] == []
    assert execute(ws, now=NOW + timedelta(hours=1), llm=CountingLLM())["read"] == []
    items = recall(ws, {"reference": src_ref})["items"]
    assert [i["ref"] for i in items] == ["u-1", "a-1", "u-2", "a-2"]

    # one message edited in place, same uuid: read again, and said so
    recs[2] = cc("u-2", "user", "Never push on Fridays; we always tag releases first.", 2)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    states = recall(ws, {"memory": "sources", "reference": "session:cc@v1"})["items"][0]
    assert [m["status"] for m in states["messages"]] == ["same", "same", "changed", "same"]
    llm = CountingLLM()
    nxt = execute(ws, now=NOW + timedelta(hours=2), llm=llm)
    [read] = nxt["read"]
    assert (read["from"], read["messages"], read["changed"]) == (2, 1, 1), read
    assert llm.tasks[0] == "session"


def test_a_database_with_position_references_is_migrated_without_losing_memories(
    ws: Workspace,
) -> None:
    write_lines(ws, "s0", [plain("user", "We decided to use ruff.", 0), *GOOD[:3]])
    execute(ws, now=NOW, llm=ExtractiveLLM())
    conn = db(ws)
    before = latest(conn, "session", "s0")
    # what an older memcore left: positions only, no read set, no migration mark
    with conn:
        conn.execute("DELETE FROM sess_seen")
        conn.execute("DELETE FROM sess_state WHERE key='message_refs'")
        conn.execute(
            "UPDATE sess_memory_sources SET messages=NULL, ref='session:s0#0-3'"
            " WHERE kind='messages'"
        )
    conn.close()

    llm = CountingLLM()
    report = execute(ws, now=NOW + timedelta(hours=1), llm=llm)
    assert report["status"] == "ok" and llm.calls == 0 and report["read"] == []
    conn = db(ws)
    now = latest(conn, "session", "s0")
    assert now is not None and (now.version, now.text) == (before.version, before.text)
    [src] = [s for s in version_sources(conn, now.id) if s.kind == "messages"]
    assert len(src.messages) == 4 and src.messages[0][0].startswith("@0:")
    assert src.ref == f"session:s0#{src.messages[0][0]}..{src.messages[-1][0]}"
    assert conn.execute("SELECT count(*) FROM sess_seen").fetchone()[0] == 4
    conn.close()
    # the old reference still reads, by position; each message carries its stable ref
    items = recall(ws, {"reference": "session:s0#0-3"})["items"]
    assert [i["ref"] for i in items] == [r for r, _ in src.messages]
