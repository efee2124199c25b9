"""memory backfill: a reversible warm start of the recall store from the daily notes."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from memcore.dream import backfill
from memcore.recall.store import read_store
from memcore.search.query import search
from memcore.workspace.core import Workspace
from tests.conftest import invoke, write_note

NOW = datetime(2026, 5, 10, 9, 0, tzinfo=UTC)
ENV = {"MEMCORE_NOW": "2026-05-10T09:00:00Z"}
KEY = "memory:memory/2026-05-08.md:3:3"


def notes(ws: Workspace) -> None:
    write_note(
        ws,
        "2026-05-04.md",
        "# 2026-05-04\n\n- The kiln in the pottery studio is fired on Saturdays at 1240 degrees.\n"
        "- Glazed three bowls with the celadon from the new bucket.\n",
    )
    write_note(
        ws,
        "2026-05-08.md",
        "# 2026-05-08\n\n- Kiln firing at the pottery studio: Saturdays, 1240 degrees as usual.\n"
        "- Decision: the studio key stays with Maren, never in the letterbox.\n",
    )
    write_note(ws, "2026-05-09.md", "# 2026-05-09\n\n- Bought clay, twenty kilos of stoneware.\n")


def test_preview_seeds_repeated_facts_and_rules_and_writes_nothing(ws: Workspace) -> None:
    notes(ws)
    p = backfill.plan(ws, NOW, 30)
    by_key = {s.key: s for s in p.seeds}
    kiln = by_key[KEY]  # the latest of the two statements
    assert kiln.days == ["2026-05-04", "2026-05-08"] and kiln.recalls == 2
    assert kiln.reason == "repeated"
    assert by_key["memory:memory/2026-05-08.md:4:4"].reason == "rule"
    assert len(p.seeds) == 2  # the bowls and the clay are said once: not seeded
    assert backfill.plan(ws, NOW, 1).seeds == []  # --days 1: only 2026-05-10
    out = invoke(ws, "memory", "backfill", env=ENV)
    assert out.exit_code == 0 and "Would seed 3 recalls on 2 entries" in out.output
    assert not ws.store_path.exists() and not ws.db_path.exists()


def test_bad_files_are_skipped_and_named(ws: Workspace) -> None:
    notes(ws)
    (ws.memory_dir / "2026-05-05.md").write_bytes(b"- caf\xe9 latte\n")
    (ws.memory_dir / "2026-05-06.md").write_bytes(b"- " + b"x" * (backfill.MAX_NOTE_BYTES + 1))
    odd = os.fsencode(str(ws.memory_dir)) + b"/2026-05-07-\xff.md"
    with open(odd, "wb") as fh:
        fh.write(b"- odd name\n")
    (ws.memory_dir / "2026-02-30.md").write_text("- not a day\n", encoding="utf-8")
    p = backfill.plan(ws, NOW, 30)
    reasons = dict(p.skipped)
    assert "not valid UTF-8" in reasons["memory/2026-05-05.md"]
    assert "over the" in reasons["memory/2026-05-06.md"]
    assert any("not valid UTF-8" in r and "2026-05-07" in path for path, r in p.skipped)
    assert reasons["memory/2026-02-30.md"] == "file name is not a real date"
    assert KEY in {s.key for s in p.seeds}  # the good notes still count
    out = invoke(ws, "memory", "backfill", "--json", env=ENV)
    assert {s["path"] for s in json.loads(out.output)["skipped"]} >= {
        "memory/2026-05-05.md",
        "memory/2026-05-06.md",
    }


def test_apply_is_journaled_and_never_counts_as_a_distinct_query(ws: Workspace) -> None:
    notes(ws)
    out = invoke(ws, "memory", "backfill", "--apply", "--json", env=ENV)
    assert out.exit_code == 0, out.output
    run_id = json.loads(out.output)["runId"]
    entry = read_store(ws, now=NOW).entries[KEY]
    assert entry["recallCount"] == 2 and entry["userQueryHashes"] == []
    assert len(entry["queryHashes"]) == 1
    hist = invoke(ws, "history", "--json", env=ENV).output
    assert run_id in hist and "backfill" in hist
    again = invoke(ws, "memory", "backfill", "--apply", env=ENV)
    assert again.exit_code == 1 and "already applied" in again.output


def test_rollback_removes_exactly_what_it_added_after_the_store_changed(ws: Workspace) -> None:
    notes(ws)
    backfill.apply(ws, NOW, 30)
    # real searches after the backfill: one on the seeded entry, one elsewhere
    search(ws, "kiln firing Saturdays 1240 degrees", now=NOW, limit=1)
    search(ws, "stoneware clay kilos", now=NOW, limit=1)
    before = read_store(ws, now=NOW).entries
    assert before[KEY]["recallCount"] == 3
    out = invoke(ws, "memory", "backfill", "--rollback", env=ENV)
    assert out.exit_code == 0 and "removed 3 recalls" in out.output, out.output
    after = read_store(ws, now=NOW).entries
    kiln = after[KEY]  # the search's recall stays, the backfill's two go
    assert kiln["recallCount"] == 1 and len(kiln["userQueryHashes"]) == 1
    assert kiln["queryHashes"] == kiln["userQueryHashes"]
    assert kiln["totalScore"] == before[KEY]["totalScore"] - 2 * 0.85
    assert "memory:memory/2026-05-08.md:4:4" not in after  # created by the backfill only
    assert "memory:memory/2026-05-09.md:3:3" in after  # the other search's entry
    second = invoke(ws, "memory", "backfill", "--rollback", env=ENV)
    assert second.exit_code == 1 and "no backfill run" in second.output


def test_init_offers_a_backfill_on_a_folder_with_daily_notes(tmp_path: Path) -> None:
    root = tmp_path / "agent"
    (root / "memory").mkdir(parents=True)
    notes(Workspace(root))
    out = invoke(None, "init", str(root), env=ENV)
    assert out.exit_code == 0
    assert "Found 3 daily notes; 2 facts recur" in out.output
    assert "memcore memory backfill --apply" in out.output
    bare = invoke(None, "init", str(tmp_path / "empty"), env=ENV)
    assert "memcore memory backfill" not in bare.output
