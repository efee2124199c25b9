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
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from memcore.recall.mirror import epoch_us
from memcore.recall.scoring import _DAY_S, Candidate, Thresholds, frequency

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
    """Candidates best first (at most ``limit``), and how many entries each gate excluded."""

    candidates: list[Candidate]
    exclusions: dict[str, int]
    passing: int  # candidates before the limit


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
) -> Ranking:
    """Rank every entry of the mirror on ``conn`` as :func:`scoring.rank` ranks the entries
    (same candidates, scores and order), counting the first gate each excluded entry fails."""
    factory = conn.row_factory
    conn.row_factory = None  # plain tuples: a Row per entry costs more than the scoring
    snapshot = not conn.in_transaction
    if snapshot:  # both queries read one state of the mirror, whoever writes meanwhile
        conn.execute("BEGIN")
    try:
        return _rank(conn, now, th.sanitized(), limit, include_promoted)
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
    uniq, inverse = np.unique(c, return_inverse=True)
    freq = np.array([frequency(int(v)) for v in uniq], dtype=np.float64)[inverse]
    rel = _clamp(total[idx] / np.maximum(1, c).astype(np.float64))
    div = _clamp(uq[idx].astype(np.float64) / 5)
    # age in days exactly as timedelta.total_seconds() / 86400 gives it
    delta_us = np.where(has_last[idx], epoch_us(now) - last[idx], 0)
    age = np.maximum(0.0, delta_us.astype(np.float64) / 10**6 / _DAY_S)
    k = -(math.log(2) / th.half_life_days)
    exps = np.array([math.exp(v) for v in (k * age).tolist()], dtype=np.float64)
    rec = np.where(np.isfinite(age) & (age >= 0), _clamp(exps), 1.0)
    w = th.weights
    raw = w["frequency"] * freq + w["relevance"] * rel
    raw = raw + w["diversity"] * div
    raw = raw + w["recency"] * rec
    score = _clamp(raw)
    rel_ok = rel >= th.min_relevance
    fail_rel = int(np.count_nonzero(~rel_ok))
    keep = rel_ok & (raw >= th.min_score)
    fail_score = int(np.count_nonzero(rel_ok & ~keep))

    sel = np.nonzero(keep)[0]
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
    positions = order.tolist()
    rows_at = idx[order].tolist()
    comps = [a.tolist() for a in (freq, rel, div, rec, raw, score, age)]
    counts = c.tolist()
    if len(rows_at) * 2 > n:  # most rows: one scan in the same (path, key) order
        every = conn.execute(_DETAILS + " ORDER BY path, key").fetchall()
        picked = [every[i] for i in rows_at]
    else:
        by_rowid = _details(conn, [rowids[i] for i in rows_at])
        picked = [by_rowid[rowids[i]] for i in rows_at]
    cands = [_candidate(d, counts[j], j, comps) for d, j in zip(picked, positions, strict=True)]
    return Ranking(cands, exclusions, passing)


def _candidate(d: tuple[Any, ...], count: int, j: int, comps: list[list[float]]) -> Candidate:
    freq, rel, div, rec, raw, score, age = comps
    return Candidate(
        key=d[0],
        path=d[1],
        start_line=int(d[2]),
        end_line=int(d[3]),
        snippet=d[4] or "",
        recall_count=int(count),
        avg_score=rel[j],
        max_score=float(d[5] or 0.0),
        unique_queries=int(d[9]),
        first_recalled_at=d[6] or "",
        last_recalled_at=d[7] or "",
        age_days=age[j],
        score=score[j],
        raw_score=raw[j],
        components={
            "frequency": freq[j],
            "relevance": rel[j],
            "diversity": div[j],
            "recency": rec[j],
        },
        promoted_at=d[8],
    )


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
