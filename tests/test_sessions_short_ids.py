"""A session is named by its id or by an unambiguous start of it or of its last part: Claude
Code's sessions under ``~/.claude/projects`` have ids like ``-home-me-app/5b7c2e0a-…`` (a
leading dash a shell option parser takes for an option), and a user has the uuid (or its
first characters, as the examples show) at hand."""

from __future__ import annotations

import json

from memcore.judge.llm import ExtractiveLLM
from memcore.sessions.run import execute
from memcore.workspace.core import Workspace
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, make_session, turns_for

UUID = "5b7c2e0a-8d41-4c1e-9f3a-2d6b1a9e7c55"
LONG = f"-home-me-app/{UUID}"


def test_a_session_by_its_uuid_or_a_unique_start(ws: Workspace) -> None:
    make_session(ws, LONG, turns_for(0))
    make_session(ws, "-home-me-app/5b7c9999-0000-4000-8000-000000000000", turns_for(1))
    make_session(ws, "2026-11-20-ledger", turns_for(2))
    assert execute(ws, now=NOW, llm=ExtractiveLLM())["status"] == "ok"

    full = invoke(ws, "recall", "session", UUID, "--json")
    assert full.exit_code == 0, full.output
    assert json.loads(full.output)["session"] == LONG
    for name in (UUID[:8], "5b7c2e0a", "2026-11-20"):
        r = invoke(ws, "recall", "session", name, "--from", "0", "--to", "1", "--json")
        assert r.exit_code == 0, (name, r.output)
    ambiguous = invoke(ws, "recall", "session", "5b7c")
    assert ambiguous.exit_code == 1
    assert "'5b7c' names 2 sessions" in ambiguous.output and LONG in ambiguous.output
    unknown = invoke(ws, "recall", "session", "zzz")
    assert unknown.exit_code == 1 and "unknown session 'zzz'" in unknown.output

    decisions = invoke(ws, "recall", "decisions", "--session", UUID[:8], "--json")
    assert decisions.exit_code == 0, decisions.output
    assert {d["session"] for d in json.loads(decisions.output)["items"]} <= {LONG}
    edited = invoke(ws, "recall", "session", UUID[:8], "--edit", "--text", "- Edited by hand.")
    assert edited.exit_code == 0, edited.output
    assert f"session:{LONG}@v2" in edited.output
    forgot = invoke(ws, "sessions", "forget", f"session:{UUID}", "--text", "Edited")
    assert forgot.exit_code == 0 and f"session:{LONG}@v3" in forgot.output
    scoped = invoke(ws, "sessions", "dream", "--session", UUID, "--model", "extractive", "--json")
    assert scoped.exit_code == 0, scoped.output
    assert json.loads(scoped.output)["scope"] == {"session": LONG}
