"""The reading side: recall API, context block, health report, CLI commands."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memcore.errors import InputError
from memcore.sessions.context import context_block
from memcore.sessions.health import health_report
from memcore.sessions.recall_api import recall
from memcore.sessions.run import execute
from memcore.sessions.settings import project_id
from memcore.workspace.core import Workspace
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, CountingLLM, append_turn, make_session, turns_for


@pytest.fixture
def dreamed(ws: Workspace) -> Workspace:
    for i in range(3):
        make_session(ws, f"s{i}", turns_for(i), start=NOW - timedelta(days=2, hours=i))
    execute(ws, now=NOW, llm=CountingLLM())
    return ws


def test_recall_levels(dreamed: Workspace) -> None:
    ws = dreamed
    pid = project_id(ws)
    g = recall(ws, {"memory": "global"})
    assert g["current"]["ref"] == "global@v1" and "Postgres" in g["current"]["text"]
    projects = recall(ws, {"memory": "projects"})
    assert projects["items"][0]["project"] == pid and projects["items"][0]["current"]
    p = recall(ws, {"memory": "project", "project": pid})
    assert p["current"]["ref"] == f"project:{pid}@v1"
    sessions = recall(ws, {"memory": "sessions"})
    assert [i["session"] for i in sessions["items"]] == ["s0", "s1", "s2"]
    s = recall(ws, {"memory": "session", "session": "s0"})
    assert s["current"]["ref"] == "session:s0@v1" and s["versions"][0]["messages"] == ["0-3"]
    msgs = recall(ws, {"session": "s0", "from": 1, "to": 2})
    assert [m["index"] for m in msgs["items"]] == [1, 2] and msgs["next_cursor"] is None


def test_recall_sources_walk_down_the_hierarchy(dreamed: Workspace) -> None:
    ws = dreamed
    g = recall(ws, {"memory": "sources", "reference": "global@v1"})
    proj_ref = g["items"][0]["ref"]
    assert proj_ref == f"project:{project_id(ws)}@v1"
    p = recall(ws, {"memory": "sources", "reference": proj_ref})
    session_refs = sorted(i["ref"] for i in p["items"])
    assert session_refs == ["session:s0@v1", "session:s1@v1", "session:s2@v1"]
    s = recall(ws, {"memory": "sources", "reference": "session:s0@v1"})
    ref = s["items"][0]["ref"]
    assert ref.startswith("session:s0#@0:") and ".." in ref  # first..last message, stable
    m = recall(ws, {"reference": ref})
    assert len(m["items"]) == 4 and m["items"][0]["role"] == "user"
    old = recall(ws, {"reference": "session:s0#0-3"})  # positions (old references) still read
    assert [i["ref"] for i in old["items"]] == [i["ref"] for i in m["items"]]


def test_old_versions_stay_readable(dreamed: Workspace) -> None:
    ws = dreamed
    append_turn(
        ws.root / "sessions" / "s0.jsonl", "We decided to adopt mypy strict mode.", "ok", NOW
    )
    execute(ws, now=NOW + timedelta(hours=1), llm=CountingLLM())
    cur = recall(ws, {"memory": "session", "session": "s0"})
    old = recall(ws, {"memory": "session", "session": "s0", "version": 1})
    assert cur["current"]["version"] == 2 and "mypy" in cur["current"]["text"]
    assert old["current"]["version"] == 1 and "mypy" not in old["current"]["text"]
    src = recall(ws, {"memory": "sources", "reference": "session:s0@v2"})
    assert src["items"][0]["kind"] == "previous" and src["items"][0]["ref"] == "session:s0@v1"


def test_recall_paging_of_long_messages(ws: Workspace) -> None:
    make_session(ws, "big", [("x" * 20_000, "short answer")])
    execute(ws, now=NOW, llm=CountingLLM())
    first = recall(ws, {"session": "big", "from": 0, "to": 1})
    texts = [first["items"][0]["text"]]
    cursor = first["next_cursor"]
    assert cursor == "0:8000"
    pages = 1
    while cursor:
        page = recall(ws, {"session": "big", "from": 0, "to": 1, "cursor": cursor})
        texts += [i["text"] for i in page["items"]]
        cursor = page["next_cursor"]
        pages += 1
    assert "".join(texts) == "x" * 20_000 + "short answer"
    assert pages == 3


def test_recall_errors(dreamed: Workspace) -> None:
    for args, frag in [
        ({"memory": "nope"}, "memory must be one of"),
        ({"memory": "session", "session": "missing"}, "unknown session"),
        ({"memory": "project", "project": "other-123456"}, "unknown project"),
        ({"memory": "sources", "reference": "bogus"}, "not a memory reference"),
        ({"memory": "sources", "reference": "global@v9"}, "does not exist"),
        ({"session": "s0", "from": "x"}, "must be an integer"),
        ({"memory": "global", "version": 7}, "does not exist"),
    ]:
        with pytest.raises(InputError, match=frag):
            recall(dreamed, args)


def test_context_block_modes(dreamed: Workspace) -> None:
    full = context_block(dreamed, model_window=200_000)
    assert full["mode"] == "full" and full["budget"] == 9000
    assert full["text"].startswith('<memcore-memory versions="global@v1 project:')
    assert "Postgres" in full["text"] and full["tokens"] <= 9000
    pointers = context_block(dreamed, model_window=3000)
    assert pointers["mode"] == "pointers" and "Postgres" not in pointers["text"]
    assert '"memory": "global"' in pointers["text"] and pointers["tokens"] <= 300
    none = context_block(dreamed, model_window=100)
    assert none["mode"] == "none" and none["text"] == ""


def test_context_block_empty_without_memories(ws: Workspace) -> None:
    assert context_block(ws)["mode"] == "none"


def test_health_report(ws: Workspace) -> None:
    (ws.memory_dir / "deploy.md").write_text("# Deploy\n")
    (ws.memory_dir / "orphan.md").write_text("# Orphan\n")
    (ws.memory_dir / "2026-11-01.md").write_text("daily\n")
    (ws.memory_dir / "summaries").mkdir()
    (ws.memory_dir / "summaries" / "project.md").write_text("generated\n")
    ws.memory_md.write_text(
        "# Long-Term Memory\n\n## Notes\n"
        "- See [deploy](memory/deploy.md) and [gone](memory/gone.md#x) and [web](https://example.com).\n"
        '<!-- memcore:entry id="checked1" verified="2026-11-01" -->\n- A verified entry.\n'
        "- An unverified entry.\n"
    )
    ws.config_path.write_text("[sessions]\nmemory_load_budget = 100\n")
    rep = health_report(ws)
    assert rep["missing_links"] == ["memory/gone.md"]
    assert rep["unlinked_topic_files"] == ["memory/orphan.md"]
    assert rep["memory_md"]["over_budget"] is True and rep["memory_md"]["budget_chars"] == 100
    texts = [e["text"] for e in rep["unverified_entries"]]
    assert "A verified entry." not in texts and "An unverified entry." in texts
    compact = health_report(ws, compact=True)
    assert compact["missing_links"] == ["memory/gone.md"] and compact["memory_md_over_budget"]


def test_health_ranks_unverified_by_ledger_hits(ws: Workspace) -> None:
    from memcore.workspace.db import connect
    from memcore.workspace.markdown import text_entry_id

    ws.memory_md.write_text(
        "# Long-Term Memory\n\n## Notes\n- Rarely used fact.\n- Often used fact.\n"
    )
    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    conn.execute("CREATE TABLE dream_ledger (id TEXT PRIMARY KEY, access_count INTEGER)")
    from memcore.workspace.entries import parse

    ids = {e.text: e.id for e in parse(ws.memory_md.read_text()).entries}
    assert ids["Often used fact."] in (text_entry_id("Often used fact."), ids["Often used fact."])
    conn.execute(
        "INSERT INTO dream_ledger VALUES (?, 9), (?, 1)",
        (ids["Often used fact."], ids["Rarely used fact."]),
    )
    conn.close()
    rep = health_report(ws)
    assert [e["text"] for e in rep["unverified_entries"]] == [
        "Often used fact.",
        "Rarely used fact.",
    ]
    assert rep["unverified_entries"][0]["hits"] == 9 and rep["hits_source"] == "entry ledger"


def run_cli(ws: Workspace, *args: str) -> tuple[int, str, str]:
    res = invoke(ws, *args)
    return res.exit_code, res.stdout, res.stderr


def test_cli_dream_status_recall_context(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(0))
    code, out, _ = run_cli(ws, "sessions", "dream", "--json")
    assert code == 0 and json.loads(out)["status"] == "ok"
    code, out, _ = run_cli(ws, "sessions", "dream")
    assert code == 0 and "calls: 0" in out
    code, out, _ = run_cli(ws, "sessions", "status", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["lastRun"]["report"]["status"] == "ok" and "health" in doc
    assert doc["lastRun"]["report"]["runId"] and "memoryMd" in doc["health"]  # camelCase keys
    code, out, _ = run_cli(ws, "sessions", "status")
    assert "last report:" in out and "health:" in out
    code, out, _ = run_cli(ws, "recall", "global")
    assert code == 0 and "Postgres" in out
    code, out, _ = run_cli(ws, "recall", "session", "s0", "--from", "0", "--to", "1", "--json")
    assert [m["index"] for m in json.loads(out)["items"]] == [0, 1]
    code, out, _ = run_cli(ws, "recall", "sources", "session:s0@v1")
    assert "session:s0#@0:" in out
    code, out, err = run_cli(ws, "recall", "sources", "nonsense")
    assert code == 1 and err.startswith("Error: ") and "not a memory reference" in err
    code, out, _ = run_cli(ws, "context", "--model-window", "200000")
    assert code == 0 and out.startswith("<memcore-memory")


def test_cli_lease_busy_exits_75(ws: Workspace) -> None:
    from memcore.sessions.lease import Lease
    from memcore.sessions.store import ensure_schema
    from memcore.workspace.clock import utcnow
    from memcore.workspace.db import connect

    make_session(ws, "s0", turns_for(0))
    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    Lease(conn, holder="other").acquire(utcnow())
    code, _, err = run_cli(ws, "sessions", "dream")
    assert code == 75 and "lease" in err


def test_recall_range_reference_pages_with_message_cursor(ws: Workspace) -> None:
    make_session(ws, "big", [("y" * 9_000, "short answer")])
    execute(ws, now=NOW, llm=CountingLLM())
    first = recall(ws, {"memory": "sources", "reference": "session:big#0-1"})
    assert first["next_cursor"] == "0:8000"
    rest = recall(ws, {"memory": "sources", "reference": "session:big#0-1", "cursor": "0:8000"})
    assert rest["items"][0]["text"] == "y" * 1000 and rest["items"][1]["text"] == "short answer"
    assert rest["next_cursor"] is None
