"""Typo tolerance for query words that occur in no chunk.

A word the index has never seen ("pubilsh", "rsnyc") is replaced by the indexed term nearest
to it in edit distance (adjacent swaps count as one edit), when one is close enough: one edit
for words of 5-7 letters, two from 8 letters on; shorter words, numbers and CJK text are left
alone. Indexed terms are FTS5's (lower-cased, diacritics removed, Porter-stemmed), read through
an ``fts5vocab`` table in the connection's temporary schema, so nothing is written to the
database. Only terms starting with the word's first letter are compared, which keeps a lookup
to a few hundred comparisons on 10,000 chunks.
"""

from __future__ import annotations

import sqlite3
import unicodedata

MIN_LEN = 5
_VOCAB = "temp.search_vocab_rows"


def max_edits(word: str) -> int:
    """Edits allowed for a word of this length (0: never corrected)."""
    if len(word) < MIN_LEN or not word.isalpha() or not word.isascii():
        return 0
    return 1 if len(word) < 8 else 2


def osa_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance of ``a`` and ``b``, or ``limit + 1`` once it is
    certainly larger than ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def _ascii_fold(word: str) -> str:
    return "".join(
        c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)
    ).lower()


def _ensure_vocab(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB} USING fts5vocab(main, search_fts, row)"
        )
    except sqlite3.Error:
        return False
    return True


def correct(conn: sqlite3.Connection, word: str) -> str | None:
    """The indexed term nearest to ``word`` within :func:`max_edits`, most frequent first on
    a tie; None when there is none (or the word is not one to correct)."""
    limit = max_edits(word)
    if limit == 0 or not _ensure_vocab(conn):
        return None
    word = _ascii_fold(word)
    lo = word[0]
    hi = chr(ord(lo) + 1)
    best: tuple[int, int, str] | None = None
    try:
        rows = conn.execute(
            f"SELECT term, doc FROM {_VOCAB} WHERE term >= ? AND term < ?", (lo, hi)
        ).fetchall()
    except sqlite3.Error:
        return None
    for term, doc in rows:
        if len(term) < MIN_LEN - 1 or abs(len(term) - len(word)) > limit + 2:
            continue
        d = osa_distance(word, term, limit)
        if d > limit and len(term) < len(word):
            # a stem ("retent") against the typed word's start ("retnet")
            d = osa_distance(word[: len(term)], term, limit) + (1 if len(term) < 5 else 0)
        if d <= limit and (best is None or (d, -doc) < (best[0], -best[1])):
            best = (d, doc, term)
    return best[2] if best is not None else None
