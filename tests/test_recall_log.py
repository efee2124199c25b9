"""The recall log: recording never waits for the lock and never loses or double-counts a recall,
also across crashes between the steps of a fold and with many real recorder processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from memcore.cli import cli
from memcore.recall import log as recall_log
from memcore.recall import store as recall
from memcore.recall.entries import query_hash
from memcore.workspace.core import Workspace
from tests.conftest import held_lock, write_note

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
KEY = "memory:memory/2026-11-20.md:3:3"
ROOT = Path(__file__).resolve().parent.parent


def hit(score: float = 0.9, snippet: str = "- The billing cron runs at 02:00 UTC.") -> dict:
    return {"path": "memory/2026-11-20.md", "startLine": 3, "endLine": 3, "score": score,
            "snippet": snippet}  # fmt: skip


def note(ws: Workspace) -> None:
    write_note(ws, "2026-11-20.md", "# Notes\n\n- The billing cron runs at 02:00 UTC.\n")


def count(ws: Workspace) -> int:
    entry = recall.read_store(ws, now=NOW).entries.get(KEY)
    return 0 if entry is None else int(entry["recallCount"])


def test_busy_lock_queues_the_hits_and_the_next_holder_folds_them(ws: Workspace) -> None:
    note(ws)
    with held_lock(ws):
        res = recall.record_recalls(ws, "billing cron", [hit()], now=NOW)
        assert res.recorded == 1 and not res.folded
        assert not ws.store_path.exists()
        assert recall.read_view(ws, NOW).entries[KEY]["recallCount"] == 1  # readers see it
    with ws.lock():
        folded = recall.fold_pending(ws, NOW)
    assert folded.events == 1 and count(ws) == 1
    assert not recall_log.segments(ws) and recall_log.pending_events(ws) == []
    with ws.lock():  # nothing left: folding again changes nothing
        assert recall.fold_pending(ws, NOW).events == 0
    assert count(ws) == 1


def test_torn_and_foreign_lines_are_skipped(ws: Workspace) -> None:
    note(ws)
    recall.record_recalls(ws, "q1", [hit()], now=NOW)
    with recall_log.log_path(ws).open("ab") as fh:
        fh.write(b'\n{"at": "2026-11-21T12:00:00.000Z", "qh": "abc", "hits": [{"pa')  # torn
        fh.write(b'\n["not", "an", "event"]\n{"origin": "interactive"}\n')
    recall.record_recalls(ws, "q2", [hit()], now=NOW)
    assert count(ws) == 2


def _claim_and_prepare(ws: Workspace) -> list[Path]:
    recall.record_recalls(ws, "q1", [hit()], now=NOW)  # folded: count 1
    with held_lock(ws):
        recall.record_recalls(ws, "q2", [hit()], now=NOW)  # waits in the log
    return recall_log.claim(ws)


def test_crash_before_the_store_was_replaced_folds_again(ws: Workspace) -> None:
    note(ws)
    segs = _claim_and_prepare(ws)
    # the fold wrote its temp file and its intent, then died before the rename
    tmp = ws.dreams_dir / ".short-term-recall.json.crash.tmp"
    tmp.write_bytes(b"{}")
    intent = ws.dreams_dir / "recall-fold.crash.json"
    intent.write_text(json.dumps({"tmp": tmp.name, "segments": [s.name for s in segs]}))
    assert recall.read_view(ws, NOW).entries[KEY]["recallCount"] == 2
    with ws.lock():
        recall.fold_pending(ws, NOW)
    assert count(ws) == 2 and not tmp.exists() and not intent.exists()
    assert not recall_log.segments(ws)


def test_crash_after_the_store_was_replaced_only_cleans_up(ws: Workspace) -> None:
    note(ws)
    segs = _claim_and_prepare(ws)
    with ws.lock():  # fold by hand up to the rename, as a run that dies right after it would
        store = recall.read_store(ws, now=NOW, normalize=False)
        for ev in recall_log.read_events(segs):
            recall.apply_hashed(store.entries, ev.query_hash, ev.hits, ev.at, ev.origin)
        intent = ws.dreams_dir / "recall-fold.crash.json"
        intent.write_text(json.dumps({"tmp": ".gone.tmp", "segments": [s.name for s in segs]}))
        recall.write_store(ws, store, NOW)
    assert count(ws) == 2
    assert recall.read_view(ws, NOW).entries[KEY]["recallCount"] == 2  # not counted twice
    with ws.lock():
        recall.fold_pending(ws, NOW)
    assert count(ws) == 2 and not recall_log.segments(ws) and not intent.exists()


def test_origin_decides_what_counts_toward_diversity(ws: Workspace) -> None:
    from memcore.recall.scoring import unique_queries

    note(ws)
    for i, origin in enumerate(["interactive", "agent", "schedule", "backfill", "interactive"]):
        recall.record_recalls(ws, f"query {i}", [hit()], now=NOW, origin=origin)
    e = recall.read_store(ws, now=NOW).entries[KEY]
    assert e["recallCount"] == 5 and len(e["queryHashes"]) == 5
    assert e["userQueryHashes"] == [query_hash("query 0"), query_hash("query 4")]
    assert unique_queries(e) == 2
    # an entry OpenClaw wrote (no userQueryHashes) keeps counting its queryHashes
    assert unique_queries({"queryHashes": ["a", "b", "c"]}) == 3
    res = CliRunner().invoke(
        cli, ["-w", str(ws.root), "memory", "record", "-q", "x", "--origin", "sometimes"],
        input="[]",
    )  # fmt: skip
    assert res.exit_code == 2 and "sometimes" in res.output


def test_mirror_counts_user_queries(ws: Workspace) -> None:
    from memcore.recall import mirror

    note(ws)
    for i in range(3):
        recall.record_recalls(ws, f"q{i}", [hit()], now=NOW, origin="schedule")
    recall.record_recalls(ws, "asked", [hit()], now=NOW)
    conn = recall.fresh_mirror(ws, NOW)
    try:
        (row,) = conn.execute("SELECT n_queries, recall_count FROM recall_index").fetchall()
    finally:
        conn.close()
    assert tuple(row) == (1, 4)
    assert mirror.file_stat(ws) is not None


def test_many_recorder_processes_lose_nothing_and_never_exit_75(ws: Workspace) -> None:
    """24 real `memory record` processes, half of them while another process holds the lock."""
    note(ws)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "memcore", "-w", str(ws.root), "memory", "record", "-q"]
    data = json.dumps([hit()])

    def spawn(n: int, tag: str) -> list[subprocess.Popen[str]]:
        return [
            subprocess.Popen(
                [*cmd, f"{tag} {i}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, env=env,
            )
            for i in range(n)
        ]  # fmt: skip

    with held_lock(ws):
        busy = spawn(12, "busy")
        outs = [p.communicate(data, timeout=120) for p in busy]
    free = spawn(12, "free")
    outs += [p.communicate(data, timeout=120) for p in free]
    assert [p.returncode for p in busy + free] == [0] * 24, [e for _, e in outs if e]
    assert recall.read_view(ws, NOW).entries[KEY]["recallCount"] == 24
    with ws.lock():
        recall.fold_pending(ws, NOW)
    e = recall.read_store(ws, now=NOW).entries[KEY]
    assert e["recallCount"] == 24 and len(e["queryHashes"]) == 24
