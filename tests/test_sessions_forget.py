"""``memcore sessions forget``: a new version without the text, and with --purge the text
gone from every older version, preview, export and journal copy, with a list of what went."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import zlib
from datetime import timedelta

from memcore.judge.llm import ExtractiveLLM
from memcore.sessions.run import execute
from memcore.sessions.settings import project_id
from memcore.sessions.store import ensure_schema, latest
from memcore.sessions.userdb import open_user_db
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, append_turn, make_session, turns_for

LEAK = "blue-green releases on Fridays"  # stands for a detail found to be wrong or private


def everything(ws: Workspace) -> str:
    """Every text memcore keeps: versions, previews, exports, journal copies."""
    parts = []
    for conn in (connect(ws.db_path), open_user_db()):
        parts += [r[0] for r in conn.execute("SELECT text FROM sess_memories")]
        parts += [r[0] or "" for r in conn.execute("SELECT preview FROM sess_memory_sources")]
        with contextlib.suppress(sqlite3.Error):  # the user database has no journal
            parts += [
                zlib.decompress(r[0]).decode()
                for r in conn.execute("SELECT data FROM journal_blobs")
            ]
        conn.close()
    parts += [p.read_text() for p in (ws.memory_dir / "summaries").glob("*.md")]
    return "\n".join(parts)


def test_forget_then_purge(ws: Workspace) -> None:
    path = make_session(ws, "s1", turns_for(1))
    execute(ws, now=NOW, llm=ExtractiveLLM())
    append_turn(path, "We decided to pin Node 22.", "ok", NOW + timedelta(hours=1))
    execute(ws, now=NOW + timedelta(hours=2), llm=ExtractiveLLM())  # v2 of each level
    assert LEAK in everything(ws)
    pid = project_id(ws)

    r = invoke(ws, "sessions", "forget", f"project:{pid}", "--text", LEAK, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["removedLines"] == 1 and out["version"] == f"project:{pid}@v3"
    conn = connect(ws.db_path)
    ensure_schema(conn)
    v3 = latest(conn, "project", pid)
    assert v3 is not None and LEAK not in v3.text and "Node 22" in v3.text
    conn.close()
    assert LEAK not in (ws.memory_dir / "summaries" / "project.md").read_text()
    assert LEAK in everything(ws)  # a correction keeps the older versions as they were
    history = invoke(ws, "history", "--json").output
    assert out["journalRun"] in history

    r = invoke(ws, "sessions", "forget", "session:s1", "--text", LEAK, "--purge")
    assert r.exit_code == 0, r.output
    assert "purged from" in r.output and "session:s1@v1" in r.output
    assert f"project:{pid}@v1" in r.output and "global@v1" in r.output
    assert "left alone: the session transcripts" in r.output
    assert LEAK not in everything(ws)
    assert LEAK in path.read_text()  # the user's own transcript is not memcore's to edit

    bad = invoke(ws, "sessions", "forget", "session:s1", "--text", "never said")
    assert bad.exit_code == 1 and "nothing to forget" in bad.output
    assert invoke(ws, "sessions", "forget", "session:nope", "--text", "x").exit_code == 1


def test_undo_of_a_forget_brings_the_lines_back_in_memory_and_exports(ws: Workspace) -> None:
    """``memcore undo`` of a forget is a correction of its own: the text before it comes back
    as the next version, and the exports follow (an undo of the export files alone would leave
    them saying what the memory no longer says)."""
    make_session(ws, "s1", turns_for(1))
    execute(ws, now=NOW, llm=ExtractiveLLM())
    pid = project_id(ws)
    project_md = ws.memory_dir / "summaries" / "project.md"

    def newest() -> tuple[int, str]:
        conn = connect(ws.db_path)
        ensure_schema(conn)
        cur = latest(conn, "project", pid)
        conn.close()
        assert cur is not None
        return cur.version, cur.text

    v1 = newest()[1]
    assert LEAK in v1
    r = invoke(ws, "sessions", "forget", f"project:{pid}", "--text", LEAK)
    assert r.exit_code == 0, r.output
    assert "undo with: memcore undo " in r.output
    assert LEAK not in project_md.read_text()

    u = invoke(ws, "undo")
    assert u.exit_code == 0, u.output
    assert f"project:{pid}@v3 has the text of project:{pid}@v1" in u.output
    assert newest() == (3, v1)
    assert LEAK in project_md.read_text()  # the export says what the memory says

    out = json.loads(
        invoke(ws, "sessions", "forget", f"project:{pid}", "--text", LEAK, "--json").output
    )
    assert invoke(ws, "undo", out["edit"]).exit_code == 0  # by its id too
    assert newest() == (5, v1)
