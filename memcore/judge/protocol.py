"""The judge protocol: what a judge sees of an entry, what it answers, and the verdict cache.

A *judge* looks at candidate pairs of MEMORY.md entries and gives each one verdict:

* ``same``: both state one fact: merge them (``merged_text`` may carry the merged entry);
* ``supersedes``: one replaces the other (``newer`` names the entry that stays);
* ``conflict``: opposite facts, no way to tell which is current (review: "newer wins unless
  the older is pinned");
* ``related``: one subject, different facts, or a qualifier makes both true: leave both;
* ``unrelated``: different subjects.

Judges are pluggable: :class:`memcore.judge.offline.OfflineJudge` (no model),
:class:`memcore.judge.model.ModelJudge` (a configured ``[llm]`` endpoint) and, later, the agent
itself over MCP. Every judge implements :class:`Judge`; its proposals go through
:mod:`memcore.judge.validate` before anything is applied.

Callers build :class:`EntryView` objects from ``memcore.workspace.entries.Entry`` and the
ledger's ``Meta`` (id, text, type, scope, created_at, pinned, importance), and call
:func:`judge_cached` with a ``memcore.sqlite`` connection so a second run with nothing new
makes no model call::

    views = [EntryView(e.id, e.text, m.type, m.scope, m.created_at, m.pinned) for e, m in ...]
    judgements = judge_cached(judge, [(views[i], views[j]) for i, j in pairs], conn)

A judgement whose ``verdict`` is None was *skipped* (the model timed out, answered garbage,
left the pair out): ``reason`` says why; skipped judgements are never cached.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np


class Verdict(StrEnum):
    SAME = "same"
    SUPERSEDES = "supersedes"
    CONFLICT = "conflict"
    RELATED = "related"
    UNRELATED = "unrelated"


VERDICTS = tuple(v.value for v in Verdict)
#: verdicts that say the two entries cannot both stay as they are
CONTRADICTIONS = frozenset({Verdict.SUPERSEDES, Verdict.CONFLICT})


@dataclass(frozen=True)
class EntryView:
    """What a judge may see of one entry. ``created_at`` is ISO 8601 (a date is enough)."""

    id: str
    text: str
    type: str = "unknown"
    scope: str = "global"
    created_at: str = ""
    pinned: bool = False
    importance: float = 0.5

    def key_json(self) -> str:
        """The fields a verdict depends on, as canonical JSON (the id is left out: an entry
        that keeps its text and metadata keeps its verdicts)."""
        return json.dumps(
            [self.text, self.type, self.scope, self.created_at[:10], self.pinned],
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @cached_property
    def key_hash(self) -> str:
        """SHA-1 of :meth:`key_json`, computed once per view (one side of a pair key)."""
        return hashlib.sha1(self.key_json().encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Judgement:
    """One judge's answer for one pair. ``verdict`` None = skipped (``reason`` says why).
    ``newer``: the id of the entry that stays, for ``supersedes`` (and the likely newer one
    for ``conflict`` when dates tell). ``merged_text``: a proposed merged entry for ``same``.
    ``confidence`` is in [0, 1]."""

    verdict: Verdict | None
    reason: str
    confidence: float = 0.0
    newer: str | None = None
    merged_text: str | None = None

    @classmethod
    def skipped(cls, reason: str) -> Judgement:
        return cls(None, reason, 0.0)

    @property
    def ok(self) -> bool:
        return self.verdict is not None


Pair = tuple[EntryView, EntryView]


@runtime_checkable
class Judge(Protocol):
    """A judge: a stable id (part of the cache key: change it when the judge's behaviour
    changes) and a batched ``judge`` that returns one judgement per pair, in order."""

    judge_id: str

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]: ...


@runtime_checkable
class Embeds(Protocol):
    """The part of ``memcore.search.embeddings.Embedder`` a judge uses (structural, so the
    judge layer does not import the search layer)."""

    id: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


# -- verdict cache ------------------------------------------------------------------------


def pair_key(a: EntryView, b: EntryView) -> str:
    """Order-independent content hash of a pair: both texts and the metadata that matters."""
    ha, hb = a.key_hash, b.key_hash
    if hb < ha:
        ha, hb = hb, ha
    return hashlib.sha1(f"{ha}|{hb}".encode()).hexdigest()


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS judge_verdicts ("
    " pair TEXT NOT NULL, judge TEXT NOT NULL, verdict TEXT NOT NULL, reason TEXT NOT NULL,"
    " confidence REAL NOT NULL, newer_side TEXT, merged_text TEXT,"
    " PRIMARY KEY (pair, judge)) WITHOUT ROWID"
)


class VerdictCache:
    """Verdicts in ``memcore.sqlite`` keyed by (pair content hash, judge id). ``newer`` is
    stored as the content hash of the newer side, so it maps back to whichever id the entry
    has when it is read."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(_SCHEMA)

    def _holds(self, judge_id: str) -> bool:
        """Whether any verdict of ``judge_id`` is cached."""
        row = self.conn.execute(
            "SELECT 1 FROM judge_verdicts WHERE judge = ? LIMIT 1", (judge_id,)
        ).fetchone()
        return row is not None

    def get_many(
        self, judge_id: str, pairs: Sequence[Pair], keys: Sequence[str] | None = None
    ) -> dict[int, Judgement]:
        """Cached judgements by position in ``pairs`` (``keys``: their :func:`pair_key`, when
        the caller has them already). One query, however many pairs."""
        if keys is None:
            keys = [pair_key(a, b) for a, b in pairs]
        found: dict[str, tuple[str, str, float, str | None, str | None]] = {}
        if keys and self._holds(judge_id):  # (a first run: no lookup of 70,000 keys)
            for row in self.conn.execute(
                "SELECT pair, verdict, reason, confidence, newer_side, merged_text"
                " FROM judge_verdicts WHERE judge = ?"
                " AND pair IN (SELECT value FROM json_each(?))",
                (judge_id, json.dumps(list(dict.fromkeys(keys)))),
            ):
                found[row[0]] = (row[1], row[2], float(row[3]), row[4], row[5])
        out: dict[int, Judgement] = {}
        for i, ((a, b), k) in enumerate(zip(pairs, keys, strict=True)):
            hit = found.get(k)
            if hit is None or hit[0] not in VERDICTS:
                continue
            verdict, reason, conf, side, merged = hit
            newer = None
            if side is not None:
                newer = a.id if side == a.key_hash else b.id if side == b.key_hash else None
            out[i] = Judgement(Verdict(verdict), reason, conf, newer, merged)
        return out

    def put_many(
        self,
        judge_id: str,
        pairs: Sequence[Pair],
        judgements: Sequence[Judgement],
        keys: Sequence[str] | None = None,
    ) -> None:
        """Store judgements (``keys``: the pairs' :func:`pair_key`, when the caller has them);
        skipped ones are left out."""
        if keys is None:
            keys = [pair_key(a, b) for a, b in pairs]
        rows = []
        for (a, b), j, key in zip(pairs, judgements, keys, strict=True):
            if j.verdict is None:
                continue  # skipped: ask again next time
            side = a.key_hash if j.newer == a.id else b.key_hash if j.newer == b.id else None
            verdict = j.verdict.value
            rows.append((key, judge_id, verdict, j.reason, j.confidence, side, j.merged_text))
        if not rows:
            return
        rows.sort(key=lambda r: r[0])  # key order (stable): the B-tree fills front to back
        own_tx = not self.conn.in_transaction
        if own_tx:
            self.conn.execute("BEGIN")
        try:
            self.conn.executemany(
                "INSERT OR REPLACE INTO judge_verdicts"
                " (pair, judge, verdict, reason, confidence, newer_side, merged_text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        except BaseException:
            if own_tx:
                self.conn.execute("ROLLBACK")
            raise
        if own_tx:
            self.conn.execute("COMMIT")

    def prune(self, judge_id: str | None = None) -> int:
        """Drop cached verdicts (of one judge, or all); returns how many went."""
        if judge_id is None:
            return self.conn.execute("DELETE FROM judge_verdicts").rowcount
        return self.conn.execute("DELETE FROM judge_verdicts WHERE judge = ?", (judge_id,)).rowcount


def judge_cached(
    judge: Judge, pairs: Sequence[Pair], conn: sqlite3.Connection | None
) -> list[Judgement]:
    """``judge.judge(pairs)`` through the verdict cache: only pairs without a cached verdict
    reach the judge (none at all when nothing changed); new verdicts are stored."""
    if conn is None:
        return judge.judge(pairs)
    cache = VerdictCache(conn)
    keys = [pair_key(a, b) for a, b in pairs]
    have = cache.get_many(judge.judge_id, pairs, keys)
    todo = [i for i in range(len(pairs)) if i not in have]
    if todo:
        fresh = judge.judge([pairs[i] for i in todo])
        if len(fresh) != len(todo):
            raise ValueError(
                f"judge {judge.judge_id} returned {len(fresh)} judgements for {len(todo)} pairs"
            )
        cache.put_many(judge.judge_id, [pairs[i] for i in todo], fresh, [keys[i] for i in todo])
        have.update(zip(todo, fresh, strict=True))
    return [have[i] for i in range(len(pairs))]
