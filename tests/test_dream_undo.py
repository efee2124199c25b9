"""``dream undo``: exact restores, restores after unrelated edits, refusals that change nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memcore.dream import cycle, tables
from memcore.dream.setmeta import set_entry
from memcore.dream.undo import undo_run
from memcore.errors import InputError, UndoConflict
from memcore.journal import runs as journal
from memcore.recall import ledger
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse

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
    assert not ws.archive_path.exists()  # the run created it: byte for byte, it goes again
    with tables.connect(ws) as conn:
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
    with tables.connect(ws) as conn:
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
    with tables.connect(ws) as conn:
        assert ledger.load_rows(conn, [eid])[eid].importance == 0.5


def test_undo_with_nothing_to_undo_or_unknown_run(ws: Workspace) -> None:
    with pytest.raises(InputError, match="no run to undo"):
        undo_run(ws, now=NOW)
    with pytest.raises(InputError, match="no run 'nope' in the journal"):
        undo_run(ws, "nope", now=NOW)


def test_promote_step_is_journaled_and_undone(ws: Workspace) -> None:
    from memcore.recall.store import record_recalls

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
    with tables.connect(ws) as conn:
        changes = journal.changes_of(conn, res["runId"])
        promoted = [c for c in changes if c.step == "promote" and c.action == "add"]
        assert len(promoted) == 1
        marks = [c for c in changes if c.action == "recall"]
        assert [(c.step, c.before_meta, c.after_meta) for c in marks] == [
            ("promote", {"promotedAt": None}, {"promotedAt": "2026-11-30T03:00:00.000Z"})
        ]
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


# -- undo of the promote step: the recall store's promotedAt comes back too -----------------

NOTE = """# 2026-11-20

## Standup
- Deploys go through the blue/green pipeline on Fridays.
- Ana owns the billing service.
"""
LONG_TERM = "# Long-Term Memory\n\n- The wiki lives at wiki.example.org.\n"


def seed(ws: Workspace, base: datetime, line: int = 4, snippet: str | None = None) -> str:
    """Four recalls by four queries at fixed times before ``base``: passes core's gates."""
    from memcore.recall.store import record_recalls

    note = ws.memory_dir / "2026-11-20.md"
    if not note.exists():
        note.write_text(NOTE, encoding="utf-8")
    hit = {
        "path": "memory/2026-11-20.md",
        "startLine": line,
        "endLine": line,
        "score": 0.95,
        "snippet": snippet or NOTE.split("\n")[line - 1],
    }
    out = None
    for i in range(4):
        out = record_recalls(ws, f"query {i}", [hit], now=base - timedelta(hours=i + 1))
    assert out is not None
    return out.keys[0]


def store_entry(ws: Workspace, key: str) -> dict:
    import json

    return json.loads(ws.store_path.read_text(encoding="utf-8"))["entries"][key]


def mirror_promoted_at(ws: Workspace, key: str) -> tuple[str | None, bool]:
    """The mirror's promoted_at for ``key`` and whether the mirror reflects the file as is."""
    from memcore.recall import mirror as recall_index

    conn = recall_index.connect(ws)
    try:
        row = conn.execute("SELECT promoted_at FROM recall_index WHERE key = ?", (key,)).fetchone()
        in_step = recall_index.current_meta(conn) == recall_index.file_stat(ws)
    finally:
        conn.close()
    return row[0], in_step


def test_cli_undo_of_promotion_makes_the_recall_promotable_again(ws: Workspace) -> None:
    import json

    from memcore.workspace.clock import utcnow
    from tests.conftest import invoke as run_cli

    def invoke(*args: str):
        res = run_cli(ws, *args)
        assert res.exit_code == 0, res.output
        return res

    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    key = seed(ws, utcnow().replace(microsecond=0))
    assert "promotedAt" not in store_entry(ws, key)

    first = json.loads(invoke("dream", "--auto", "--json").stdout)
    assert first["promoted"] == 1
    promoted_text = ws.memory_md.read_text(encoding="utf-8")
    assert f'key="{key}"' in promoted_text and "blue/green pipeline" in promoted_text
    assert store_entry(ws, key)["promotedAt"]
    assert json.loads(invoke("memory", "promote", "--json").stdout)["candidates"] == []

    out = json.loads(invoke("dream", "undo", "--json").stdout)
    assert out["runId"] == first["runId"] and out["exact"]
    assert out["recallRestored"] == [key] and out["recallKept"] == [] and out["warnings"] == []
    assert ws.memory_md.read_bytes() == LONG_TERM.encode("utf-8")
    assert "promotedAt" not in store_entry(ws, key)
    assert mirror_promoted_at(ws, key) == (None, True)  # mirror updated in place, not stale
    preview = json.loads(invoke("memory", "promote", "--json").stdout)
    assert [c["key"] for c in preview["candidates"]] == [key]
    assert "memory/2026-11-20.md:4-4" in invoke("memory", "promote").stdout

    second = json.loads(invoke("dream", "--auto", "--json").stdout)
    assert second["promoted"] == 1
    text = ws.memory_md.read_text(encoding="utf-8")
    assert text.count(f'key="{key}"') == 1 and text.count("blue/green pipeline") == 1
    assert text.count("## Promoted From Short-Term Memory") == 1
    assert store_entry(ws, key)["promotedAt"]
    third = json.loads(invoke("dream", "--auto", "--json").stdout)
    assert third["promoted"] == 0


def test_undo_leaves_a_promotedAt_changed_later_and_says_so(ws: Workspace) -> None:
    from memcore.recall import mirror as recall_index
    from memcore.recall.store import read_store, write_store

    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    k1 = seed(ws, NOW, line=4)
    k2 = seed(ws, NOW, line=5)
    res = cycle.run_cycle(ws, now=NOW)
    assert res["promoted"] == 2
    stamp = "2026-11-30T03:00:00.000Z"
    assert store_entry(ws, k1)["promotedAt"] == stamp == store_entry(ws, k2)["promotedAt"]
    later = "2026-11-30T03:30:00.000Z"  # e.g. another tool re-promoted k2 since
    with ws.lock():
        before = recall_index.file_stat(ws)
        store = read_store(ws, now=NOW)
        store.entries[k2]["promotedAt"] = later
        write_store(ws, store, NOW, before=before, changed=[k2])

    out = undo_run(ws, now=LATER)
    assert out["exact"] and ws.memory_md.read_text(encoding="utf-8") == LONG_TERM
    assert out["recallRestored"] == [k1]
    assert out["recallKept"] == [
        {
            "key": k2,
            "promotedAt": later,
            "reason": "promotedAt was changed after the run; left as it is",
        }
    ]
    assert out["warnings"] == [
        f"recall entry {k2} stays as it is: promotedAt was changed after the run; left as it is"
    ]
    assert "promotedAt" not in store_entry(ws, k1)
    assert store_entry(ws, k2)["promotedAt"] == later
    assert mirror_promoted_at(ws, k1) == (None, True)
    assert mirror_promoted_at(ws, k2) == (later, True)
    with tables.connect(ws) as conn:
        undo = journal.changes_of(conn, out["undoRunId"])
    assert [(c.entry_id, c.after_meta) for c in undo if c.action == "recall"] == [
        (k1, {"promotedAt": None})
    ]


def test_undo_after_an_edit_removes_bullets_markers_and_the_empty_section(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    key = seed(ws, NOW)
    cycle.run_cycle(ws, now=NOW)
    promoted = ws.memory_md.read_text(encoding="utf-8")
    assert promoted.startswith(LONG_TERM + "\n## Promoted From Short-Term Memory (")
    human = "- A human added this later.\n"
    ws.memory_md.write_text(promoted.replace(LONG_TERM, LONG_TERM + human), encoding="utf-8")
    out = undo_run(ws, now=LATER)
    assert not out["exact"] and out["recallRestored"] == [key]
    assert ws.memory_md.read_text(encoding="utf-8") == LONG_TERM + human
    assert "promotedAt" not in store_entry(ws, key)


def test_undo_keeps_a_promoted_section_that_a_human_wrote_into(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    seed(ws, NOW)
    cycle.run_cycle(ws, now=NOW)
    promoted = ws.memory_md.read_text(encoding="utf-8")
    ws.memory_md.write_text(promoted + "- Human note under the section.\n", encoding="utf-8")
    undo_run(ws, now=LATER)
    text = ws.memory_md.read_text(encoding="utf-8")
    assert "blue/green" not in text and "memcore:entry" not in text
    assert text.startswith(LONG_TERM + "\n## Promoted From Short-Term Memory (")
    assert text.endswith("\n\n- Human note under the section.\n")


def test_refused_undo_leaves_the_recall_store_alone(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    key = seed(ws, NOW)
    res = cycle.run_cycle(ws, now=NOW)
    edited = ws.memory_md.read_text(encoding="utf-8").replace("Fridays.", "Fridays and Tuesdays.")
    ws.memory_md.write_text(edited, encoding="utf-8")
    store_bytes = ws.store_path.read_bytes()
    with pytest.raises(UndoConflict, match="added by the run"):
        undo_run(ws, now=LATER)
    assert ws.store_path.read_bytes() == store_bytes
    assert store_entry(ws, key)["promotedAt"] == "2026-11-30T03:00:00.000Z"
    with tables.connect(ws) as conn:
        assert journal.get_run(conn, res["runId"])["status"] == "applied"


def test_undo_reports_a_recall_entry_that_left_the_store(ws: Workspace) -> None:
    from memcore.recall import mirror as recall_index
    from memcore.recall.store import read_store, write_store

    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    key = seed(ws, NOW)
    cycle.run_cycle(ws, now=NOW)
    with ws.lock():
        before = recall_index.file_stat(ws)
        store = read_store(ws, now=NOW)
        del store.entries[key]
        write_store(ws, store, NOW, before=before, changed=[], removed=[key])
    store_bytes = ws.store_path.read_bytes()
    out = undo_run(ws, now=LATER)
    assert out["recallRestored"] == []
    assert out["recallKept"] == [{"key": key, "reason": "no longer in the recall store"}]
    assert ws.memory_md.read_text(encoding="utf-8") == LONG_TERM
    assert ws.store_path.read_bytes() == store_bytes  # nothing to restore: not rewritten


def test_memory_promote_apply_outside_the_cycle_is_a_run_that_undo_takes_back(
    ws: Workspace,
) -> None:
    from memcore.promotion import promote

    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    key = seed(ws, NOW)
    store_before = ws.store_path.read_bytes()
    res = promote.apply(ws, now=NOW)
    assert res.apply is not None and res.apply["applied"] == 1
    assert ws.memory_md.read_text(encoding="utf-8") != LONG_TERM
    out = undo_run(ws, now=LATER)
    assert out["runId"] == res.apply["runId"] and out["exact"]
    assert ws.memory_md.read_bytes() == LONG_TERM.encode("utf-8")
    assert ws.store_path.read_bytes() == store_before
    assert "promotedAt" not in store_entry(ws, key)


def test_reverse_text_drops_an_entry_the_run_added_then_rewrote() -> None:
    from memcore.dream.undo import reverse_text
    from memcore.journal.runs import Change

    before = "# T\n\n- Kept.\n"
    added = '<!-- memcore:entry id="p1" -->\n- Added by promotion.\n'
    rewritten = '<!-- memcore:entry id="p1" -->\n- Added by promotion, merged.\n'
    changes = [
        Change("promote", "add", "p1", after_raw=added),
        Change("merge", "modify", "p1", before_raw=added, after_raw=rewritten),
    ]
    source = before + rewritten + "- Human line.\n"  # edited since: not the exact path
    assert reverse_text(source, changes, before) == before + "- Human line.\n"
    with pytest.raises(UndoConflict, match=r"p1 \(added by the run\) was edited"):
        reverse_text(source.replace("merged.", "merged!"), changes, before)
