"""The candidate pairs of the last run, kept in ``memcore.sqlite``: a run over a memory that has
not changed since does not search its neighbours again.

    cache = CandidateCache(conn)
    key = candidates_key(views, backend, analyzer)
    cands = cache.get(key)
    if cands is None:
        cands = candidates(views, vecs, analyzer)
        cache.put(key, cands)

Candidates are a pure function of the entries (text and scope, in order), of their vectors
(a function of the texts and the embedding backend's cache id) and of the analyzer (its
fingerprint, :func:`memcore.judge.analysis_cache.fingerprint`), and of the search code; the
key hashes all of them. Only the latest set is kept (one row).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from memcore.judge import candidates as candidates_mod
from memcore.judge import neighbours as neighbours_mod
from memcore.judge.analysis import Analyzer
from memcore.judge.analysis_cache import fingerprint
from memcore.judge.candidates import Candidate
from memcore.judge.protocol import EntryView

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS judge_candidates ("
    " key TEXT NOT NULL PRIMARY KEY, n INTEGER NOT NULL, pairs BLOB NOT NULL, sims BLOB NOT NULL,"
    " sources TEXT NOT NULL) WITHOUT ROWID"
)
_SOURCES = ("knn", "token", "knn+token")


@lru_cache(maxsize=1)
def _code_hash() -> str:
    h = hashlib.sha1()
    for mod in (candidates_mod, neighbours_mod):
        h.update(Path(str(mod.__file__)).read_bytes())
    return h.hexdigest()


def candidates_key(
    entries: Sequence[EntryView], backend: str, analyzer: Analyzer, **params: object
) -> str:
    """The content hash candidate pairs depend on (``params``: the search's own, e.g. k)."""
    h = hashlib.sha1(f"{_code_hash()}|{backend}|{fingerprint(analyzer)}|".encode())
    h.update(repr(sorted(params.items())).encode())
    for e in entries:
        h.update(f"\x1e{e.scope}\x1f{e.text}".encode())
    return h.hexdigest()


class CandidateCache:
    """The last run's candidate pairs by :func:`candidates_key` (one row at most)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(_SCHEMA)

    def get(self, key: str) -> list[Candidate] | None:
        row = self.conn.execute(
            "SELECT n, pairs, sims, sources FROM judge_candidates WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        n, pairs_b, sims_b, sources = row
        pairs = np.frombuffer(pairs_b, dtype=np.int64)
        sims = np.frombuffer(sims_b, dtype=np.float64)
        if pairs.shape != (2 * n,) or sims.shape != (n,) or len(sources) != n:
            return None  # not what put wrote: search again
        ii, jj = pairs[:n].tolist(), pairs[n:].tolist()
        try:
            src = [_SOURCES[int(c)] for c in sources]
        except (ValueError, IndexError):
            return None
        return [
            Candidate(i, j, s, so) for i, j, s, so in zip(ii, jj, sims.tolist(), src, strict=True)
        ]

    def put(self, key: str, cands: Sequence[Candidate]) -> None:
        n = len(cands)
        pairs = np.array([c.i for c in cands] + [c.j for c in cands], dtype=np.int64)
        sims = np.array([c.sim for c in cands], dtype=np.float64)
        sources = "".join(str(_SOURCES.index(c.source)) for c in cands)
        own_tx = not self.conn.in_transaction
        if own_tx:
            self.conn.execute("BEGIN")
        try:
            self.conn.execute("DELETE FROM judge_candidates")
            self.conn.execute(
                "INSERT INTO judge_candidates (key, n, pairs, sims, sources)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, n, pairs.tobytes(), sims.tobytes(), sources),
            )
        except BaseException:
            if own_tx:
                self.conn.execute("ROLLBACK")
            raise
        if own_tx:
            self.conn.execute("COMMIT")
