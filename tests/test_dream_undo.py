"""``dream undo``: exact restores, restores after unrelated edits, refusals that change nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memcore.dream import cycle, journal, ledger
from memcore.dream.entries import parse
from memcore.dream.setmeta import set_entry
from memcore.dream.undo import UndoConflict, undo_run
from memcore.errors import InputError
from memcore.workspace import Workspace

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
LATER = NOW + timedelta(hours=1)
STEPS = ("merge", "reconcile", "decay", "forget")

BODY = (
    "# Long-Term Memory\n\n"
    "## A\n\n"
    "- Keep this one.\n"
    "- The cache TTL is 300 seconds.\n"
    "- The cache TTL is 300 seconds!\n"
    "- Another keeper line.\n\n"
    "## B\n\n"
    '<!-- memcore:entry id="old" type="session_state" created="2025-01-01" -->\n'
    "- Debugging the login test.\n\n"
    "Closing paragraph.\n"
)


def run(ws: Workspace, now: datetime = NOW) -> dict:
    return cycle.run_cycle(ws, now=now, mode="auto", steps=STEPS)


def test_undo_restores_the_file_byte_for_byte_and_metadata(ws: Workspace) -> None:
    ws.memory_md.write_text(BODY, encoding="utf-8")
    res = run(ws)
    assert res["merged"] == 1 and res["forgotten"] == 1
    after = ws.memory_md.read_text(encoding="utf-8")
    assert "Debugging" not in after and "seconds!" not in after
    out = undo_run(ws, now=LATER)
    assert out["runId"] == res["runId"] and out["exact"] and out["restored"] == 2
    assert ws.memory_md.read_text(encoding="utf-8") == BODY
    assert "Debugging" not in ws.archive_path.read_text(encoding="utf-8")
    with ledger.connect(ws) as conn:
        runs = journal.runs(conn)
        assert runs[0]["kind"] == "undo" and runs[0]["undoOf"] == res["runId"]
        assert runs[1]["status"] == "undone" and runs[1]["undoneBy"] == out["undoRunId"]
        metas = ledger.load_rows(conn, [e.id for e in parse(BODY).entries])
    keeper = [m for m in metas.values() if m.importance > 0.5]
    assert keeper == []  # the keeper's +0.05 is gone again
    with pytest.raises(InputError, match="already undone"):
        undo_run(ws, res["runId"], now=LATER)


def test_undo_after_an_unrelated_edit_puts_entries_back_in_place(ws: Workspace) -> None:
    ws.memory_md.write_text(BODY, encoding="utf-8")
    run(ws)
    edited = ws.memory_md.read_text(encoding="utf-8").replace(
        "- Another keeper line.\n", "- Another keeper line.\n- A human added this later.\n"
    )
    ws.memory_md.write_text(edited, encoding="utf-8")
    out = undo_run(ws, now=LATER)
    assert not out["exact"]
    text = ws.memory_md.read_text(encoding="utf-8")
    assert text == BODY.replace(
        "- Another keeper line.\n", "- Another keeper line.\n- A human added this later.\n"
    )


def test_undo_refuses_when_a_later_edit_conflicts_and_changes_nothing(ws: Workspace) -> None:
    ws.memory_md.write_text(BODY, encoding="utf-8")
    res = run(ws)
    edited = ws.memory_md.read_text(encoding="utf-8") + "- The cache TTL is 300 seconds!\n"
    ws.memory_md.write_text(edited, encoding="utf-8")
    archive = ws.archive_path.read_text(encoding="utf-8")
    with pytest.raises(UndoConflict, match=r"in MEMORY\.md again") as exc:
        undo_run(ws, now=LATER)
    assert "Nothing was changed" in str(exc.value)
    assert ws.memory_md.read_text(encoding="utf-8") == edited
    assert ws.archive_path.read_text(encoding="utf-8") == archive
    with ledger.connect(ws) as conn:
        assert journal.get_run(conn, res["runId"])["status"] == "applied"


def test_undo_refuses_when_a_rewritten_entry_was_edited(ws: Workspace) -> None:
    ws.memory_md.write_text("# T\n\n- Logs are JSON lines.\n", encoding="utf-8")
    eid = parse(ws.memory_md.read_text(encoding="utf-8")).entries[0].id
    set_entry(ws, eid, now=NOW, pinned=True, importance=0.9)
    text = ws.memory_md.read_text(encoding="utf-8")
    assert (
        text == f'# T\n\n<!-- memcore:entry id="{eid}" pinned="true" -->\n- Logs are JSON lines.\n'
    )
    ws.memory_md.write_text(text.replace("JSON lines", "JSON lines, gzip"), encoding="utf-8")
    with pytest.raises(UndoConflict, match="edited after the run"):
        undo_run(ws, now=LATER)


def test_undo_of_memory_set_restores_marker_and_importance(ws: Workspace) -> None:
    ws.memory_md.write_text("# T\n\n- Logs are JSON lines.\n", encoding="utf-8")
    eid = parse(ws.memory_md.read_text(encoding="utf-8")).entries[0].id
    out = set_entry(ws, eid[:6], now=NOW, importance=0.9, type="convention", scope="project")
    assert out["importance"] == 0.9 and out["type"] == "convention"
    undo_run(ws, now=LATER)
    assert ws.memory_md.read_text(encoding="utf-8") == "# T\n\n- Logs are JSON lines.\n"
    with ledger.connect(ws) as conn:
        assert ledger.load_rows(conn, [eid])[eid].importance == 0.5


def test_undo_with_nothing_to_undo_or_unknown_run(ws: Workspace) -> None:
    with pytest.raises(InputError, match="no dream run to undo"):
        undo_run(ws, now=NOW)
    with pytest.raises(InputError, match="no dream run 'nope'"):
        undo_run(ws, "nope", now=NOW)


def test_promote_step_is_journaled_and_undone(ws: Workspace) -> None:
    from memcore.recall import record_recalls

    (ws.memory_dir / "2026-11-20.md").write_text(
        "# Notes\n\nThe staging database password rotates every Monday.\n", encoding="utf-8"
    )
    ws.memory_md.write_text("# Long-Term Memory\n\n- Keep this one.\n", encoding="utf-8")
    hit = {
        "path": "memory/2026-11-20.md",
        "startLine": 3,
        "endLine": 3,
        "score": 0.95,
        "snippet": "The staging database password rotates every Monday.",
        "source": "memory",
    }
    for k, q in enumerate(("db password", "staging rotation", "password schedule", "monday")):
        record_recalls(ws, q, [hit], now=NOW - timedelta(days=3, hours=k))
    res = cycle.run_cycle(ws, now=NOW)
    assert res["promoted"] == 1
    text = ws.memory_md.read_text(encoding="utf-8")
    assert "rotates every Monday" in text
    with ledger.connect(ws) as conn:
        changes = journal.changes_of(conn, res["runId"])
        promoted = [c for c in changes if c.step == "promote"]
        assert len(promoted) == 1 and promoted[0].action == "add"
        row = ledger.load_rows(conn, [promoted[0].entry_id])[promoted[0].entry_id]
        assert 0.5 < row.importance <= 1.0  # the promotion score
    undo_run(ws, now=LATER)
    assert ws.memory_md.read_text(encoding="utf-8") == "# Long-Term Memory\n\n- Keep this one.\n"


def test_crlf_file_stays_crlf_after_memory_set(ws: Workspace) -> None:
    ws.memory_md.write_bytes(b"# T\r\n\r\n- Logs are JSON lines.\r\n- Other.\r\n")
    eid = parse(ws.memory_md.read_text(encoding="utf-8")).entries[0].id
    set_entry(ws, eid, now=NOW, pinned=True)
    data = ws.memory_md.read_bytes()
    assert data == (
        b'# T\r\n\r\n<!-- memcore:entry id="' + eid.encode() + b'" pinned="true" -->\r\n'
        b"- Logs are JSON lines.\r\n- Other.\r\n"
    )
    undo_run(ws, now=LATER)
    assert ws.memory_md.read_bytes() == b"# T\r\n\r\n- Logs are JSON lines.\r\n- Other.\r\n"
