"""Memory search: an incremental SQLite FTS5 + hashing-vector index, and calibrated hit scores.

The index (``memcore.search.index``) covers MEMORY.md and every markdown file under
``memory/`` except ``memory/.dreams/`` and is brought up to date before each search, so a
search never returns stale lines.

Score of a hit, in [0, 1], a function of the query, the chunk and corpus statistics only (never
of the other results)::

    score       = specificity * (0.5 * coverage + 0.5 * semantic)
    coverage    = min(1, bm25 / bm25_ref)
    bm25_ref    = I * (1 + 0.35 * absent / present)      I = sum of idf(t) over present terms
    idf(t)      = max(1e-6, ln((N - n_t + 0.5) / (n_t + 0.5)))
    specificity = min(1, I / ln((N - 1.5) / 2.5))
    semantic    = clamp((cos - 0.05) / (0.45 - 0.05), 0, 1)

Query terms are its words minus stop words; ``present`` terms occur in at least one chunk,
``absent`` ones in none. ``bm25`` is FTS5's score of the chunk (k1 = 1.2, b = 0.75, sign
flipped; heading context weighs 0.3 against the chunk's own text), ``N`` the number of chunks
and ``n_t`` the chunks containing ``t``. ``I`` is exactly the bm25 of an average-length chunk
that holds every present term once, so ``coverage`` reads "how fully the chunk covers the
query, rare terms counting more"; absent terms lower it a little (they may be filler of a
natural-language question, or a real miss). ``specificity`` says whether the query could single
out a chunk at all: it is 1 once the terms carry as much IDF as one word found in just two
chunks, so a bare common word ("deploy") scores low on every chunk. ``cos`` is the cosine of the
hashing vectors (word + char 3/4-grams, IDF fitted on the indexed chunks) of query and chunk; a
chunk that states what a short query asks reaches about 0.45 (measured on the example
workspace, ``bench/bench_search.py``). See docs/search.md for the calibration.

Candidates are the FTS5 matches of any query term, the best ``CANDIDATES`` by bm25; only they
get a cosine (sparse vectors stored per chunk, IDF applied at query time), which keeps a search
over 1,000 daily notes well under 20 ms without holding 10k x 4096 floats in memory.
"""

from __future__ import annotations

import logging
import math
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memcore.errors import MemcoreError
from memcore.search.chunks import CJK_RE, Chunk, chunk_markdown, fts_text
from memcore.search.index import (
    IndexReport,
    index_stats,
    load_df,
    open_index,
    update_index,
)
from memcore.workspace.core import Workspace
from memcore.workspace.progress import Progress

if TYPE_CHECKING:
    from memcore.workspace.config import DreamingSettings

__all__ = [
    "Chunk",
    "IndexReport",
    "SearchResult",
    "chunk_markdown",
    "hit_score",
    "index_stats",
    "last_record_error",
    "open_index",
    "query_index",
    "search",
    "update_index",
]

log = logging.getLogger(__name__)

CANDIDATES = 64
CONTEXT_WEIGHT = 0.3
ABSENT_WEIGHT = 0.35
COS_FLOOR = 0.05
COS_FULL = 0.45
SNIPPET_CHARS = 700
MAX_QUERY_TERMS = 32
RECORD_LOCK_TIMEOUT = 0.0  # a search folds the recall log only if the lock is free now
INDEX_BUSY_MS = 5000  # a search waits this long for a busy index, then searches a copy
RECALL_ERRORS = "recall-errors.json"


# -- querying ---------------------------------------------------------------------------


def query_terms(query: str) -> list[str]:
    """Distinct word tokens of the query, stop words dropped (kept if nothing else is left)."""
    from memcore.search.embeddings.hashing import STOP_WORDS

    words = [w for w in re.findall(r"\w+", query.lower()) if w.strip("_")]
    kept = [w for w in words if w not in STOP_WORDS] or words
    terms: list[str] = []
    for w in kept:
        terms.extend(_cjk_bigrams(w) if CJK_RE.search(w) else [w])
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def _cjk_bigrams(word: str) -> list[str]:
    """A word with CJK runs as terms: other parts whole, CJK runs as character bigrams."""
    out: list[str] = []
    for part in re.split(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)", word):
        if not part:
            continue
        if CJK_RE.match(part):
            out.extend(
                [part] if len(part) == 1 else [part[i : i + 2] for i in range(len(part) - 1)]
            )
        else:
            out.append(part)
    return out


def _fts_phrase(term: str) -> str:
    return '"' + fts_text(term).strip().replace('"', '""') + '"'


def semantic_score(cos: float) -> float:
    """The calibrated stretch of a hashing cosine to [0, 1] (see module docstring)."""
    return min(1.0, max(0.0, (cos - COS_FLOOR) / (COS_FULL - COS_FLOOR)))


def query_specificity(info: float, n_chunks: int) -> float:
    """How sharply a query can single out chunks: its terms' total IDF against the IDF of a
    term found in just two chunks (1.0 when at least that specific)."""
    floor = math.log((n_chunks - 1.5) / 2.5) if n_chunks > 4 else 0.0
    return 1.0 if floor <= 0 else min(1.0, max(0.0, info / floor))


def hit_score(
    bm25: float, bm25_ref: float, cos: float, specificity: float = 1.0
) -> tuple[float, float, float]:
    """(score, lexical, semantic) of one hit; every value in [0, 1]."""
    lexical = min(1.0, max(0.0, bm25 / bm25_ref)) if bm25_ref > 1e-9 else 0.0
    semantic = semantic_score(cos)
    return specificity * (0.5 * lexical + 0.5 * semantic), lexical, semantic


def query_index(
    conn: sqlite3.Connection, query: str, limit: int, *, explain: bool = False
) -> list[dict[str, Any]]:
    """Scored hits of ``query`` from an up-to-date index, best first.

    With ``explain`` each hit also carries its ``lexical`` and ``semantic`` parts.
    """
    import numpy as np

    from memcore.search.embeddings.hashing import idf_from_df, raw_features

    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    n_total = conn.execute("SELECT count(*) FROM search_chunks").fetchone()[0]
    if n_total == 0:
        return []
    idfs: list[float] = []
    present: list[str] = []
    absent = 0
    for t in terms:
        n_t = conn.execute(
            "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?", (_fts_phrase(t),)
        ).fetchone()[0]
        if n_t == 0:
            absent += 1
            continue
        present.append(t)
        idf = math.log((n_total - n_t + 0.5) / (n_t + 0.5))
        idfs.append(idf if idf > 0 else 1e-6)
    if not present:
        return []
    info = sum(idfs)
    bm25_ref = info + absent * ABSENT_WEIGHT * info / len(idfs)
    specificity = query_specificity(info, n_total)
    match = " OR ".join(_fts_phrase(t) for t in present)
    cands = conn.execute(
        f"SELECT rowid, -bm25(search_fts, 1.0, {CONTEXT_WEIGHT}) FROM search_fts"
        f" WHERE search_fts MATCH ? ORDER BY bm25(search_fts, 1.0, {CONTEXT_WEIGHT}) LIMIT ?",
        (match, max(CANDIDATES, limit * 4)),
    ).fetchall()
    if not cands:
        return []
    bm25 = {int(r[0]): float(r[1]) for r in cands}
    marks = ",".join("?" * len(bm25))
    rows = conn.execute(
        "SELECT id, path, start_line, end_line, text, vidx, vval FROM search_chunks"
        f" WHERE id IN ({marks})",
        list(bm25),
    ).fetchall()
    df, n_docs = load_df(conn)
    idf_w = idf_from_df(df, n_docs)
    q_idx, q_val = raw_features(query)
    q = np.zeros(idf_w.shape[0], dtype=np.float32)
    q[q_idx.astype(np.intp)] = q_val * idf_w[q_idx.astype(np.intp)]
    q_norm = float(np.linalg.norm(q))
    hits: list[dict[str, Any]] = []
    for cid, path, start, end, text, vidx, vval in rows:
        idx = np.frombuffer(vidx, dtype=np.uint16).astype(np.intp)
        d = np.frombuffer(vval, dtype=np.float32) * idf_w[idx]
        d_norm = float(np.linalg.norm(d))
        cos = float(d @ q[idx]) / (d_norm * q_norm) if d_norm > 0 and q_norm > 0 else 0.0
        score, lexical, semantic = hit_score(bm25[cid], bm25_ref, cos, specificity)
        hit = {
            "path": path,
            "startLine": int(start),
            "endLine": int(end),
            "score": round(score, 6),
            "snippet": _snippet(text),
            "source": "memory",
        }
        if explain:
            hit.update(lexical=round(lexical, 6), semantic=round(semantic, 6), cosine=round(cos, 6))
        hits.append(hit)
    hits.sort(key=lambda h: (-h["score"], h["path"], h["startLine"]))
    return hits[:limit]


def _snippet(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


# -- search + recording -----------------------------------------------------------------


@dataclass
class SearchResult:
    """Hits of one search, what the index update did, and what recording did."""

    query: str
    results: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    record_error: str | None = None
    recorded: int = 0
    index: IndexReport = field(default_factory=IndexReport)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query, "results": self.results}
        if self.warnings:
            out["warnings"] = self.warnings
        return out


def search(
    ws: Workspace,
    query: str,
    *,
    limit: int = 10,
    now: datetime | None = None,
    record: bool = True,
    settings: DreamingSettings | None = None,
    lock_timeout: float = RECORD_LOCK_TIMEOUT,
    origin: str = "interactive",
    progress: Progress | None = None,
) -> SearchResult:
    """Update the index, search it, and record eligible hits in the recall store.

    The index is memcore's own data, so a search writes it (and the recall log); when the
    database is locked, read-only or otherwise unusable the search runs on an index built in
    memory and says so in ``warnings``. Recording never waits for the workspace lock (the
    recall log takes the hits); its failure (an unwritable folder, an invalid config...) is
    logged, kept in ``recall-errors.json`` and returned in ``record_error``; the hits are
    returned regardless. ``origin`` says what issued the search (entries.ORIGINS);
    ``progress`` follows the index update (see ``update_index``).
    """
    from memcore.workspace.clock import utcnow

    now = now or utcnow()
    warnings: list[str] = []
    try:
        report, results = _search_on_disk(ws, query, limit, progress)
    except (MemcoreError, sqlite3.Error, OSError) as exc:
        warnings.append(f"index not updated ({exc}); searched a temporary in-memory index")
        report, results = _search_in_memory(ws, query, limit, progress)
    warnings.extend(f"skipped {path}: {reason}" for path, reason in report.skipped)
    out = SearchResult(query=query, results=results, warnings=warnings, index=report)
    if record and results:
        out.recorded, out.record_error, notices = _record(
            ws, query, results, now, settings, lock_timeout, origin
        )
        out.warnings.extend(notices)
        _record_memory_access(ws, results, now)
    return out


def _search_on_disk(
    ws: Workspace, query: str, limit: int, progress: Progress | None = None
) -> tuple[IndexReport, list[Any]]:
    from memcore.workspace.db import busy_timeout, check_deferred

    with busy_timeout(INDEX_BUSY_MS), check_deferred():
        conn = open_index(ws)
    try:
        report = update_index(conn, ws, progress=progress)
        return report, query_index(conn, query, limit)
    finally:
        conn.close()


def _search_in_memory(
    ws: Workspace, query: str, limit: int, progress: Progress | None = None
) -> tuple[IndexReport, list[Any]]:
    """Index the workspace into a throwaway in-memory database and search that."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        report = update_index(conn, ws, progress=progress)
        return report, query_index(conn, query, limit)
    finally:
        conn.close()


def _record(
    ws: Workspace,
    query: str,
    results: list[dict[str, Any]],
    now: datetime,
    settings: DreamingSettings | None,
    lock_timeout: float,
    origin: str,
) -> tuple[int, str | None, list[str]]:
    try:
        from memcore.recall.scoring import Thresholds, passes_gates
        from memcore.recall.store import record_recalls
        from memcore.workspace.config import dreaming_settings, get_bool, load_config

        cfg = load_config(ws)
        if not get_bool(cfg, "search", "record", True):
            return 0, None, []  # the user turned recall recording off ([search] record = false)
        s = settings if settings is not None else dreaming_settings(cfg)
        th = Thresholds.from_settings(s).sanitized()
        res = record_recalls(
            ws,
            query,
            results,
            now=now,
            max_entries=s.max_entries,
            protect=lambda entry: passes_gates(entry, now, th),
            lock_timeout=lock_timeout,
            origin=origin,
        )
    except Exception as exc:
        message = f"recall recording failed: {exc}"
        log.warning("%s", message)
        _save_record_error(ws, now, message, query)
        return 0, message, []
    if res.fold_error:
        message = f"recall recording failed: {res.fold_error}"
        log.warning("%s", message)
        _save_record_error(ws, now, message, query)
        return res.recorded, message, res.notices
    if res.folded:
        _mark_resolved(ws, now)
    return res.recorded, None, res.notices


def _save_record_error(ws: Workspace, now: datetime, message: str, query: str) -> None:
    import orjson

    from memcore.workspace.clock import iso_ms
    from memcore.workspace.core import atomic_write_bytes

    doc = {"at": iso_ms(now), "error": message, "query": query}
    try:
        ws.ensure_dreams_dir()
        atomic_write_bytes(
            ws.dreams_dir / RECALL_ERRORS, orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
        )
    except Exception as exc:  # best-effort: the search answers anyway
        log.warning(
            "could not save the recording failure to %s: %s", ws.dreams_dir / RECALL_ERRORS, exc
        )


def _mark_resolved(ws: Workspace, now: datetime) -> None:
    """After a successful recording, stamp an unresolved saved failure with ``resolvedAt``."""
    import orjson

    from memcore.workspace.clock import iso_ms
    from memcore.workspace.core import atomic_write_bytes

    path = ws.dreams_dir / RECALL_ERRORS
    doc = last_record_error(ws)
    if doc is None or doc.get("resolvedAt"):
        return
    doc["resolvedAt"] = iso_ms(now)
    try:
        atomic_write_bytes(path, orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    except Exception as exc:
        log.warning("could not update %s: %s", path, exc)


def last_record_error(ws: Workspace) -> dict[str, Any] | None:
    """The last recording failure ``{at, error, query[, resolvedAt]}``, or None.

    ``resolvedAt`` is set when a later search recorded successfully.
    """
    import orjson

    path = ws.dreams_dir / RECALL_ERRORS
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("error"), str) else None


def _record_memory_access(ws: Workspace, results: list[dict[str, Any]], now: datetime) -> None:
    """Hits on MEMORY.md count as accesses in the long-term ledger (consolidation's decay)."""
    hits = [r for r in results if r["path"] == "MEMORY.md"]
    if not hits:
        return
    from memcore.recall.ledger import record_access

    try:
        record_access(ws, hits, now)
    except Exception as exc:
        log.warning("could not record MEMORY.md accesses in the ledger: %s", exc)
