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
    real = entries.count_entries
    monkeypatch.setattr(entries, "count_entries", lambda text: parses.append(1) or real(text))
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


PIECES = [
    "# Long-Term Memory\n",
    "## Section\n",
    "\n",
    "\n\n",
    "- a bullet fact\n",
    "* another bullet\n",
    "  indented continuation\n",
    "\tTab continuation\n",
    "A paragraph line.\n",
    "<!-- memcore:entry id=abc123 pinned=true -->\n",
    "<!-- memcore:entry type=bogus -->\n",
    "<!-- memcore:entry broken\n",
    "<!-- openclaw-memory-promotion:memory:memory/2026-01-01.md:1:2 -->\n",
    "<!-- a plain comment -->\n",
    "---\n",
    "```\n",
    "~~~\n",
    "code line\n",
    "1. numbered\n",
    "§\n",
    "- Source: memory/2026-01-01.md#L1-L2 <!-- trigger=x -->\n",
]


def test_counting_entries_agrees_with_parsing() -> None:
    """The count memory status shows is the parser's number of entries, whatever the text."""
    import random
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    docs = [p.read_text(encoding="utf-8") for p in root.glob("examples/*/MEMORY.md")]
    docs.append((root / "bench/eval/search/workspace/MEMORY.md").read_text(encoding="utf-8"))
    rng = random.Random(7)
    for _ in range(400):
        docs.append("".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))))
    docs += ["", "---\ntitle: x\n---\n- after front matter\n", "- no newline at the end"]
    for text in docs:
        assert entries.count_entries(text) == len(entries.parse(text).entries), text
    assert sum(entries.count_entries(t) for t in docs) > 1000
