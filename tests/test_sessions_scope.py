"""``memcore sessions dream --session ID | --project ID`` runs one scope."""

from __future__ import annotations

import json
from datetime import timedelta

from memcore.sessions.settings import project_id
from memcore.workspace.core import Workspace
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, make_session, turns_for


def test_session_scope_reads_one_session_and_nothing_above(ws: Workspace) -> None:
    for i in range(3):
        make_session(ws, f"s{i}", turns_for(i), start=NOW - timedelta(days=2, hours=i))
    env = {"MEMCORE_NOW": NOW.isoformat()}
    r = invoke(
        ws, "sessions", "dream", "--session", "s1", "--model", "extractive", "--json", env=env
    )
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["reviewed"] == ["s1"] and report["wrote"] == ["session:s1@v1"]
    assert report["scope"] == {"session": "s1"}
    assert sorted(report["queued"]) == ["s0", "s2"]
    pid = project_id(ws)
    r = invoke(
        ws, "sessions", "dream", "--project", pid, "--model", "extractive", "--json", env=env
    )
    report = json.loads(r.output)
    assert sorted(report["reviewed"]) == ["s0", "s2"]
    assert f"project:{pid}@v1" in report["wrote"]
    assert not any(w.startswith("global") for w in report["wrote"])
    assert any("global: not in this run's scope" in d for d in report["deferred"])
    r = invoke(ws, "sessions", "dream", "--model", "extractive", "--json", env=env)
    assert "global@v1" in json.loads(r.output)["wrote"]  # a full run folds it in


def test_bad_scopes_are_one_line(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(0))
    r = invoke(ws, "sessions", "dream", "--session", "nope", "--model", "extractive")
    assert r.exit_code == 1 and "--session 'nope': no such session" in r.output
    r = invoke(ws, "sessions", "dream", "--project", "other-123456", "--model", "extractive")
    assert r.exit_code == 1 and f"allowed: {project_id(ws)}" in r.output
    r = invoke(ws, "sessions", "dream", "--session", "s0", "--project", "x")
    assert r.exit_code == 2 and "cannot be combined" in r.output
    assert invoke(ws, "sessions", "status", "--json").exit_code == 0
    status = json.loads(invoke(ws, "sessions", "status", "--json").output)
    assert status["lastFailureAt"] is None  # a usage mistake is not a failed run
