"""Leaving sharing: a session made independent, deleted or unreadable stops the project and
global memories built from it being injected by ``memcore context`` until the next run
rebuilds them without it; ``sessions status`` says so; independent sessions' memories are
never exported where ``memory search`` finds them."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memcore.judge.llm import ExtractiveLLM
from memcore.sessions import context_block, status
from memcore.sessions.run import execute
from memcore.sessions.settings import project_id
from memcore.sessions.store import ensure_schema, latest
from memcore.sessions.userdb import open_user_db
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, make_session, turns_for

LEAVER = "blue-green"  # s1's decision (turns_for(1))


def three_sessions(ws: Workspace) -> None:
    for i in range(3):
        make_session(ws, f"s{i}", turns_for(i), start=NOW - timedelta(days=2, hours=i))
    report = execute(ws, now=NOW, llm=ExtractiveLLM())
    assert report["status"] == "ok"
    block = context_block(ws)
    assert block["mode"] == "full" and LEAVER in block["text"] and block["withheld"] == []


def leave(ws: Workspace, how: str) -> None:
    path = ws.root / "sessions" / "s1.jsonl"
    if how == "independent":
        ws.config_path.write_text('[sessions]\nindependent = ["s1"]\n')
    elif how == "missing":
        path.unlink()
    else:
        path.write_bytes(b"\x00\x01 not a transcript")


@pytest.mark.parametrize("how", ["independent", "missing", "unreadable"])
def test_a_session_that_leaves_is_withheld_until_the_rebuild(ws: Workspace, how: str) -> None:
    three_sessions(ws)
    leave(ws, how)
    block = context_block(ws)
    held = {w["memory"].split("@")[0]: w["because"] for w in block["withheld"]}
    assert set(held) == {f"project:{project_id(ws)}", "global"}
    assert held[f"project:{project_id(ws)}"] == [{"session": "s1", "why": how}]
    assert LEAVER not in block["text"] and "Postgres 16" not in block["text"]
    out = status(ws, NOW)
    assert out["withheld"]["project"] == [{"session": "s1", "why": how}]
    text = invoke(ws, "sessions", "status").output
    assert f"left sharing: s1 ({how})" in text and "not injected" in text
    cli = invoke(ws, "context")
    assert "withheld project:" in cli.output and LEAVER not in cli.output
    if how == "missing":  # the MCP context tool withholds the same
        from tests.test_mcp import call_all, payload

        _, (res,) = call_all(ws, [("context", {"model_window": 200_000})])
        mcp_block = payload(res)
        assert LEAVER not in mcp_block["text"] and len(mcp_block["withheld"]) == 2

    report = execute(ws, now=NOW + timedelta(minutes=5), llm=ExtractiveLLM())
    assert report["status"] == "ok", report
    memories = {r["memory"] for r in report["rebuilt"]}
    assert memories == {f"project:{project_id(ws)}", "global"}, report
    conn = connect(ws.db_path)
    ensure_schema(conn)
    project = latest(conn, "project", project_id(ws))
    conn.close()
    assert project is not None and project.version == 2
    assert LEAVER not in project.text and "Postgres 16" in project.text
    user = open_user_db()
    g = latest(user, "global", "")
    user.close()
    assert g is not None and LEAVER not in g.text and "Postgres 16" in g.text
    block = context_block(ws)
    assert block["withheld"] == [] and block["mode"] == "full"
    assert project.ref in block["versions"] and g.ref in block["versions"]
    assert LEAVER not in block["text"]
    assert status(ws, NOW)["withheld"] == {"project": [], "global": []}


def test_independent_memories_are_not_exported_where_search_finds_them(ws: Workspace) -> None:
    make_session(
        ws,
        "side",
        [("We decided to name the cat Quetzal.", "ok")],
        head="---\nindependent: true\n---\n",
    )
    make_session(ws, "s0", turns_for(0))
    assert execute(ws, now=NOW, llm=ExtractiveLLM())["status"] == "ok"
    conn = connect(ws.db_path)
    ensure_schema(conn)
    assert latest(conn, "session", "side") is not None  # it has its own memory
    conn.close()
    exported = "".join(p.read_text() for p in (ws.memory_dir / "summaries").glob("*.md"))
    assert "Quetzal" not in exported and "1 independent session(s)" in exported
    result = invoke(ws, "memory", "search", "Quetzal", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["results"] == []
    shared = json.loads(invoke(ws, "memory", "search", "Postgres", "--json").output)
    assert any("summaries" in json.dumps(r) for r in shared["results"])  # exports are searched
    assert "Quetzal" in invoke(ws, "recall", "session", "side").output  # asked for: read


def test_a_session_that_comes_back_before_the_rebuild_is_shared_again(ws: Workspace) -> None:
    """A transcript moved away and back (or made independent and shared again) before any run:
    the project and global memories still hold only what shared sessions said, so they are
    injected again, and the global one is not withheld for good waiting on a rebuild that no
    run has a reason to make."""
    three_sessions(ws)
    path = ws.root / "sessions" / "s1.jsonl"
    kept = path.read_bytes()
    path.unlink()
    assert len(context_block(ws)["withheld"]) == 2
    path.write_bytes(kept)
    block = context_block(ws)
    assert block["withheld"] == [] and LEAVER in block["text"], block
    assert status(ws, NOW)["withheld"] == {"project": [], "global": []}

    path.unlink()  # gone while a run is not looking, back before the run
    assert len(context_block(ws)["withheld"]) == 2
    path.write_bytes(kept)
    report = execute(ws, now=NOW + timedelta(minutes=5), llm=ExtractiveLLM())
    assert report["status"] == "ok" and report["rebuilt"] == [], report
    assert context_block(ws)["withheld"] == []
