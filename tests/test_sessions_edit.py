"""``memcore recall … --edit``: a hand correction is a new immutable version (redacted, within
the limit), journaled with the exports, and ``memcore undo ID`` brings the previous text back
as the next version."""

from __future__ import annotations

import json

from memcore.judge.llm import ExtractiveLLM
from memcore.sessions.run import execute
from memcore.sessions.settings import project_id
from memcore.sessions.store import ensure_schema, get_version, latest
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, make_session, turns_for


def test_edit_then_undo(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(1))
    execute(ws, now=NOW, llm=ExtractiveLLM())
    pid = project_id(ws)
    new = "- Deploys are blue-green, any weekday.\n- The vault key is PGPASSWORD=hunter2-Secret-77"
    r = invoke(ws, "recall", "project", pid, "--edit", "--text", new, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["memory"] == f"project:{pid}@v1" and out["version"] == f"project:{pid}@v2"
    conn = connect(ws.db_path)
    ensure_schema(conn)
    v2 = latest(conn, "project", pid)
    assert v2.model == "by hand" and "any weekday" in v2.text
    assert "hunter2-Secret-77" not in v2.text  # redacted like every stored text
    assert get_version(conn, "project", pid, 1).text != v2.text  # v1 stays as it was
    conn.close()
    exported = (ws.memory_dir / "summaries" / "project.md").read_text()
    assert "any weekday" in exported
    history = invoke(ws, "history", "--json").output
    assert out["journalRun"] in history and out["edit"] == out["journalRun"]

    u = invoke(ws, "undo", out["edit"])
    assert u.exit_code == 0, u.output
    assert f"project:{pid}@v3 has the text of project:{pid}@v1" in u.output
    conn = connect(ws.db_path)
    ensure_schema(conn)
    v3 = latest(conn, "project", pid)
    assert v3.version == 3 and v3.text == get_version(conn, "project", pid, 1).text
    conn.close()
    assert "any weekday" not in (ws.memory_dir / "summaries" / "project.md").read_text()
    again = invoke(ws, "undo", out["edit"])
    assert again.exit_code == 1 and "undone already" in again.output


def test_edit_refusals_and_editor(ws: Workspace, monkeypatch) -> None:
    make_session(ws, "s0", turns_for(0))
    execute(ws, now=NOW, llm=ExtractiveLLM())
    too_long = invoke(ws, "recall", "session", "s0", "--edit", "--text", "- x" * 2000)
    assert too_long.exit_code == 1 and "limit" in too_long.output
    assert "[sessions.limits] session" in too_long.output  # the key a user would change
    old = invoke(ws, "recall", "session", "s0", "--edit", "--from", "0")
    assert old.exit_code == 2 and "--edit cannot be combined with --from" in old.output
    lone = invoke(ws, "recall", "global", "--text", "x")
    assert lone.exit_code == 2 and "--text goes with --edit" in lone.output
    nope = invoke(ws, "recall", "session", "nope", "--edit", "--text", "- x")
    assert nope.exit_code == 1 and "no such short memory" in nope.output
    # without --text: $EDITOR gets the current text, what it saves is the new version
    script = ws.root / "ed.sh"
    script.write_text('#!/bin/sh\nprintf -- "- Edited in the editor.\\n" > "$1"\n')
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    monkeypatch.delenv("VISUAL", raising=False)
    r = invoke(ws, "recall", "session", "s0", "--edit")
    assert r.exit_code == 0, r.output
    assert "session:s0@v1 -> session:s0@v2" in r.output and "memcore undo" in r.output
    cur = json.loads(invoke(ws, "recall", "session", "s0", "--json").output)["current"]
    assert cur["text"] == "- Edited in the editor."
    same = invoke(ws, "recall", "session", "s0", "--edit", "--text", "- Edited in the editor.")
    assert same.exit_code == 1 and "unchanged" in same.output
    undo = invoke(ws, "undo")  # no id: the latest run, which is this edit's
    assert undo.exit_code == 0 and "session:s0@v3 has the text of session:s0@v1" in undo.output
