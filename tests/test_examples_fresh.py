"""examples/fresh: daily notes without a recall store, the searches of a new user, and a
script of real commands: the path from zero to a first promotion."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memcore.cli import iter_commands
from memcore.dream import backfill
from memcore.promotion import promote
from memcore.search.query import search
from memcore.workspace.core import Workspace

FRESH = Path(__file__).resolve().parent.parent / "examples" / "fresh"
NOW = datetime(2026, 3, 13, 9, 0, tzinfo=UTC)


def test_the_workspace_has_no_store_and_its_labels_point_at_real_lines() -> None:
    assert not (FRESH / "memory" / ".dreams").exists()
    facts = json.loads((FRESH / "facts.json").read_text("utf-8"))
    assert sum(len(p) >= 2 for p in facts.values()) >= 6
    for places in facts.values():
        for path, line in places:
            assert (FRESH / path).read_text("utf-8").split("\n")[line - 1].startswith("- ")


def test_the_script_uses_only_real_commands() -> None:
    known = {" ".join(path[1:]) for path, _ in iter_commands()}
    script = (FRESH / "search.sh").read_text("utf-8")
    used = set(re.findall(r"memcore ((?:memory )?[a-z]+)", script))
    assert used and used <= known, used - known


def test_searches_after_a_backfill_promote_distinct_facts(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    shutil.copytree(FRESH, root)
    ws = Workspace(root)
    assert len(backfill.apply(ws, NOW).seeds) >= 6
    queries = (FRESH / "searches.txt").read_text("utf-8").split("\n")
    first = None
    for i, q in enumerate(filter(None, queries), 1):
        search(ws, q, limit=3, now=NOW + timedelta(minutes=i))
        if first is None and promote.preview(ws, now=NOW + timedelta(minutes=i)).candidates:
            first = i
    assert first is not None
    done = promote.apply(ws, now=NOW + timedelta(hours=1), limit=100)
    facts = json.loads((FRESH / "facts.json").read_text("utf-8"))
    promoted = []
    for c in done.candidates:
        fid = next(
            f
            for f, places in facts.items()
            if any(p == c.path and c.start_line <= n <= c.end_line for p, n in places)
        )
        promoted.append(fid)
    assert promoted and len(set(promoted)) == len(promoted)  # no near-duplicate promoted
