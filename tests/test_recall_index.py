"""The SQLite mirror of the recall store always agrees with the JSON file."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from memcore.promotion import promote
from memcore.recall import mirror as recall_index
from memcore.recall import scoring
from memcore.recall import store as recall
from memcore.recall.store import fresh_mirror
from memcore.workspace.core import Workspace

NOW = datetime(2026, 4, 10, tzinfo=UTC)


def mirror_rows(ws: Workspace) -> dict[str, dict]:
    conn = fresh_mirror(ws, NOW)
    try:
        rows = conn.execute("SELECT * FROM recall_index").fetchall()
        return {r["key"]: recall_index.row_entry(r) for r in rows}
    finally:
        conn.close()


def populate(ws: Workspace, n_searches: int = 60, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(n_searches):
        hits = [
            {
                "path": f"memory/2026-04-0{rng.randint(1, 5)}.md",
                "startLine": (s := rng.randint(1, 6)),
                "endLine": s + rng.randint(0, 2),
                "score": rng.random(),
                "snippet": f"fact {s}",
            }
            for _ in range(rng.randint(1, 4))
        ]
        recall.record_recalls(
            ws,
            f"q{rng.randint(0, 9)}",
            hits,
            now=NOW - timedelta(hours=n_searches - i),
            max_entries=25,
        )


def _rebuilt_rows(ws: Workspace) -> dict:
    store = recall.read_store(ws, now=NOW)
    conn = recall_index.memory_connect()
    try:
        recall_index.replace_all(conn, store.entries, None)
        return {r["key"]: r for r in conn.execute("SELECT * FROM recall_index").fetchall()}
    finally:
        conn.close()


def test_incremental_mirror_equals_full_rebuild(ws: Workspace) -> None:
    populate(ws)
    incremental = mirror_rows(ws)
    ws.db_path.unlink()
    rebuilt = mirror_rows(ws)
    assert incremental == rebuilt
    store = recall.read_store(ws, now=NOW)
    assert set(rebuilt) == set(store.entries)
    for k, e in store.entries.items():
        assert rebuilt[k]["recallCount"] == e["recallCount"]
        assert rebuilt[k]["uniqueQueries"] == len(e["queryHashes"])


def test_preview_matches_ranking_the_file(ws: Workspace) -> None:
    populate(ws, n_searches=120)
    th = scoring.Thresholds(0.3, 2, 1)
    from_file = scoring.rank(recall.read_store(ws, now=NOW).entries.values(), NOW, th)
    res = promote.preview(
        ws, now=NOW, min_score=0.3, min_recall_count=2, min_unique_queries=1, limit=1000
    )
    assert [c.key for c in res.candidates] == [c.key for c in from_file]
    assert res.candidates, "the fixture should produce candidates"


def test_file_written_by_another_tool_is_picked_up(ws: Workspace) -> None:
    populate(ws)
    mirror_rows(ws)
    doc = json.loads(ws.store_path.read_text())
    key = next(iter(doc["entries"]))
    doc["entries"][key]["recallCount"] = 999
    ws.store_path.write_text(json.dumps(doc, indent=2))  # like OpenClaw, outside our writers
    assert mirror_rows(ws)[key]["recallCount"] == 999


def test_corrupt_database_is_set_aside(ws: Workspace) -> None:
    populate(ws)
    ws.db_path.write_bytes(b"this is not sqlite" * 100)
    for side in ("-wal", "-shm"):
        p = ws.db_path.with_name(ws.db_path.name + side)
        if p.exists():
            p.unlink()
    rows = mirror_rows(ws)
    assert len(rows) == len(recall.read_store(ws, now=NOW).entries)
    assert list(ws.dreams_dir.glob("memcore.sqlite.corrupt-*"))


def test_invalid_count_survives_in_mirror(ws: Workspace) -> None:
    populate(ws)
    doc = json.loads(ws.store_path.read_text())
    doc["entries"]["junk"] = {"source": "elsewhere"}
    ws.store_path.write_text(json.dumps(doc))
    conn = fresh_mirror(ws, NOW)
    assert recall_index.counts(conn)["invalid"] == 1
    conn.close()


def _run_searches(ws: Workspace, seed: int, cap: int) -> None:
    rng = random.Random(seed)
    for i in range(50):
        hits = [
            {
                "path": f"memory/2026-04-0{rng.randint(1, 5)}.md",
                "startLine": (s := rng.randint(1, 6)),
                "endLine": s + rng.randint(0, 2),
                "score": rng.random(),
                "snippet": f"fact {s}",
            }
            for _ in range(rng.randint(1, 4))
        ]
        recall.record_recalls(
            ws, f"q{rng.randint(0, 9)}", hits, now=NOW - timedelta(hours=50 - i), max_entries=cap
        )


@pytest.mark.timeout(240)  # 300 recordings, most of them evicting at a tiny cap: slow under load
def test_patching_path_writes_what_the_full_path_writes(tmp_path, monkeypatch) -> None:
    """Recording patches the file in place when it can; the bytes must match a full rewrite."""
    for seed, cap in ((1, 10), (2, 25), (3, 1000)):
        fast = Workspace(tmp_path / f"fast{seed}")
        slow = Workspace(tmp_path / f"slow{seed}")
        _run_searches(fast, seed, cap)
        with monkeypatch.context() as m:
            m.setattr(recall, "_fold_fast", lambda *a, **k: False)
            _run_searches(slow, seed, cap)
        assert fast.store_path.read_bytes() == slow.store_path.read_bytes()
        assert not recall.quarantined_files(fast)
        assert mirror_rows(fast) == mirror_rows(slow)


def test_recording_after_a_foreign_write_heals_the_mirror(ws: Workspace, monkeypatch) -> None:
    """After another tool wrote the store (in the same layout), the mirror is brought along by
    one parse and a per-entry diff, and the search patches the file; so do the next ones."""
    from memcore.recall import patch as recall_patch

    populate(ws, n_searches=10)
    doc = json.loads(ws.store_path.read_text())
    ws.store_path.write_text(json.dumps(doc, indent=2))  # written by someone else
    patched: list[bool] = []
    real = recall_patch.try_record
    monkeypatch.setattr(
        recall_patch, "try_record", lambda *a, **k: patched.append(bool(r := real(*a, **k))) or r
    )
    hit = {
        "path": "memory/2026-04-01.md",
        "startLine": 1,
        "endLine": 1,
        "score": 0.5,
        "snippet": "fact 1",
    }
    for i in range(3):
        recall.record_recalls(ws, f"later {i}", [hit], now=NOW + timedelta(minutes=i))
    assert patched == [True, True, True]
    assert mirror_rows(ws) == {k: recall_index.row_entry(r) for k, r in _rebuilt_rows(ws).items()}


def test_a_foreign_write_parses_only_the_changed_entries_and_updates_only_their_rows(
    ws: Workspace, monkeypatch
) -> None:
    """Another tool changed two entries, removed one and added one (in the layout both tools
    write): the store is not parsed whole, only the three blocks that differ are, and the
    mirror rewrites exactly those rows (the rest keep their rowid)."""
    import orjson

    populate(ws, n_searches=40)
    mirror_rows(ws)
    doc = json.loads(ws.store_path.read_text())
    keys = sorted(doc["entries"])
    doc["entries"][keys[0]]["recallCount"] += 5
    doc["entries"][keys[1]]["snippet"] = "edited elsewhere"
    del doc["entries"][keys[2]]
    added = dict(doc["entries"][keys[3]], startLine=99, endLine=99)
    added["key"] = "memory:memory/2026-04-01.md:99:99"
    doc["entries"][added["key"]] = added
    ws.store_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    conn = recall_index.connect(ws)
    before = dict(conn.execute("SELECT key, rowid FROM recall_index"))
    conn.close()

    parsed: list[bytes] = []
    real = orjson.loads
    monkeypatch.setattr(orjson, "loads", lambda data: parsed.append(bytes(data)) or real(data))
    conn = fresh_mirror(ws, NOW)
    try:
        after = dict(conn.execute("SELECT key, rowid FROM recall_index"))
        changed = conn.execute(
            "SELECT recall_count, snippet FROM recall_index WHERE key IN (?, ?) ORDER BY key",
            (keys[0], keys[1]),
        ).fetchall()
    finally:
        conn.close()
    parses = [len(d) for d in parsed]
    assert max(parses) < ws.store_path.stat().st_size / 2, "the store was not parsed whole"
    assert [d[:1] for d in parsed].count(b"{") == 3, "the two changed blocks and the added one"
    assert keys[2] not in after and added["key"] in after
    same = {k for k in before if k in after and before[k] == after[k]}
    assert same == set(before) - {keys[0], keys[1], keys[2]}
    assert changed[0][0] == doc["entries"][keys[0]]["recallCount"]
    assert changed[1][1] == "edited elsewhere"
    assert mirror_rows(ws) == {k: recall_index.row_entry(r) for k, r in _rebuilt_rows(ws).items()}
