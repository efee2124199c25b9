"""Promotion into MEMORY.md: format, markers, reconciliation, relocation, atomicity."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

from memcore.errors import WorkspaceError
from memcore.promotion import promote
from memcore.recall import store as recall
from memcore.workspace.core import Workspace
from tests.conftest import write_note

NOW = datetime(2026, 4, 2, 6, 30, tzinfo=UTC)
NOTE = """# 2026-04-01

## Standup
- Deploys go through the blue/green pipeline on Fridays.
- Ana owns the billing service.

## Debugging
The flaky test was a timezone bug in the invoice renderer.
"""


def seed(
    ws: Workspace,
    start: int = 4,
    end: int = 4,
    snippet: str = "- Deploys go through the blue/green pipeline on Fridays.",
    recalls: int = 4,
    score: float = 0.95,
) -> str:
    write_note(ws, "2026-04-01.md", NOTE) if not (
        ws.memory_dir / "2026-04-01.md"
    ).exists() else None
    res = {
        "path": "memory/2026-04-01.md",
        "startLine": start,
        "endLine": end,
        "score": score,
        "snippet": snippet,
    }
    out = None
    for i in range(recalls):
        out = recall.record_recalls(ws, f"query {i}", [res], now=NOW - timedelta(hours=i + 1))
    assert out is not None
    return out.keys[0]


def set_tz(ws: Workspace, tz: str = "America/Los_Angeles") -> None:
    ws.config_path.write_text(f'[dreaming]\nmode = "core"\ntimezone = "{tz}"\n')


def test_preview_writes_nothing(ws: Workspace) -> None:
    seed(ws)
    before = ws.store_path.read_bytes()
    res = promote.preview(ws, now=NOW)
    assert [c.path for c in res.candidates] == ["memory/2026-04-01.md"]
    assert not ws.memory_md.exists()
    assert ws.store_path.read_bytes() == before


def test_apply_fresh_file_format_and_marks(ws: Workspace) -> None:
    set_tz(ws)
    key = seed(ws)
    res = promote.apply(ws, now=NOW)
    assert res.apply["appended"] == 1
    text = ws.memory_md.read_text()
    lines = text.split("\n")
    assert lines[:4] == [
        "# Long-Term Memory",
        "",
        "",
        "## Promoted From Short-Term Memory (2026-04-01)",
    ]
    assert lines[5].startswith('<!-- memcore:entry id="') and f'key="{key}"' in lines[5]
    assert lines[6].startswith("- Deploys go through the blue/green pipeline on Fridays. [score=")
    assert lines[6].endswith("recalls=4 avg=0.950 source=memory/2026-04-01.md:4-4]")
    assert text.endswith("]\n")
    assert recall.read_store(ws, now=NOW).entries[key]["promotedAt"] == "2026-04-02T06:30:00.000Z"
    # excluded afterwards; applying twice appends once
    assert promote.preview(ws, now=NOW).candidates == []
    again = promote.apply(ws, now=NOW)
    assert again.apply["applied"] == 0
    assert ws.memory_md.read_text() == text


def test_existing_content_kept_byte_for_byte(ws: Workspace) -> None:
    seed(ws)
    original = "# My memory\r\n\r\n- hand written, no newline at end"
    ws.memory_md.write_bytes(original.encode())
    promote.apply(ws, now=NOW)
    data = ws.memory_md.read_bytes()
    assert data.startswith(original.encode() + b"\n\n## Promoted From Short-Term Memory")


def test_crash_between_writes_reconciles_instead_of_duplicating(ws: Workspace) -> None:
    key = seed(ws)
    store_before = ws.store_path.read_bytes()
    promote.apply(ws, now=NOW)
    ws.store_path.write_bytes(store_before)  # as if the store write never happened
    text = ws.memory_md.read_text()
    res = promote.apply(ws, now=NOW + timedelta(minutes=1))
    assert res.apply == {**res.apply, "appended": 0, "reconciledExisting": 1, "applied": 1}
    assert ws.memory_md.read_text() == text
    assert recall.read_store(ws, now=NOW).entries[key]["promotedAt"]


def test_openclaw_marker_counts_as_promoted(ws: Workspace) -> None:
    key = seed(ws)
    ws.memory_md.write_text(
        f"# Long-Term Memory\n\n<!-- openclaw-memory-promotion:{key} -->\n- x\n"
    )
    res = promote.apply(ws, now=NOW)
    assert res.apply["reconciledExisting"] == 1 and res.apply["appended"] == 0


def test_snippet_that_moved_is_relocated(ws: Workspace) -> None:
    key = seed(ws)
    write_note(ws, "2026-04-01.md", "# moved\n\nnew line\n\n" + NOTE)
    res = promote.apply(ws, now=NOW)
    assert res.apply["appended"] == 1
    assert "source=memory/2026-04-01.md:8-8]" in ws.memory_md.read_text()
    e = recall.read_store(ws, now=NOW).entries[key]
    assert (e["startLine"], e["endLine"]) == (8, 8)


def test_vanished_snippet_is_skipped_with_reason(ws: Workspace) -> None:
    key = seed(ws)
    write_note(ws, "2026-04-01.md", "# 2026-04-01\n\nsomething else entirely\n")
    res = promote.apply(ws, now=NOW)
    assert res.apply["appended"] == 0
    assert res.apply["skipped"][0]["key"] == key
    assert "no longer found" in res.apply["skipped"][0]["reason"]
    assert not ws.memory_md.exists()
    assert "promotedAt" not in recall.read_store(ws, now=NOW).entries[key]


def test_deleted_daily_note_is_skipped(ws: Workspace) -> None:
    seed(ws)
    (ws.memory_dir / "2026-04-01.md").unlink()
    res = promote.apply(ws, now=NOW)
    assert "no longer exists" in res.apply["skipped"][0]["reason"]


def test_own_output_is_never_promoted(ws: Workspace) -> None:
    own = "- x [score=0.9 recalls=4 avg=0.9 source=memory/a.md:1-1]"
    write_note(ws, "2026-04-01.md", own + "\n")
    hit = {"path": "memory/2026-04-01.md", "startLine": 1, "endLine": 1, "score": 0.95}
    assert recall.record_recalls(ws, "q", [{**hit, "snippet": own}], now=NOW).recorded == 0
    # a store written by another tool may still hold such an entry: promotion skips it
    key = "memory:memory/2026-04-01.md:1:1"
    entry = {
        "key": key,
        **hit,
        "source": "memory",
        "snippet": own,
        "recallCount": 4,
        "totalScore": 3.8,
        "maxScore": 0.95,
        "firstRecalledAt": "2026-04-04T10:00:00.000Z",
        "lastRecalledAt": "2026-04-05T09:00:00.000Z",
        "queryHashes": ["a", "b", "c"],
    }
    del entry["score"]
    recall.write_store(ws, recall.Store(entries={key: entry}), NOW)
    res = promote.apply(ws, now=NOW)
    assert (
        res.apply["appended"] == 0 and "own promotion output" in res.apply["skipped"][0]["reason"]
    )


def test_gates_rechecked_on_live_store(ws: Workspace) -> None:
    key = seed(ws, recalls=2)  # fails minRecallCount 3
    res = promote.apply(ws, now=NOW, keys=[key])
    assert res.apply["applied"] == 0 and not ws.memory_md.exists()


def test_limit_and_flags(ws: Workspace) -> None:
    seed(ws)
    assert promote.preview(ws, now=NOW, min_score=0.99).candidates == []
    assert promote.preview(ws, now=NOW, limit=0).candidates == []
    assert promote.apply(ws, now=NOW, limit=0).apply["applied"] == 0


def test_memory_md_directory_is_a_clear_error(ws: Workspace) -> None:
    seed(ws)
    ws.memory_md.mkdir()
    with pytest.raises(WorkspaceError, match="is a directory"):
        promote.apply(ws, now=NOW)
    assert "promotedAt" not in next(iter(recall.read_store(ws, now=NOW).entries.values()))


def test_symlinked_memory_md_is_written_through(ws: Workspace) -> None:
    seed(ws)
    target = ws.root / "real-memory.md"
    target.write_text("# Long-Term Memory\n")
    os.chmod(target, 0o640)
    ws.memory_md.symlink_to(target)
    promote.apply(ws, now=NOW)
    assert ws.memory_md.is_symlink()
    assert "Promoted From Short-Term Memory" in target.read_text()
    assert target.stat().st_mode & 0o777 == 0o640


def test_locate_prefers_exact_then_nearest() -> None:
    lines = ["a b", "", "x", "a b", "c"]
    assert promote.locate(lines, "a b", 4, 4) == (4, 4, "a b")
    assert promote.locate(lines, "a b", 2, 2) == (1, 1, "a b")
    assert promote.locate(lines, "a b c", 1, 1) == (4, 5, "a b c")
    assert promote.locate(lines, "zzz", 1, 1) is None


def test_explain(ws: Workspace) -> None:
    seed(ws, recalls=2)
    out = promote.explain(ws, "blue/green", now=NOW)
    gates = {g["gate"]: g for g in out["gates"]}
    assert gates["recallCount"]["passed"] is False and gates["recallCount"]["margin"] == -1
    assert out["passes"] is False
    with pytest.raises(Exception, match="No promotion candidate matched"):
        promote.explain(ws, "nothing like this", now=NOW)


def test_promoted_entries_parse_cleanly_for_consolidation(ws: Workspace) -> None:
    from memcore.workspace.entries import parse

    key = seed(ws)
    promote.apply(ws, now=NOW)
    doc = parse(ws.memory_md.read_text())
    assert doc.warnings == []
    (entry,) = doc.entries
    assert entry.id == promote.promoted_entry_id(key)
