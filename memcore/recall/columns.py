"""Columnar ranking: every entry of the recall mirror scored, gated and sorted with numpy.

The mirror's columns (counts, scores, distinct queries, last recall in whole microseconds) go
into arrays once; the four signals, the gates and the sort are array operations. The scores
are bit-for-bit those of :func:`memcore.recall.scoring.score_entry`: additions, products and
quotients are the same IEEE operations in the same order, ages come from exact microsecond
differences, and the two transcendental functions are computed by Python's ``math`` (the
logarithm once per distinct recall count, the exponential once per surviving entry), so a
ranking here and one over the entries agree on every candidate, score and tie.

Order: score desc, recall count desc, path asc (OpenClaw's), then key asc for full ties.
numpy is imported here only, so the recording path never loads it.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from memcore.recall.mirror import epoch_us
from memcore.recall.scoring import _DAY_S, Candidate, Thresholds, frequency
from memcore.workspace.gcpause import no_gc

_COLUMNS = (
    "SELECT rowid, recall_count, total_score, n_queries, last_us, eligible,"
    " promoted_at IS NOT NULL FROM recall_index ORDER BY path, key"
)
_DETAILS = (
    "SELECT key, path, start_line, end_line, snippet, max_score, first_recalled,"
    " last_recalled, promoted_at, n_queries FROM recall_index"
)
_CHUNK = 500  # rows per IN (...) query, far below SQLite's variable limit
#: Gate names in the order the first failing one is reported.
GATES = ("notDailyNote", "promoted", "recallCount", "uniqueQueries", "relevance", "score")


@dataclass
class Ranking:
    """Candidates best first (at most ``limit``), how many entries each gate excluded, and
    the entries nearest to the gates when asked for (:func:`nearest_mirror`'s answer)."""

    candidates: list[Candidate]
    exclusions: dict[str, int]
    passing: int  # candidates before the limit
    nearest: list[dict[str, Any]] = field(default_factory=list)
    promoted: int = 0  # promoted daily-note entries (the status's count), whatever the gates


def _clamp(x: np.ndarray) -> np.ndarray:
    out = np.where(np.isfinite(x), x, 0.0)
    return np.clip(out, 0.0, 1.0)


def rank_mirror(
    conn: sqlite3.Connection,
    now: datetime,
    th: Thresholds,
    *,
    limit: int | None = None,
    include_promoted: bool = False,
    nearest: int = 0,
) -> Ranking:
    """Rank every entry of the mirror on ``conn`` as :func:`scoring.rank` ranks the entries
    (same candidates, scores and order), counting the first gate each excluded entry fails.
    ``nearest``: also the first ``nearest`` of :func:`nearest_mirror`, from the same scan
    (only the entries that fail a gate are scored for it)."""
    factory = conn.row_factory
    conn.row_factory = None  # plain tuples: a Row per entry costs more than the scoring
    snapshot = not conn.in_transaction
    if snapshot:  # both queries read one state of the mirror, whoever writes meanwhile
        conn.execute("BEGIN")
    try:
        with no_gc():  # 100,000 candidates: the collector rescanning them was most of it
            return _rank(conn, now, th.sanitized(), limit, include_promoted, nearest)
    finally:
        conn.row_factory = factory
        if snapshot and conn.in_transaction:
            conn.execute("COMMIT")


def _rank(
    conn: sqlite3.Connection,
    now: datetime,
    th: Thresholds,
    limit: int | None,
    include_promoted: bool,
    near_limit: int,
) -> Ranking:
    rows = conn.execute(_COLUMNS).fetchall()
    n = len(rows)
    if n == 0:
        return Ranking([], {g: 0 for g in GATES} | {"total": 0}, 0)
    cols = list(zip(*rows, strict=True))
    rowids: tuple[int, ...] = cols[0]  # integers: cheaper to fetch than every key
    count = np.array(cols[1], dtype=np.int64)
    total = np.array(cols[2], dtype=np.float64)
    uq = np.array(cols[3], dtype=np.int64)
    last = np.array([-1 if v is None else v for v in cols[4]], dtype=np.int64)
    has_last = np.array([v is not None for v in cols[4]], dtype=bool)
    eligible = np.array(cols[5], dtype=bool)
    promoted = np.array(cols[6], dtype=bool)

    gate_promoted = eligible & promoted & (not include_promoted)
    open_ = eligible & ~gate_promoted
    fail_count = open_ & ((count <= 0) | (count < th.min_recall_count))
    open_ &= ~fail_count
    fail_uq = open_ & (uq < th.min_unique_queries)
    open_ &= ~fail_uq
    idx = np.nonzero(open_)[0]

    c = count[idx]
    freq, rel, div, rec, raw, age = _signals(
        c, total[idx], uq[idx], last[idx], has_last[idx], now, th
    )
    score = _clamp(raw)
    rel_ok = rel >= th.min_relevance
    fail_rel = int(np.count_nonzero(~rel_ok))
    keep = rel_ok & (raw >= th.min_score)
    fail_score = int(np.count_nonzero(rel_ok & ~keep))

    sel = np.nonzero(keep)[0]
    near: list[dict[str, Any]] = []
    if near_limit > 0:
        # nearest_mirror's entries (eligible, unpromoted, with recalls) that are no candidate
        pool = eligible & ~promoted & (count > 0)
        pool[idx[sel]] = False
        at = np.nonzero(pool)[0]
        if len(at):
            ids = np.array(rowids, dtype=np.int64)[at]
            near = _nearest(conn, now, th, near_limit, ids, count[at], total[at], uq[at],
                            last[at], has_last[at])  # fmt: skip
    # rows come in (path, key) order: a stable sort on (-count) then (-score) keeps it for ties
    order = sel[np.argsort(-c[sel], kind="stable")]
    order = order[np.argsort(-score[order], kind="stable")]
    exclusions = {
        "notDailyNote": int(np.count_nonzero(~eligible)),
        "promoted": int(np.count_nonzero(gate_promoted)),
        "recallCount": int(np.count_nonzero(fail_count)),
        "uniqueQueries": int(np.count_nonzero(fail_uq)),
        "relevance": fail_rel,
        "score": fail_score,
        "total": n,
    }
    passing = len(order)
    if limit is not None:
        order = order[: max(0, int(limit))]
    # The candidates are built in row order, then put in rank order: built in rank order,
    # each one reads rows and numbers scattered over memory (twice the time at 100,000).
    built_order = np.sort(order)
    positions = built_order.tolist()
    rows_at = idx[built_order].tolist()
    comps = [a.tolist() for a in (freq, rel, div, rec, raw, score, age)]
    counts = c.tolist()
    if len(rows_at) * 2 > n:  # most rows: one scan in the same (path, key) order
        every = conn.execute(_DETAILS + " ORDER BY path, key").fetchall()
        picked = [every[i] for i in rows_at]
    else:
        by_rowid = _details(conn, [rowids[i] for i in rows_at])
        picked = [by_rowid[rowids[i]] for i in rows_at]
    built = _candidates(picked, positions, counts, comps)
    ranked = [built[i] for i in np.searchsorted(built_order, order).tolist()]
    promoted_total = int(np.count_nonzero(eligible & promoted))
    return Ranking(ranked, exclusions, passing, near, promoted_total)


def _frequencies(counts: np.ndarray) -> np.ndarray:
    """:func:`scoring.frequency` of each count (the logarithm once per distinct count)."""
    uniq, inverse = np.unique(counts, return_inverse=True)
    return np.array([frequency(int(v)) for v in uniq], dtype=np.float64)[inverse]


def _signals(
    c: np.ndarray,
    total: np.ndarray,
    uq: np.ndarray,
    last: np.ndarray,
    has_last: np.ndarray,
    now: datetime,
    th: Thresholds,
) -> tuple[np.ndarray, ...]:
    """Frequency, relevance, diversity, recency, raw score and age in days of each entry, as
    :func:`scoring.score_entry` computes them."""
    freq = _frequencies(c)
    rel = _clamp(total / np.maximum(1, c).astype(np.float64))
    div = _clamp(uq.astype(np.float64) / 5)
    # age in days exactly as timedelta.total_seconds() / 86400 gives it
    delta_us = np.where(has_last, epoch_us(now) - last, 0)
    age = np.maximum(0.0, delta_us.astype(np.float64) / 10**6 / _DAY_S)
    k = -(math.log(2) / th.half_life_days)
    exps = np.array([math.exp(v) for v in (k * age).tolist()], dtype=np.float64)
    rec = np.where(np.isfinite(age) & (age >= 0), _clamp(exps), 1.0)
    w = th.weights
    raw = w["frequency"] * freq + w["relevance"] * rel
    raw = raw + w["diversity"] * div
    raw = raw + w["recency"] * rec
    return freq, rel, div, rec, raw, age


_OPEN = (
    "SELECT rowid, recall_count, total_score, n_queries, last_us FROM recall_index"
    " WHERE eligible = 1 AND recall_count > 0 AND promoted_at IS NULL"
)


def nearest_mirror(
    conn: sqlite3.Connection, now: datetime, th: Thresholds, limit: int = 5
) -> list[dict[str, Any]]:
    """:func:`memcore.recall.why_not.nearest` over the mirror's unpromoted daily-note entries
    with recalls: the same entries in the same order, scored and gated as arrays (the
    fewest further searches to pass too: one array step per number of searches), with
    candidate JSON and ``whyNot`` built only for the ``limit`` shown."""
    th = th.sanitized()
    factory = conn.row_factory
    conn.row_factory = None
    try:
        with no_gc():
            rows = conn.execute(_OPEN).fetchall()
    finally:
        conn.row_factory = factory
    if not rows or limit <= 0:
        return []
    cols = list(zip(*rows, strict=True))
    rowids = np.array(cols[0], dtype=np.int64)
    count = np.array(cols[1], dtype=np.int64)
    total = np.array(cols[2], dtype=np.float64)
    uq = np.array(cols[3], dtype=np.int64)
    last = np.array([-1 if v is None else v for v in cols[4]], dtype=np.int64)
    has_last = np.array([v is not None for v in cols[4]], dtype=bool)
    return _nearest(conn, now, th, limit, rowids, count, total, uq, last, has_last)


def _nearest(
    conn: sqlite3.Connection,
    now: datetime,
    th: Thresholds,
    limit: int,
    rowids: np.ndarray,
    count: np.ndarray,
    total: np.ndarray,
    uq: np.ndarray,
    last: np.ndarray,
    has_last: np.ndarray,
) -> list[dict[str, Any]]:
    """nearest_mirror over the given rows (unpromoted daily-note entries with recalls; those
    that pass are left out here); ``th`` sanitised."""
    from memcore.recall.mirror import row_entry
    from memcore.recall.scoring import diversity, score_entry
    from memcore.recall.why_not import MAX_SEARCHES, why_not

    _, rel, _, _, raw, _ = _signals(count, total, uq, last, has_last, now, th)
    rel_ok = rel >= th.min_relevance
    passes = (
        (count >= th.min_recall_count) & (uq >= th.min_unique_queries) & rel_ok
        & (raw >= th.min_score)
    )  # fmt: skip
    open_ = np.nonzero(~passes)[0]  # entries that pass are candidates already: not shown
    if len(open_) == 0:
        return []
    rowids, count, uq = rowids[open_], count[open_], uq[open_]
    rel, rel_ok, raw = rel[open_], rel_ok[open_], raw[open_]
    w = th.weights
    counts, count_at = np.unique(count, return_inverse=True)
    queries, queries_at = np.unique(uq, return_inverse=True)
    needed = np.full(len(open_), MAX_SEARCHES + 1, dtype=np.int64)
    for k in range(1, MAX_SEARCHES + 1):  # each entry gets the smallest k that passes
        freq = np.array([frequency(int(v) + k) for v in counts], dtype=np.float64)[count_at]
        div = np.array([diversity(int(v) + k) for v in queries], dtype=np.float64)[queries_at]
        after = w["frequency"] * freq + w["relevance"] * rel
        after = after + w["diversity"] * div
        after = after + w["recency"] * 1.0
        ok = (count + k >= th.min_recall_count) & (uq + k >= th.min_unique_queries)
        needed[(needed > MAX_SEARCHES) & ok & rel_ok & (after >= th.min_score)] = k
        if np.count_nonzero(needed <= k) >= limit:
            # The first ``limit`` and their ties all need k or fewer: an entry that needs
            # more is left after them whether its count is known or not.
            break
    need, neg = needed, -raw
    order = np.lexsort((neg, need))
    edge = order[min(limit, len(order)) - 1]
    # the first ``limit`` by (searches, score), and every entry tied with the last of them:
    # path, start line and key decide among those, as in the per-entry sort
    near = np.nonzero((need < need[edge]) | ((need == need[edge]) & (neg <= neg[edge])))[0]
    picked = _sorted_near(conn, rowids[near], need[near], neg[near])[:limit]
    marks = ",".join("?" * len(picked))
    cur = conn.cursor()
    cur.row_factory = sqlite3.Row  # row_entry reads the columns by name
    try:
        sql = f"SELECT rowid AS rid, * FROM recall_index WHERE rowid IN ({marks})"
        by_rowid = {r["rid"]: r for r in cur.execute(sql, picked)}
    finally:
        cur.close()
    out = []
    for rowid in picked:
        c = score_entry(row_entry(by_rowid[rowid]), now, th)
        row = c.to_json()
        row["whyNot"] = why_not(c, th)
        out.append(row)
    return out


def _sorted_near(
    conn: sqlite3.Connection, rowids: np.ndarray, need: np.ndarray, neg: np.ndarray
) -> list[int]:
    """``rowids`` sorted by (searches needed, -raw score, path, start line, key)."""
    place: dict[int, tuple[str, int, str]] = {}
    ids = rowids.tolist()
    for i in range(0, len(ids), _CHUNK):
        part = ids[i : i + _CHUNK]
        marks = ",".join("?" * len(part))
        sql = f"SELECT rowid, path, start_line, key FROM recall_index WHERE rowid IN ({marks})"
        for rowid, path, start, key in conn.execute(sql, part):
            place[rowid] = (path, start, key)
    keyed = sorted(
        (k, n, *place[r], r) for k, n, r in zip(need.tolist(), neg.tolist(), ids, strict=True)
    )
    return [t[-1] for t in keyed]


def _candidates(
    picked: list[tuple[Any, ...]], positions: list[int], counts: list[int], comps: list[list[float]]
) -> list[Candidate]:
    """The Candidate of each detail row, its scores at ``positions`` in ``comps`` (one
    comprehension with positional fields: 100,000 of them are most of a full ranking)."""
    freq, rel, div, rec, raw, score, age = comps
    return [
        Candidate(
            d[0],  # key
            d[1],  # path
            int(d[2]),  # start_line
            int(d[3]),  # end_line
            d[4] or "",  # snippet
            int(counts[j]),  # recall_count
            rel[j],  # avg_score
            float(d[5] or 0.0),  # max_score
            int(d[9]),  # unique_queries
            d[6] or "",  # first_recalled_at
            d[7] or "",  # last_recalled_at
            age[j],  # age_days
            score[j],  # score
            raw[j],  # raw_score
            {"frequency": freq[j], "relevance": rel[j], "diversity": div[j], "recency": rec[j]},
            d[8],  # promoted_at
        )
        for d, j in zip(picked, positions, strict=True)
    ]


def _details(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, Any]:
    """The other columns of the rows ``rowids``, by rowid."""
    out: dict[int, Any] = {}
    for i in range(0, len(rowids), _CHUNK):
        part = rowids[i : i + _CHUNK]
        marks = ",".join("?" * len(part))
        sql = _DETAILS.replace("SELECT ", "SELECT rowid, ", 1) + f" WHERE rowid IN ({marks})"
        for row in conn.execute(sql, part):
            out[row[0]] = row[1:]
    return out
