"""The exports in memory/summaries/ are written as journaled runs: listed by ``memcore
history`` and put back by ``memcore undo`` like every other change memcore makes."""

from __future__ import annotations

import json
from datetime import timedelta

from memcore.judge.llm import ExtractiveLLM
from memcore.sessions.run import execute
from memcore.workspace.core import Workspace
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, append_turn, make_session, turns_for


def test_exports_are_a_journaled_undoable_run(ws: Workspace) -> None:
    path = make_session(ws, "s0", turns_for(0))
    first = execute(ws, now=NOW, llm=ExtractiveLLM())
    exported = first["exported"]
    assert exported is not None
    assert sorted(exported["files"]) == [
        "memory/summaries/global.md",
        "memory/summaries/project.md",
        "memory/summaries/sessions.md",
    ]
    project_md = ws.memory_dir / "summaries" / "project.md"
    v1 = project_md.read_text()
    append_turn(path, "We decided to pin Node 22 everywhere.", "ok", NOW + timedelta(hours=1))
    second = execute(ws, now=NOW + timedelta(hours=2), llm=ExtractiveLLM())
    assert second["exported"] is not None and "Node 22" in project_md.read_text()
    run_id = second["exported"]["journal_run"]
    runs = json.loads(invoke(ws, "history", "--json").output)
    listed = runs["runs"] if isinstance(runs, dict) else runs
    mine = [r for r in listed if (r.get("runId") or r.get("run_id")) == run_id]
    assert mine and mine[0]["kind"] == "sessions", listed[:2]
    undo = invoke(ws, "undo", "--json")
    assert undo.exit_code == 0, undo.output
    assert json.loads(undo.output)["runId"] == run_id
    assert project_md.read_text() == v1  # the previous export is back
    # nothing new: no export run at all
    third = execute(ws, now=NOW + timedelta(hours=3), llm=ExtractiveLLM())
    assert third["exported"] is not None  # the undone files differ from the database again
    assert "Node 22" in project_md.read_text()
    fourth = execute(ws, now=NOW + timedelta(hours=4), llm=ExtractiveLLM())
    assert fourth["exported"] is None
