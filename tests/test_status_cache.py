"""``memory status`` counts MEMORY.md's entries once per version of the file."""

from __future__ import annotations

import pytest

from memcore.promotion import status
from memcore.recall.store import fresh_mirror
from memcore.workspace import entries
from memcore.workspace.core import Workspace
from tests.test_recall_cap import NOW


def test_the_long_term_count_is_parsed_once_per_file_version(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n- one\n- two\n")
    assert status.long_term_count(ws) == 2  # no database yet: counted, nothing created
    assert not ws.db_path.exists()
    fresh_mirror(ws, NOW).close()  # the workspace has its database now
    parses: list[int] = []
    real = entries.parse
    monkeypatch.setattr(entries, "parse", lambda text: parses.append(1) or real(text))
    assert status.long_term_count(ws) == 2
    assert status.long_term_count(ws) == 2
    assert len(parses) == 1, "the second status read the cached count"
    ws.memory_md.write_text("# Long-Term Memory\n\n- one\n- two\n- three\n")
    assert status.long_term_count(ws) == 3 and len(parses) == 2


def test_memory_md_size_is_read_once_per_file_version(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcore.workspace import safe_read

    ws.memory_md.write_text("# Long-Term Memory\n\n- café on Tuesdays\n", encoding="utf-8")
    assert status.memory_size(ws)["chars"] == 39  # characters, not bytes
    fresh_mirror(ws, NOW).close()
    reads: list[int] = []
    real = safe_read.read_text
    monkeypatch.setattr(safe_read, "read_text", lambda *a, **k: reads.append(1) or real(*a, **k))
    assert status.memory_size(ws)["chars"] == 39
    assert status.memory_size(ws)["chars"] == 39
    assert len(reads) == 1, "the second status read the cached size"
    ws.memory_md.write_text("# Long-Term Memory\n\n- tea\n", encoding="utf-8")
    assert status.memory_size(ws)["chars"] == 26 and len(reads) == 2
