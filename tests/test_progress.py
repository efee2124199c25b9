"""The library reports progress through its ``progress`` callback (and never prints)."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

from memcore import sessions
from memcore.dream import cycle
from memcore.search.query import search
from memcore.workspace.core import Workspace
from tests.conftest import write_note
from tests.test_sessions_dream import make_session, turns_for

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, label: str, done: int, total: int) -> None:
        self.calls.append((label, done, total))

    def of(self, label: str) -> list[tuple[int, int]]:
        return [(d, t) for lab, d, t in self.calls if lab == label]


def test_index_build_reports_each_file(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(5):
        note = write_note(ws, f"2026-11-0{i + 1}.md", f"# Day {i}\n\n- Fact {i}.\n")
        os.utime(note, (NOW.timestamp() - 3600, NOW.timestamp() - 3600))  # not "just written"
    rec = Recorder()
    search(ws, "fact", now=NOW, record=False, progress=rec)
    # new files are written a batch of chunks at a time: these five fit in one
    assert rec.of("Indexing memory") == [(0, 5), (5, 5)]
    rec2 = Recorder()
    search(ws, "fact", now=NOW, record=False, progress=rec2)
    assert rec2.calls == []  # nothing to re-read
    for i in (1, 3):  # files already indexed are re-indexed one by one
        note = write_note(ws, f"2026-11-0{i + 1}.md", f"# Day {i}\n\n- Fact {i}, edited.\n")
        os.utime(note, (NOW.timestamp() - 60, NOW.timestamp() - 60))
    rec3 = Recorder()
    search(ws, "fact", now=NOW, record=False, progress=rec3)
    assert rec3.of("Indexing memory") == [(0, 2), (1, 2), (2, 2)]
    assert capsys.readouterr() == ("", "")


def test_dream_plan_reports_the_embedding(ws: Workspace) -> None:
    entries = "".join(f"- Entry number {i} about topic {i % 3}.\n" for i in range(40))
    ws.memory_md.write_text("# Long-Term Memory\n\n" + entries, encoding="utf-8")
    rec = Recorder()
    cycle.preview(ws, now=NOW, steps=("merge",), progress=rec)
    steps = rec.of("Embedding")
    assert steps and steps[-1] == (40, 40)
    assert [d for d, _ in steps] == sorted(d for d, _ in steps)


def test_session_dream_reports_each_session(ws: Workspace) -> None:
    for i in range(3):
        make_session(ws, f"s{i}", turns_for(i))
    rec = Recorder()
    report = sessions.dream(ws, now=NOW, progress=rec)
    assert report["status"] == "ok"
    assert rec.of("Reading sessions") == [(0, 3), (1, 3), (2, 3), (3, 3)]
