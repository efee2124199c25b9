"""Every daily-note layout of OpenClaw's workspaces: split days and sub-folders are daily notes
for recording and promotion, and every store entry is counted under a named reason."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from memcore.promotion import promote
from memcore.recall import store as recall
from memcore.workspace.core import Workspace, daily_note_reason, is_daily_note_path
from tests.conftest import invoke

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
ENV = {"MEMCORE_NOW": NOW.isoformat()}


@pytest.mark.parametrize(
    "path",
    [
        "memory/2026-11-28.md",
        "memory/2026-11-28-0755.md",
        "memory/work-log/2026-11-27.md",
        "memory/work-log/2026-11-27-2310.md",
        "memory/a/b/2026-11-27.md",
        "agents/x/memory/2026-11-27.md",
        "2026-11-27.md",
    ],
)
def test_daily_note_layouts(path: str) -> None:
    assert is_daily_note_path(path)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("MEMORY.md", "file name"),
        ("memory/network.md", "file name"),
        ("memory/2026-11-28-heartbeat.md", "file name"),
        ("notes/2026-11-28.md", "not under memory/"),
        ("memory/dreaming/deep/2026-11-28.md", "memory/dreaming/"),
        ("memory/imports/codex/2026-11-28.md", "memory/imports/"),
        ("memory/.dreams/session-corpus/2026-11-28.md", "hidden"),
    ],
)
def test_not_daily_notes_say_why(path: str, why: str) -> None:
    reason = daily_note_reason(path)
    assert reason is not None and why in reason


def _layout(ws: Workspace) -> None:
    (ws.memory_dir / "work-log").mkdir()
    (ws.memory_dir / "dreaming" / "deep").mkdir(parents=True)
    (ws.memory_dir / "2026-11-28-0755.md").write_text("# Morning\n\n- The VPN moved to wg0.\n")
    (ws.memory_dir / "work-log" / "2026-11-27.md").write_text(
        "# Work log\n\n- Billing runs on Postgres 16.\n"
    )
    (ws.memory_dir / "dreaming" / "deep" / "2026-11-28.md").write_text("- a dreaming report\n")


def _hit(path: str) -> dict[str, object]:
    return {"path": path, "startLine": 3, "endLine": 3, "score": 0.97, "snippet": ""}


def test_split_day_and_sub_folder_notes_are_recorded_and_promoted(ws: Workspace) -> None:
    _layout(ws)
    names = [p.relative_to(ws.root).as_posix() for p in ws.daily_notes()]
    assert names == ["memory/work-log/2026-11-27.md", "memory/2026-11-28-0755.md"]
    paths = [
        "memory/2026-11-28-0755.md",
        "memory/work-log/2026-11-27.md",
        "memory/dreaming/deep/2026-11-28.md",
    ]
    for i in range(4):
        res = recall.record_recalls(
            ws, f"query {i}", [_hit(p) for p in paths], now=NOW - timedelta(hours=i)
        )
        assert sorted(res.keys) == sorted(f"memory:{p}:3:3" for p in paths[:2])
    preview = promote.preview(ws, now=NOW)
    assert {c.path for c in preview.candidates} == set(paths[:2])
    applied = promote.apply(ws, now=NOW)
    assert applied.apply["appended"] == 2
    text = ws.memory_md.read_text()  # memory/dreaming/: an OpenClaw workspace, its format
    assert "- The VPN moved to wg0. Source: memory/2026-11-28-0755.md#L3-L3 <!--" in text
    assert "Source: memory/work-log/2026-11-27.md#L3-L3" in text


def test_status_and_preview_count_every_entry_under_a_named_reason(ws: Workspace) -> None:
    """Six entries as OpenClaw wrote them: 1 promoted, 3 short-term, 2 on other files."""
    _layout(ws)
    ws.ensure_dreams_dir()
    iso = "2026-11-28T10:00:00.000Z"

    def entry(path: str, line: int, recalls: int, **over: object) -> tuple[str, dict]:
        key = f"memory:{path}:{line}:{line}"
        e = {
            "key": key,
            "path": path,
            "startLine": line,
            "endLine": line,
            "source": "memory",
            "snippet": "x",
            "recallCount": recalls,
            "totalScore": recalls,
            "maxScore": 1,
            "firstRecalledAt": iso,
            "lastRecalledAt": iso,
            "queryHashes": ["a", "b", "c"][: min(3, recalls)],
            **over,
        }
        return key, e

    entries = dict(
        [
            entry("memory/2026-11-28-0755.md", 3, 4, promotedAt=iso),
            entry("memory/2026-11-28-0755.md", 4, 1),
            entry("memory/work-log/2026-11-27.md", 3, 1),
            entry("memory/2026-11-26.md", 3, 1),
            entry("memory/network.md", 3, 5),
            entry("notes/2026-11-27.md", 3, 5),
        ]
    )
    ws.store_path.write_text(json.dumps({"version": 1, "updatedAt": iso, "entries": entries}))
    out = invoke(ws, "memory", "status", env=ENV)
    assert out.exit_code == 0, out.output
    assert (
        "Recall store: 6 entries · 1 promoted · 3 short-term · 2 not on a daily note" in out.output
    )
    st = json.loads(invoke(ws, "memory", "status", "--json", env=ENV).output)
    total = st["shortTermCount"] + st["promotedTotal"] + st["notDailyNoteCount"]
    assert total == st["storeHealth"]["entries"] == 6
    res = promote.preview(ws, now=NOW, min_recall_count=1, min_unique_queries=1, min_score=0)
    ex = res.exclusions
    assert ex["byReason"] == {"promoted": 1, "notDailyNote": 2}
    assert len(res.candidates) + sum(ex["byReason"].values()) == 6
    text = invoke(
        ws, "memory", "promote", "--min-score", "0", "--min-recall-count", "1",
        "--min-unique-queries", "1", env=ENV,
    ).output  # fmt: skip
    assert "Entries: 6 = 3 qualifying + 1 already promoted + 2 not on a daily note" in text


def test_a_mirror_built_under_the_old_rules_is_rebuilt(ws: Workspace) -> None:
    _layout(ws)
    for i in range(3):
        recall.record_recalls(ws, f"q{i}", [_hit("memory/2026-11-28-0755.md")], now=NOW)
    assert promote.preview(ws, now=NOW, min_score=0).candidates
    conn = sqlite3.connect(ws.db_path)  # as an older memcore left it: the old daily rule
    conn.execute("UPDATE recall_index SET eligible = 0")
    conn.execute("UPDATE recall_index_meta SET rules = 1")
    conn.commit()
    conn.close()
    assert promote.preview(ws, now=NOW, min_score=0).candidates
