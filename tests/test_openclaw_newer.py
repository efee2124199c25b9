"""OpenClaw's newer formats: consolidated sections with promotion and lineage markers,
``Source:`` references and annotations read as entries with metadata; promotion in that format
in an OpenClaw workspace; OpenClaw's SQLite-held recall state read (read-only)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from memcore.promotion import promote
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from memcore.workspace.openclaw_md import concept_tags, importance
from tests.test_openclaw_golden import many_notes, write_oc_store

NOW = datetime(2026, 4, 2, 6, 30, tzinfo=UTC)

CONSOLIDATED = """# Long-Term Memory

## Consolidated Memory (2026-11-20)

<!-- openclaw-memory-lineage:memory:memory/2026-11-01.md:3:3 -->
<!-- openclaw-memory-promotion:memory:memory/2026-11-19.md:4:4 -->
- Billing runs on Postgres 16. Source: memory/2026-11-19.md#L4-L4 <!-- trigger: billing, postgres --> <!-- importance: 8 --> <!-- project: payrail -->
<!-- openclaw-memory-promotion:memory:memory/2026-11-19.md:6:6 -->
- The VPN is wg0. Source: memory/2026-11-19.md#L6-L6 <!-- importance: 5 -->
"""  # noqa: E501


def test_consolidated_entries_are_read_with_their_metadata() -> None:
    a, b = parse(CONSOLIDATED).entries
    assert a.text == "Billing runs on Postgres 16." and b.text == "The VPN is wg0."
    assert a.section == "Consolidated Memory (2026-11-20)"
    assert a.attrs["key"] == "memory:memory/2026-11-19.md:4:4" and a.id_source == "openclaw"
    assert a.openclaw == {
        "source": "memory/2026-11-19.md#L4-L4",
        "trigger": "billing, postgres",
        "importance": "8",
        "project": "payrail",
        "lineage": "memory:memory/2026-11-01.md:3:3",
    }
    assert b.openclaw == {"source": "memory/2026-11-19.md#L6-L6", "importance": "5"}


def openclaw_ws(tmp_path: Path) -> Workspace:
    home = tmp_path / ".openclaw"
    root = home / "workspace"
    (root / "memory").mkdir(parents=True)
    (home / "openclaw.json").write_text("{}\n")
    return Workspace(root)


def test_openclaw_workspace_promotes_in_the_newest_format(tmp_path: Path) -> None:
    ws = openclaw_ws(tmp_path)
    entries = many_notes(ws, 1)
    write_oc_store(ws, entries)
    res = promote.apply(ws, now=NOW)
    assert res.apply["appended"] == 1
    score = res.apply["appliedCandidates"][0]["score"]
    lines = ws.memory_md.read_text().splitlines()
    assert lines[:4] == ["# Long-Term Memory", "", "", "## Consolidated Memory (2026-04-02)"]
    assert lines[5] == f"<!-- openclaw-memory-promotion:{entries[0]['key']} -->"
    assert lines[6] == (
        "- Fact number 0 about the deploy pipeline. Source: memory/2026-04-01.md#L3-L3 "
        f"<!-- trigger: fact, number, deploy --> <!-- importance: {importance(score)} -->"
    )
    (entry,) = parse(ws.memory_md.read_text()).entries
    assert entry.text == "Fact number 0 about the deploy pipeline."
    # OpenClaw's own store write lost (crash): the marker reconciles, nothing appended twice
    write_oc_store(ws, entries)
    again = promote.apply(ws, now=NOW)
    assert again.apply["appended"] == 0 and again.apply["reconciledExisting"] == 1


def test_unmarked_consolidated_bullets_are_recognised(tmp_path: Path) -> None:
    ws = openclaw_ws(tmp_path)
    entries = many_notes(ws, 1)
    write_oc_store(ws, entries)
    text = (
        "# Long-Term Memory\n\n## Consolidated Memory (2026-04-01)\n\n"
        "- Fact number 0 about the deploy pipeline. Source: memory/2026-04-01.md#L3-L3 "
        "<!-- importance: 8 -->\n"
    )
    ws.memory_md.write_text(text)
    res = promote.apply(ws, now=NOW)
    assert res.apply["reconciledExisting"] == 1 and res.apply["appended"] == 0
    assert ws.memory_md.read_text() == text


def test_concept_tags_and_importance() -> None:
    assert concept_tags("memory/2026-04-01.md", "Deploys use the blue/green pipeline, v2.3") == [
        "deploys",
        "use",
        "blue/green",
        "pipeline",
        "v2.3",
    ]
    assert [importance(s) for s in (0.1, 0.56, 0.94, 1.0)] == [3, 6, 9, 10]


def test_sqlite_recall_state_is_read_when_the_json_store_is_absent(tmp_path: Path) -> None:
    ws = openclaw_ws(tmp_path)
    entries = many_notes(ws, 2)
    state = tmp_path / ".openclaw" / "state"
    state.mkdir()
    db = state / "openclaw.sqlite"
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE plugin_state_entries (plugin_id TEXT, namespace TEXT, key TEXT, "
        "value_json TEXT, updated_at INTEGER, PRIMARY KEY (plugin_id, namespace, key))"
    )
    for e in entries:
        conn.execute(
            "INSERT INTO plugin_state_entries VALUES ('memory-core', 'short-term-recall', ?, ?, 0)",
            (e["key"], json.dumps(e)),
        )
    conn.execute(
        "INSERT INTO plugin_state_entries VALUES ('memory-core', 'phase-signals', 'x', '{}', 0)"
    )
    conn.commit()
    conn.close()
    before = db.read_bytes()
    assert not ws.store_path.exists()
    res = promote.preview(ws, now=NOW)
    assert sorted(c.key for c in res.candidates) == sorted(e["key"] for e in entries)
    assert res.store_entries == 2
    applied = promote.apply(ws, now=NOW)
    assert applied.apply["appended"] == 2
    assert db.read_bytes() == before  # OpenClaw's database is never written
    stored = json.loads(ws.store_path.read_text())["entries"]
    assert all(stored[e["key"]]["promotedAt"] for e in entries)


def test_other_workspaces_never_open_nearby_databases(ws: Workspace, tmp_path: Path) -> None:
    entries = many_notes(ws, 1)
    db = ws.root.parent / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE plugin_state_entries (namespace TEXT, key TEXT, value TEXT)")
    conn.execute(
        "INSERT INTO plugin_state_entries VALUES ('short-term-recall', ?, ?)",
        (entries[0]["key"], json.dumps(entries[0])),
    )
    conn.commit()
    conn.close()
    assert promote.preview(ws, now=NOW).candidates == []
