"""Columnar ranking agrees with the per-entry ranking on every candidate, score and tie."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from memcore.recall import mirror as recall_index
from memcore.recall import scoring
from memcore.recall.columns import rank_mirror
from memcore.recall.entries import query_hash
from memcore.recall.store import Store, fresh_mirror, read_store, write_store
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace

NOW = datetime(2026, 11, 20, 9, 30, 15, 123000, tzinfo=UTC)


def _store(seed: int, n: int) -> dict[str, dict]:
    rng = random.Random(seed)
    out: dict[str, dict] = {}
    for i in range(n):
        day = f"2026-{rng.randint(9, 11):02d}-{rng.randint(1, 3):02d}"
        path = rng.choice([f"memory/{day}.md", f"memory/{day}.md", "memory/topic.md"])
        start = rng.randint(1, 40)
        key = f"memory:{path}:{start}:{start + i}"
        count = rng.choice([0, 1, 2, 3, 3, 4, 5, 8, 13, 40])
        # a few exact ties: same numbers, same path, other lines
        avg = rng.choice([0.5, 0.75, 0.9, 0.95, 1.0, rng.random()])
        last = NOW - timedelta(
            microseconds=rng.choice([0, 1, -5_000_000, rng.randint(0, 9 * 10**12)])
        )
        entry = {
            "key": key,
            "path": path,
            "startLine": start,
            "endLine": start + i,
            "source": "memory",
            "snippet": f"fact {i}",
            "recallCount": count,
            "totalScore": avg * count,
            "maxScore": avg,
            "firstRecalledAt": iso_ms(last - timedelta(days=3)),
            "lastRecalledAt": last.isoformat().replace("+00:00", "Z"),
            "queryHashes": [query_hash(f"q{k}") for k in range(rng.randint(0, 6))],
        }
        if rng.random() < 0.15:
            entry["promotedAt"] = iso_ms(NOW - timedelta(days=1))
        out[key] = entry
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_columnar_ranking_equals_the_per_entry_ranking(ws: Workspace, seed: int) -> None:
    write_store(ws, Store(entries=_store(seed, 400)), NOW)
    entries = read_store(ws, now=NOW).entries
    by_key = [entries[k] for k in sorted(entries)]  # full ties: key order
    rng = random.Random(seed)
    settings = [
        scoring.Thresholds(),
        scoring.Thresholds(0.0, 0, 0),
        scoring.Thresholds(0.5, 1, 1, half_life_days=rng.uniform(0.5, 30)),
        scoring.Thresholds(0.6, 2, 0, weights={"frequency": 2, "relevance": 1, "recency": 0.3}),
    ]
    conn = fresh_mirror(ws, NOW)
    try:
        for th in settings:
            for include_promoted in (False, True):
                for limit in (None, 5):
                    want = scoring.rank(
                        by_key, NOW, th, limit=limit, include_promoted=include_promoted
                    )
                    got = rank_mirror(conn, NOW, th, limit=limit, include_promoted=include_promoted)
                    assert [c.key for c in got.candidates] == [c.key for c in want]
                    assert got.candidates == want  # every field, scores to the last bit
    finally:
        conn.close()


def test_exclusions_count_the_first_failing_gate(ws: Workspace) -> None:
    write_store(ws, Store(entries=_store(9, 300)), NOW)
    entries = read_store(ws, now=NOW).entries
    th = scoring.Thresholds().sanitized()
    expected = dict.fromkeys(
        ("notDailyNote", "promoted", "recallCount", "uniqueQueries", "relevance", "score"), 0
    )
    for e in entries.values():
        if not scoring.is_eligible(e, include_promoted=True):
            expected["notDailyNote"] += 1
        elif e.get("promotedAt"):
            expected["promoted"] += 1
        elif e["recallCount"] <= 0 or e["recallCount"] < th.min_recall_count:
            expected["recallCount"] += 1
        elif scoring.unique_queries(e) < th.min_unique_queries:
            expected["uniqueQueries"] += 1
        elif scoring.score_entry(e, NOW, th).avg_score < th.min_relevance:
            expected["relevance"] += 1
        elif scoring.score_entry(e, NOW, th).raw_score < th.min_score:
            expected["score"] += 1
    conn = fresh_mirror(ws, NOW)
    try:
        got = rank_mirror(conn, NOW, th)
    finally:
        conn.close()
    assert got.exclusions == {**expected, "total": len(entries)}
    conn = fresh_mirror(ws, NOW)
    try:
        assert got.promoted == recall_index.counts(conn)["promoted"] > 0
    finally:
        conn.close()
    assert got.passing == len(scoring.rank(entries.values(), NOW, th))


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_nearest_over_the_mirror_equals_the_per_entry_nearest(ws: Workspace, seed: int) -> None:
    """The entries closest to the gates, as arrays, are the per-entry answer: the same
    entries, order (ties included), JSON and words."""
    from memcore.recall.columns import nearest_mirror
    from memcore.recall.mirror import row_entry
    from memcore.recall.why_not import nearest

    write_store(ws, Store(entries=_store(seed, 500)), NOW)
    conn = fresh_mirror(ws, NOW)
    try:
        rows = conn.execute("SELECT * FROM recall_index").fetchall()
        entries = [row_entry(r) for r in rows]
        everything = scoring.Thresholds(0.0, 0, 0, min_relevance=0.0)  # every entry passes
        assert nearest_mirror(conn, NOW, everything, 5) == [] == nearest(entries, NOW, everything)
        for th in (
            scoring.Thresholds(),
            scoring.Thresholds(0.9, 6, 4),
            scoring.Thresholds(0.5, 2, 1, min_relevance=0.8, half_life_days=3.0),
            scoring.Thresholds(0.7, 3, 0, weights={"frequency": 2, "relevance": 1}),
        ):
            for limit in (5, 1000):
                want = nearest(entries, NOW, th, limit)
                got = nearest_mirror(conn, NOW, th, limit)
                assert [r["key"] for r in got] == [r["key"] for r in want]
                assert got == want
                assert limit == 5 or len(want) > 100, "most entries are still short of the gates"
    finally:
        conn.close()


@pytest.mark.parametrize("seed", [8, 9])
def test_a_preview_lists_the_nearest_entries_unless_every_open_entry_passes(
    ws: Workspace, seed: int
) -> None:
    """The preview's ``nearest`` is the status's answer for its gates: empty when every open
    entry is a candidate (that is not scored twice), the nearest ones otherwise."""
    from memcore.promotion.promote import preview
    from memcore.promotion.status import nearest_candidates

    entries = _store(seed, 300)
    for i, e in enumerate(entries.values()):
        # an entry without recalls fails the count gate at every setting but is never near
        e["recallCount"] = 0 if i % 7 == 0 else max(1, e["recallCount"])
        e["totalScore"] = e["recallCount"] * max(0.6, e["maxScore"])  # above min_relevance
    write_store(ws, Store(entries=entries), NOW)
    seen = []
    for score, count, queries in ((0.0, 0, 0), (0.0, 1, 0), (0.5, 2, 1), (0.8, 5, 3)):
        for include_promoted in (False, True):
            res = preview(
                ws,
                now=NOW,
                min_score=score,
                min_recall_count=count,
                min_unique_queries=queries,
                include_promoted=include_promoted,
            )
            assert res.nearest == nearest_candidates(ws, NOW, res.thresholds, 3)
            seen.append(bool(res.nearest))
    assert seen[:2] == [False, False] and True in seen, "all pass at zero gates, not at others"
