"""The entry cap: linear work at any store size, every eviction a journaled, undoable run."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta

import orjson

from memcore.recall import log as recall_log
from memcore.recall import store as recall
from memcore.recall.entries import parse_hits, query_hash
from memcore.recall.store import Store, fold_pending, fresh_mirror, write_store
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace
from tests.conftest import invoke

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _entries(n: int) -> dict[str, dict]:
    out = {}
    for i in range(n):
        day = f"2025-{1 + i % 12:02d}-{1 + (i // 12) % 28:02d}"
        key = f"memory:memory/{day}.md:{i}:{i}"
        out[key] = {
            "key": key,
            "path": f"memory/{day}.md",
            "startLine": i,
            "endLine": i,
            "source": "memory",
            "snippet": f"fact number {i}",
            "recallCount": 1 + i % 3,
            "totalScore": 0.5,
            "maxScore": 0.5,
            "firstRecalledAt": iso_ms(NOW - timedelta(days=90)),
            "lastRecalledAt": iso_ms(NOW - timedelta(days=60, seconds=i)),
            "queryHashes": [query_hash(f"q{i}")],
        }
    return out


def _new_hits(n: int) -> list[dict]:
    return [
        {
            "path": "memory/2026-11-19.md",
            "startLine": i,
            "endLine": i,
            "score": 0.8,
            "snippet": f"new fact {i}",
        }
        for i in range(1, n + 1)
    ]


def _fold(ws: Workspace, results: list[dict], now: datetime, cap: int) -> recall.FoldResult:
    recall_log.append(ws, iso_ms(now), query_hash("new"), "interactive", parse_hits(ws, results))
    with ws.lock(5.0):
        return fold_pending(ws, now, max_entries=cap)


def test_a_record_at_the_cap_of_a_20k_store_searches_the_file_a_bounded_number_of_times(
    ws: Workspace,
) -> None:
    """500 new keys at the cap drop 500 entries: the file is searched end to end at most
    twice (once for the hit keys, once for the victims), not once per key."""
    entries = _entries(20_000)
    write_store(ws, Store(entries=entries), NOW)
    fresh_mirror(ws, NOW).close()
    res = _fold(ws, _new_hits(500), NOW, cap=20_000)
    assert not res.full, "the patching path applied"
    assert res.dropped == 500
    assert res.file_scans <= 2
    doc = orjson.loads(ws.store_path.read_bytes())
    assert len(doc["entries"]) == 20_000
    assert sum(1 for k in doc["entries"] if "2026-11-19" in k) == 500
    # the victims are the fewest recalls with the oldest last recall, as the full path picks
    expected = recall.enforce_cap(
        {**entries, **{f"new{i}": {"recallCount": 9} for i in range(500)}}, 20_000
    )
    assert set(expected).isdisjoint(doc["entries"])
    assert all(k in doc["entries"] for k in entries if k not in set(expected))


def test_the_same_record_with_few_keys_finds_each_once(ws: Workspace) -> None:
    write_store(ws, Store(entries=_entries(2_000)), NOW)
    fresh_mirror(ws, NOW).close()
    res = _fold(ws, _new_hits(3), NOW, cap=2_000)
    assert not res.full and res.dropped == 3 and res.file_scans == 6


def test_an_eviction_is_a_journaled_run_that_undo_takes_back(ws: Workspace) -> None:
    write_store(ws, Store(entries=_entries(40)), NOW)
    ws.config_path.write_text("[dreaming]\nmax_entries = 40\n")
    res = _fold(ws, _new_hits(5), NOW, cap=40)
    assert res.dropped == 5 and res.evict_run and res.evicted is not None
    sidecar = json.loads(gzip.decompress(res.evicted.read_bytes()))
    assert len(sidecar["entries"]) == 5 and sidecar["runId"] == res.evict_run
    evicted_keys = set(sidecar["entries"])
    assert evicted_keys.isdisjoint(recall.read_store(ws, now=NOW).entries)

    hist = invoke(ws, "history", "--json")
    assert hist.exit_code == 0, hist.output
    runs = {r["runId"]: r for r in json.loads(hist.stdout)["runs"]}
    assert runs[res.evict_run]["kind"] == "evict"
    assert runs[res.evict_run]["counters"]["evicted"] == 5

    # a later record (the store changed since) does not stand in the way of the undo
    later = _fold(ws, _new_hits(1), NOW + timedelta(minutes=1), cap=40)
    assert later.dropped == 0

    undone = invoke(ws, "undo", res.evict_run, "--json")
    assert undone.exit_code == 0, undone.output
    body = json.loads(undone.stdout)
    assert sorted(body["evictedRestored"]) == sorted(evicted_keys)
    assert body["capRaisedTo"] == 45
    store = recall.read_store(ws, now=NOW)
    assert evicted_keys <= set(store.entries) and len(store.entries) == 45
    for k in evicted_keys:
        assert store.entries[k]["snippet"] == sidecar["entries"][k]["snippet"]
    assert not res.evicted.exists()
    assert "max_entries = 45" in ws.config_path.read_text()
    # the mirror follows the store
    conn = fresh_mirror(ws, NOW)
    try:
        n = conn.execute("SELECT COUNT(*) FROM recall_index").fetchone()[0]
    finally:
        conn.close()
    assert n == 45


def test_plain_undo_skips_evictions(ws: Workspace) -> None:
    """``memcore undo`` without a run id takes back the user's last run, not an eviction a
    search caused meanwhile."""
    write_store(ws, Store(entries=_entries(10)), NOW)
    res = _fold(ws, _new_hits(2), NOW, cap=10)
    assert res.evict_run
    out = invoke(ws, "undo", "--json")
    assert out.exit_code != 0 and "no run to undo" in out.output
