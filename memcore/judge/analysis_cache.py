"""Entry analyses kept in ``memcore.sqlite``, so a run over unchanged entries analyses nothing.

    cache = AnalysisCache(conn)
    cache.load(analyzer, texts)    # stored analyses go into the analyzer's own cache
    ...                            # analyse / judge as usual
    cache.store(analyzer, texts)   # what was analysed now is kept; rows of other texts go

An analysis is a pure function of the text and of the analyzer: its alias table and the names
the memory writes capitalised (:meth:`memcore.judge.analysis.Analyzer.for_texts`), and of the
analysis code itself. The key is the SHA-1 of the text, of the analyzer's alias table and the
source of the analysis and alias modules and the fields of
:class:`~memcore.judge.analysis.Analysis`, and of the learned names *this text writes*
(:func:`~memcore.judge.analysis.word_bases`: the only names its analysis looks up): a memory
that learns a new alias, or a memcore whose analysis changed, reads nothing stale; a name
learned or lost elsewhere in the memory (a merge removed the only capitalised "Atlas")
re-analyses only the entries that write that word.

Rows are JSON (never pickle: memcore.sqlite is data, not code).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from memcore.judge import aliases as aliases_mod
from memcore.judge import analysis as analysis_mod
from memcore.judge.analysis import Analysis, Analyzer, Value, word_bases

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS judge_analyses ("
    " key TEXT NOT NULL PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID"
)
_FIELDS = tuple(f.name for f in dataclasses.fields(Analysis))


@lru_cache(maxsize=1)
def _code_hash() -> str:
    h = hashlib.sha1()
    for mod in (analysis_mod, aliases_mod):
        h.update(Path(str(mod.__file__)).read_bytes())
    h.update(" ".join(_FIELDS).encode())
    return h.hexdigest()


def _tables(analyzer: Analyzer) -> str:
    """The analysis code and the analyzer's alias table, as one hash (not its names)."""
    h = hashlib.sha1(_code_hash().encode())
    for key, canon in sorted(analyzer.aliases.phrases.items()):
        h.update(("\x1e" + " ".join(key) + "\x1f" + " ".join(canon)).encode())
    h.update(str(analyzer.aliases.longest).encode())
    return h.hexdigest()


def fingerprint(analyzer: Analyzer) -> str:
    """What every analysis by ``analyzer`` depends on besides the text, as one hash."""
    h = hashlib.sha1(_tables(analyzer).encode())
    h.update("\x1f".join(sorted(analyzer.names)).encode())
    return h.hexdigest()


def _key(tables: str, analyzer: Analyzer, text: str) -> str:
    """One analysis's key: the text, the tables, and only the learned names the text writes
    (a name learned or lost elsewhere in the memory does not change this text's analysis, so
    a run after merges reads the analyses of every entry the merges left alone)."""
    names = "\x1f".join(sorted(analyzer.names & word_bases(text)))
    return hashlib.sha1(f"{tables}\n{names}\n{text}".encode()).hexdigest()


class _Unstorable(Exception):
    """A field of a type this module does not know (the analysis grew): do not cache."""


def _encode(an: Analysis) -> bytes:
    row: dict[str, Any] = {}
    for name in _FIELDS:
        v = getattr(an, name)
        if isinstance(v, str | bool):
            row[name] = v
        elif isinstance(v, tuple) and all(isinstance(x, str) for x in v):
            row[name] = ["T", list(v)]
        elif isinstance(v, tuple) and all(isinstance(x, Value) for x in v):
            row[name] = ["V", [[x.kind, x.norm, x.raw, x.slot] for x in v]]
        elif isinstance(v, frozenset) and all(isinstance(x, str) for x in v):
            row[name] = ["F", list(v)]
        elif isinstance(v, frozenset) and all(
            isinstance(x, tuple) and all(isinstance(y, str) for y in x) for x in v
        ):
            row[name] = ["P", [list(x) for x in v]]
        else:
            raise _Unstorable(name)
    return orjson.dumps(row)


def _decode(data: bytes) -> Analysis:
    row = orjson.loads(data)
    kw: dict[str, Any] = {}
    for name in _FIELDS:
        v = row[name]
        if isinstance(v, list):
            tag, items = v
            if tag == "T":
                v = tuple(items)
            elif tag == "V":
                v = tuple(Value(*x) for x in items)
            elif tag == "F":
                v = frozenset(items)
            elif tag == "P":
                v = frozenset(tuple(x) for x in items)
            else:
                raise ValueError(f"unknown tag {tag!r}")
        kw[name] = v
    return Analysis(**kw)


class AnalysisCache:
    """Analyses in ``memcore.sqlite`` keyed by SHA-1 of (analyzer fingerprint, text)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(_SCHEMA)
        self._loaded: set[str] = set()
        self._keys: tuple[str, frozenset[str], dict[str, str]] = ("", frozenset(), {})

    def load(self, analyzer: Analyzer, texts: Iterable[str]) -> int:
        """Put the stored analyses of ``texts`` into ``analyzer``'s cache; returns how many
        were found. A row that does not decode is skipped (analysed again, then replaced)."""
        fp = _tables(analyzer)
        keys = {_key(fp, analyzer, t): t for t in dict.fromkeys(texts)}
        self._keys = (fp, analyzer.names, {t: k for k, t in keys.items()})
        if not keys:
            return 0
        found: dict[str, Analysis] = {}
        for key, data in self.conn.execute(
            "SELECT key, data FROM judge_analyses WHERE key IN (SELECT value FROM json_each(?))",
            (json.dumps(list(keys)),),
        ):
            text = keys[key]
            try:
                an = _decode(data)
            except (ValueError, TypeError, KeyError):
                continue
            if an.text == text:
                found[text] = an
        analyzer.preload(found)
        self._loaded = set(found)
        return len(found)

    def store(self, analyzer: Analyzer, texts: Sequence[str]) -> int:
        """Keep the analyses of ``texts`` not loaded from here (analysing those not analysed
        yet) and drop every other row; returns how many were written."""
        fp = _tables(analyzer)
        unique = list(dict.fromkeys(texts))
        known = self._keys[2] if self._keys[:2] == (fp, analyzer.names) else {}
        keys = [known.get(t) or _key(fp, analyzer, t) for t in unique]  # load made most
        rows: list[tuple[str, bytes]] = []
        try:
            for t, key in zip(unique, keys, strict=True):
                if t not in self._loaded:
                    rows.append((key, _encode(analyzer.analyse(t))))
        except _Unstorable:
            return 0
        rows.sort(key=lambda r: r[0])  # in key order: the B-tree is filled front to back
        keep = json.dumps(keys)
        own_tx = not self.conn.in_transaction
        if own_tx:
            self.conn.execute("BEGIN")
        try:
            self.conn.execute(
                "DELETE FROM judge_analyses WHERE key NOT IN (SELECT value FROM json_each(?))",
                (keep,),
            )
            self.conn.executemany(
                "INSERT OR REPLACE INTO judge_analyses (key, data) VALUES (?, ?)", rows
            )
        except BaseException:
            if own_tx:
                self.conn.execute("ROLLBACK")
            raise
        if own_tx:
            self.conn.execute("COMMIT")
        return len(rows)
