"""Memory search: hybrid retrieval over the incremental index, with calibrated hit scores.

The index (``memcore.search.index``) covers MEMORY.md and every markdown file under
``memory/`` except ``memory/.dreams/`` and is brought up to date before each search, so a
search never returns stale lines; with a model backend, ``memcore.search.dense`` keeps one
vector per chunk piece up to date after it.

Candidates (:func:`candidates`) are the best ``CANDIDATES`` FTS5 matches of any query term (a
term no chunk holds is replaced by its nearest indexed spelling, ``memcore.search.fuzzy``) and
the ``dense.TOP`` nearest chunks by the model's vectors. Each gets its signals:

    lexical     = specificity * min(1, bm25 / bm25_ref)
    bm25_ref    = I * (1 + 0.35 * absent / present)      I = sum of idf(t) over present terms
    idf(t)      = max(1e-6, ln((N - n_t + 0.5) / (n_t + 0.5)))
    specificity = min(1, I / ln((N - 1.5) / 2.5))
    hashed      = clamp((cos_hashing - 0.05) / (0.45 - 0.05), 0, 1)
    dense       = model similarity (mean of the whole chunk's cosine and its best piece's),
                  and the places by model similarity and by bm25

``bm25`` is FTS5's score (k1 = 1.2, b = 0.75, sign flipped; heading context weighs 0.3), ``N``
the number of chunks and ``n_t`` the chunks containing ``t``. ``memcore.search.fusion`` turns
the signals into one calibrated score (a logistic model fitted per backend on the labelled
queries of bench/eval/search); 1.000 only for a chunk whose text is the query. See
docs/concepts/search.md.
"""

from __future__ import annotations

import logging
import math
import re
import sqlite3
import threading
from collections import OrderedDict
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
    from memcore.recall.log import Event
    from memcore.search.companion import PendingOpinion
    from memcore.search.connections import IndexPool
    from memcore.search.embeddings import Embedder
    from memcore.search.recorder import BatchRecorder
    from memcore.workspace.config import Config, DreamingSettings

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
#: Hits scoring below this are returned but not recorded as recalls: a calibrated 0.2 is a hit
#: about four times in five not an answer, a side hit that would otherwise add to the recall
#: count (frequency) of a broad line many queries graze, and dilute the mean relevance of a
#: fact that answered other searches well.
RECORD_MIN_SCORE = 0.2


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
    """(score, lexical, semantic) of one hit on the lexical and hashing signals alone (the
    hashing backend's calibration); every value in [0, 1]."""
    from memcore.search.fusion import CALIBRATIONS, fused_score

    coverage = min(1.0, max(0.0, bm25 / bm25_ref)) if bm25_ref > 1e-9 else 0.0
    lexical = specificity * coverage
    semantic = semantic_score(cos)
    return fused_score(CALIBRATIONS["hashing"], lexical, semantic, None), lexical, semantic


@dataclass
class Candidate:
    """One chunk a query brought up, with its signals (see ``memcore.search.fusion``)."""

    id: int
    path: str
    start_line: int
    end_line: int
    text: str
    lexical: float
    hashed: float
    cosine: float  # the hashing cosine, before calibration
    dense: float | None
    specificity: float = 0.0  # of the query (see query_specificity); 0 without lexical match
    lexical_rank: int = 0  # 1-based place by bm25 among all chunks (0: not a lexical match)
    dense_rank: int = 0  # 1-based place by model cosine among all chunks (0: none)
    single_term: bool = False  # the query is one word once stop words are dropped
    second: float | None = None  # the second model's cosine (memcore.search.companion)
    second_rank: int = 0  # 1-based place by it among all chunks (0: no second model)


def candidates(
    conn: sqlite3.Connection, query: str, embedder: Embedder | None = None
) -> list[Candidate]:
    """Every chunk the lexical index or the model vectors bring up for ``query``.

    Lexical: the best ``CANDIDATES`` FTS5 matches of any query term (a word no chunk holds is
    replaced by the nearest indexed term, see ``memcore.search.fuzzy``). Semantic: the
    ``dense.TOP`` nearest chunks by the model's vectors, when the backend keeps them.
    """

    from memcore.search import companion
    from memcore.search.embeddings import one_blas_thread

    terms = query_terms(query)
    if not terms:
        return []
    figures = _index_figures(conn)
    if figures.n_total == 0:
        return []
    with one_blas_thread():  # the second model's thread too: it ends inside
        # the second model's view, when it ranks this query, on a thread of its own
        started = companion.start_opinion(conn, embedder, query)
        try:
            return _gather(conn, query, embedder, terms, figures, started)
        finally:
            if started is not None:
                started.join()  # the search stopped early: its thread ends with it


def _gather(
    conn: sqlite3.Connection,
    query: str,
    embedder: Embedder | None,
    terms: list[str],
    figures: _Figures,
    started: PendingOpinion | None,
) -> list[Candidate]:
    """:func:`candidates` once the query has terms and the index chunks."""
    import numpy as np

    from memcore.search import dense as dense_mod
    from memcore.search.embeddings import one_blas_thread
    from memcore.search.embeddings.hashing import raw_features
    from memcore.search.fusion import calibration_for
    from memcore.search.fuzzy import correct

    n_total = figures.n_total
    idfs: list[float] = []
    present: list[str] = []
    absent = 0
    counts, fixes = figures.counts, figures.fixes

    def doc_count(term: str) -> int:
        known = counts.get(term)
        if known is None:
            known = counts[term] = int(
                conn.execute(
                    "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?",
                    (_fts_phrase(term),),
                ).fetchone()[0]
            )
        return known

    for t in terms:
        n_t = doc_count(t)
        if n_t == 0:
            fixed = fixes[t] if t in fixes else fixes.setdefault(t, correct(conn, t))
            if fixed is not None and fixed not in present:
                t, n_t = fixed, doc_count(fixed)
        if n_t == 0:
            absent += 1
            continue
        present.append(t)
        idf = math.log((n_total - n_t + 0.5) / (n_t + 0.5))
        idfs.append(idf if idf > 0 else 1e-6)
    bm25: dict[int, float] = {}
    every_ids = np.zeros(0, np.int64)  # every chunk holding a query term, ascending
    every = np.zeros(0)  # and its bm25
    bm25_ref = specificity = 0.0
    if present:
        info = sum(idfs)
        bm25_ref = info + absent * ABSENT_WEIGHT * info / len(idfs)
        specificity = query_specificity(info, n_total)
        every_ids, every = _or_bm25(conn, figures, present)
        # best first; a stable sort, so ties keep FTS5's order (by rowid)
        top = np.argsort(-every, kind="stable")[:CANDIDATES]
        bm25 = {int(every_ids[i]): float(every[i]) for i in top}
    lex_rank = {cid: i + 1 for i, cid in enumerate(bm25)}
    near: dict[int, float] = {}
    sims = ids = None
    if embedder is not None and dense_mod.uses_dense(embedder):
        got = dense_mod.dense_matrix(conn, embedder.dim)
        if got is not None:
            ids = got[0]
            with one_blas_thread():
                qvec = dense_mod.query_vector(embedder, query)  # cached, else shared
                near, sims = dense_mod.nearest(got, qvec)
            floor = calibration_for(str(embedder.id)).dense_floor
            near = {cid: c for cid, c in near.items() if c >= floor}
    dense_rank = {cid: i + 1 for i, cid in enumerate(sorted(near, key=lambda k: -near[k]))}
    view = started.result() if started is not None else None  # the second model's
    second_near = view.nearest if view is not None else []
    if len(every_ids):  # model neighbours that share words with the query
        others = [cid for cid in dict.fromkeys([*near, *second_near]) if cid not in bm25]
        at = np.minimum(np.searchsorted(every_ids, others), len(every_ids) - 1)
        for cid, i in zip(others, at.tolist(), strict=True):
            if int(every_ids[i]) == cid:
                bm25[cid] = float(every[i])
    wanted = set(bm25) | set(near) | set(second_near)
    if not wanted:
        return []
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(
        "SELECT id, path, start_line, end_line, text, vidx, vval FROM search_chunks"
        f" WHERE id IN ({marks})",
        list(wanted),
    ).fetchall()
    idf_w = figures.idf_w
    q_idx, q_val = raw_features(query)
    q = np.zeros(idf_w.shape[0], dtype=np.float32)
    q[q_idx.astype(np.intp)] = q_val * idf_w[q_idx.astype(np.intp)]
    q_norm = float(np.linalg.norm(q))
    # every candidate's hashing cosine at once: its sparse vector, IDF applied, against q
    lens = np.fromiter((len(r[5]) >> 1 for r in rows), dtype=np.intp, count=len(rows))
    flat_idx = np.frombuffer(b"".join(r[5] for r in rows), dtype=np.uint16).astype(np.intp)
    flat = np.frombuffer(b"".join(r[6] for r in rows), dtype=np.float32) * idf_w[flat_idx]
    offsets = np.r_[0, np.cumsum(lens)[:-1]] if len(rows) else np.zeros(0, np.intp)
    nonempty = lens > 0
    dots = np.zeros(len(rows))
    norms = np.zeros(len(rows))
    if nonempty.any():
        at = offsets[nonempty]
        dots[nonempty] = np.add.reduceat(flat * q[flat_idx], at)
        norms[nonempty] = np.sqrt(np.add.reduceat(flat * flat, at))
    if ids is not None and sims is not None:
        pos = np.searchsorted(ids, np.fromiter((r[0] for r in rows), np.int64, len(rows)))
        pos = np.minimum(pos, len(ids) - 1)
    out: list[Candidate] = []
    for i, (cid, path, start, end, text, _vidx, _vval) in enumerate(rows):
        d_norm = float(norms[i])
        cos = float(dots[i]) / (d_norm * q_norm) if d_norm > 0 and q_norm > 0 else 0.0
        lexical = 0.0
        if cid in bm25 and bm25_ref > 1e-9:
            lexical = specificity * min(1.0, max(0.0, bm25[cid] / bm25_ref))
        dcos: float | None = None
        if ids is not None and sims is not None:
            dcos = near.get(cid, float(sims[pos[i]]) if int(ids[pos[i]]) == cid else 0.0)
        out.append(
            Candidate(
                int(cid),
                path,
                int(start),
                int(end),
                text,
                lexical,
                semantic_score(cos),
                cos,
                dcos,
                specificity,
                lex_rank.get(cid, 0),
                dense_rank.get(cid, 0),
                len(terms) == 1,
            )
        )
    if view is not None:
        seconds, places = view.of_many([c.id for c in out])
        for c, second, second_rank in zip(out, seconds, places, strict=True):
            c.second, c.second_rank = second, second_rank
    return out


@dataclass
class _Figures:
    """What :func:`candidates` reads of one version of the index: the number of chunks, the
    hashing IDF weights, and the document counts and spelling fixes of the terms asked so
    far (each read once per version instead of once per search)."""

    n_total: int
    idf_w: Any
    counts: dict[str, int] = field(default_factory=dict)
    fixes: dict[str, str | None] = field(default_factory=dict)
    #: each term's chunks and its part of their bm25 (see :func:`_term_bm25`), least recently
    #: used first, and how many chunks they hold in all
    postings: OrderedDict[str, tuple[Any, Any]] = field(default_factory=OrderedDict)
    posted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


_FIGURES_KEPT = 8  # index versions kept (one per database a process searches)
POSTINGS_KEPT = 250_000  # chunk entries of the terms' bm25 kept per index version (4 MB)
_figures: OrderedDict[tuple[str, str], _Figures] = OrderedDict()
_figures_lock = threading.Lock()


def _index_figures(conn: sqlite3.Connection) -> _Figures:
    """:class:`_Figures` of the index ``conn`` reads, kept by its file and ``chunks_gen``
    (set by every index update that changes a chunk, ``memcore.search.dense.mark_changed``);
    an in-memory index or one without the token is read afresh."""
    from memcore.search.embeddings.hashing import idf_from_df

    gen = conn.execute("SELECT value FROM search_meta WHERE key = 'chunks_gen'").fetchone()
    db = conn.execute("PRAGMA database_list").fetchone()
    key = (str(db[2]), str(gen[0])) if gen is not None and db is not None and db[2] else None
    if key is not None:
        with _figures_lock:
            hit = _figures.get(key)
            if hit is not None:
                _figures.move_to_end(key)
                return hit
    n_total = int(conn.execute("SELECT count(*) FROM search_chunks").fetchone()[0])
    df, n_docs = load_df(conn)
    idf_w = idf_from_df(df, n_docs)
    idf_w.setflags(write=False)  # shared between searches
    figures = _Figures(n_total, idf_w)
    if key is not None:
        with _figures_lock:
            for old in [k for k in _figures if k[0] == key[0]]:
                del _figures[old]  # an older version of the same index: not read again
            _figures[key] = figures
            while len(_figures) > _FIGURES_KEPT:
                _figures.popitem(last=False)
    return figures


def _term_bm25(conn: sqlite3.Connection, figures: _Figures, term: str) -> tuple[Any, Any]:
    """(ascending ids of the chunks holding ``term``, their bm25 for it alone), kept in
    ``figures`` (an index version) for the next searches that ask the term.

    FTS5's bm25 of an OR query is a sum over its phrases of a part that depends on that phrase
    alone (its IDF, its weighted count in the chunk, the chunk's length and the average
    length), added in phrase order; so the parts of each term, asked one at a time, added in
    the same order, give the OR query's bm25 to the last bit. FTS5 computes bm25 for every
    matching chunk whatever the LIMIT (about 3 us a chunk at 10,000 chunks), so keeping each
    term's parts spares a search the pass over the chunks of the terms asked before."""
    import numpy as np

    with figures.lock:
        known = figures.postings.get(term)
        if known is not None:
            figures.postings.move_to_end(term)
            return known
    cur = conn.cursor()
    cur.row_factory = None
    rows = cur.execute(
        f"SELECT rowid, bm25(search_fts, 1.0, {CONTEXT_WEIGHT}) FROM search_fts"
        " WHERE search_fts MATCH ? ORDER BY rowid",
        (_fts_phrase(term),),
    ).fetchall()
    ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    parts = -np.fromiter((r[1] for r in rows), np.float64, len(rows))
    ids.setflags(write=False)
    parts.setflags(write=False)
    with figures.lock:
        if term not in figures.postings:
            figures.postings[term] = (ids, parts)
            figures.posted += len(ids)
        while figures.posted > POSTINGS_KEPT and len(figures.postings) > 1:
            _, (gone, _) = figures.postings.popitem(last=False)
            figures.posted -= len(gone)
    return ids, parts


def _or_bm25(conn: sqlite3.Connection, figures: _Figures, terms: list[str]) -> tuple[Any, Any]:
    """(ascending ids of the chunks holding any of ``terms``, their bm25), as FTS5 scores
    ``"t1" OR "t2" ...`` (see :func:`_term_bm25`)."""
    import numpy as np

    got = [_term_bm25(conn, figures, t) for t in terms]
    ids = np.unique(np.concatenate([g[0] for g in got]))
    score = np.zeros(len(ids))
    for term_ids, parts in got:  # in phrase order, as FTS5 adds them
        score[np.searchsorted(ids, term_ids)] += parts
    return ids, score


def query_index(
    conn: sqlite3.Connection,
    query: str,
    limit: int,
    *,
    explain: bool = False,
    embedder: Embedder | None = None,
) -> list[dict[str, Any]]:
    """Scored hits of ``query`` from an up-to-date index, best first (see
    ``memcore.search.fusion`` for the score). ``embedder`` is the search model (None or the
    hashing backend: lexical and hashing signals only).

    With ``explain`` each hit also carries its ``lexical``, ``semantic`` (hashing) and
    ``dense`` signals.
    """
    from memcore.search.fusion import MIN_SCORE, calibration_for, fused_score, is_exact

    if limit <= 0:
        return []
    cands = candidates(conn, query, embedder)
    cal = calibration_for(str(embedder.id) if embedder is not None else "hashing")
    if any(c.second is not None for c in cands):  # a pair of models has its own calibration
        from memcore.search.companion import paired_id

        cal = calibration_for(paired_id(embedder))
    scored: list[tuple[float, Candidate]] = []
    for c in cands:
        score = (
            1.0
            if is_exact(query, c.text)
            else fused_score(
                cal,
                c.lexical,
                c.hashed,
                c.dense,
                c.lexical_rank,
                c.dense_rank,
                c.specificity,
                c.single_term,
                c.second,
                c.second_rank,
            )
        )
        if score < MIN_SCORE and c.lexical_rank == 0:
            continue  # a model neighbour sharing no word with the query, and far
        scored.append((round(score, 6), c))
    scored.sort(key=lambda sc: (-sc[0], sc[1].path, sc[1].start_line))
    hits: list[dict[str, Any]] = []
    for score, c in scored[:limit]:  # snippets of the hits returned only
        hit = {
            "path": c.path,
            "startLine": c.start_line,
            "endLine": c.end_line,
            "score": score,
            "snippet": _snippet(c.text),
            "source": "memory",
        }
        if explain:
            hit.update(
                lexical=round(c.lexical, 6), semantic=round(c.hashed, 6), cosine=round(c.cosine, 6)
            )
            if c.dense is not None:
                hit["dense"] = round(c.dense, 6)
            if c.second is not None:
                hit["second"] = round(c.second, 6)
        hits.append(hit)
    return hits


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
    recorder: BatchRecorder | None = None,
    pool: IndexPool | None = None,
    since: int | None = None,
    config: Config | None = None,
) -> SearchResult:
    """Update the index, search it, and record eligible hits in the recall store (the hits
    scoring at least ``RECORD_MIN_SCORE``).

    The index is memcore's own data, so a search writes it (and the recall log); when the
    database is locked, read-only or otherwise unusable the search runs on an index built in
    memory and says so in ``warnings``. Recording never waits for the workspace lock (the
    recall log takes the hits); its failure (an unwritable folder, an invalid config...) is
    logged, kept in ``recall-errors.json`` and returned in ``record_error``; the hits are
    returned regardless. ``origin`` says what issued the search (entries.ORIGINS);
    ``progress`` follows the index update (see ``update_index``). With a ``recorder``
    (a long-lived server) the hits are handed to it and written in its next batch; the search
    does not wait for that (``record_error`` is then the workspace's last batch failure);
    a ``pool`` lends it an index connection kept open from an earlier search, and ``since``
    (the pool's ``mark()`` when the search arrived, for one that waited in a queue) lets it
    take any index update that started after then; ``config`` is the workspace's
    ``memcore.toml`` when the caller read it after the search arrived (once for a batch of
    searches, see :func:`prepare_searches`), else it is read here.
    """
    from memcore.workspace.clock import utcnow

    now = now or utcnow()
    warnings: list[str] = []
    embedder = search_embedder(ws, warnings, config)
    try:
        report, results = _search_on_disk(
            ws, query, limit, progress, embedder, warnings, pool, since
        )
    except (MemcoreError, sqlite3.Error, OSError) as exc:
        warnings.append(f"index not updated ({exc}); searched a temporary in-memory index")
        report, results = _search_in_memory(ws, query, limit, progress)
    warnings.extend(f"skipped {path}: {reason}" for path, reason in report.skipped)
    out = SearchResult(query=query, results=results, warnings=warnings, index=report)
    recalled = [r for r in results if r["score"] >= RECORD_MIN_SCORE]
    if record and recalled and recorder is not None:
        out.recorded, out.record_error = _submit(recorder, ws, query, recalled, now, origin, config)
    elif record and recalled:
        out.recorded, out.record_error, notices = _record(
            ws, query, recalled, now, settings, lock_timeout, origin
        )
        out.warnings.extend(notices)
        _record_memory_access(ws, recalled, now)
    return out


def _submit(
    recorder: BatchRecorder,
    ws: Workspace,
    query: str,
    results: list[dict[str, Any]],
    now: datetime,
    origin: str,
    config: Config | None = None,
) -> tuple[int, str | None]:
    """Hand a search's hits to the batch recorder: (hits accepted, last batch error)."""
    from memcore.workspace.config import get_bool, load_config

    try:
        recall = get_bool(
            config if config is not None else load_config(ws), "search", "record", True
        )
        n = recorder.submit(ws, query, results, now, origin, recall=recall)
    except Exception as exc:
        message = f"recall recording failed: {exc}"
        log.warning("%s", message)
        _save_record_error(ws, now, message, query)
        return 0, message
    return n, recorder.last_error(ws)


def record_batch(
    ws: Workspace,
    events: list[Event],
    memory_hits: list[dict[str, Any]],
    now: datetime,
    query: str,
    lock_timeout: float = RECORD_LOCK_TIMEOUT,
) -> str | None:
    """Write many searches' recordings at once (``memcore.search.recorder``): one append and
    one fold for ``events``, one ledger transaction for ``memory_hits``. Returns the
    recording failure (also logged and kept in ``recall-errors.json`` under ``query``, the
    batch's last search), or None."""
    error: str | None = None
    if events:
        try:
            from memcore.recall.scoring import cap_protection
            from memcore.recall.store import record_events
            from memcore.workspace.config import dreaming_settings, load_config

            s = dreaming_settings(load_config(ws))
            res = record_events(
                ws,
                events,
                now=now,
                max_entries=s.max_entries,
                protect=cap_protection(s, now),
                lock_timeout=lock_timeout,
            )
        except Exception as exc:
            error = f"recall recording failed: {exc}"
        else:
            if res.fold_error:
                error = f"recall recording failed: {res.fold_error}"
            elif res.folded:
                _mark_resolved(ws, now)
            for notice in res.notices:
                log.warning("%s", notice)
        if error is not None:
            log.warning("%s", error)
            _save_record_error(ws, now, error, query)
    _record_memory_access(ws, memory_hits, now)
    return error


def search_embedder(
    ws: Workspace, warnings: list[str] | None = None, config: Config | None = None
) -> Embedder:
    """The search model: ``[search] embedder``, else $MEMCORE_EMBEDDER, else ``auto`` (see
    ``memcore.search.embeddings``). A model that cannot be loaded (the extra missing, a bad
    file) or an invalid setting falls back to the hashing backend, said in ``warnings``.
    ``config``: the workspace's settings when the caller has read them."""
    from memcore.errors import ConfigError
    from memcore.search.embeddings import get_embedder
    from memcore.search.embeddings.hashing import HashingEmbedder
    from memcore.workspace.config import get_str, load_config

    try:
        name = get_str(
            config if config is not None else load_config(ws), "search", "embedder", None
        )
        return get_embedder(name)
    except (ConfigError, MemcoreError, OSError) as exc:
        if warnings is not None:
            warnings.append(f"search model not used ({exc}); searched with the hashing backend")
        return HashingEmbedder()


def prepare_searches(ws: Workspace, queries: list[str]) -> Config:
    """What a batch of searches of ``ws`` (``memcore.search.lanes``) shares, read once now,
    after every one of them arrived: the workspace's settings (returned, for each search's
    ``config``) and the model vectors of their ``queries``, computed in one call per model
    (the search model's, and the second model's for the English sentences among them) and
    kept for those searches. Raises what reading the settings or the models raise."""
    from memcore.search import companion
    from memcore.search.dense import prefetch_query_vectors, uses_dense
    from memcore.workspace.config import load_config

    config = load_config(ws)
    embedder = search_embedder(ws, None, config)
    if not uses_dense(embedder):
        return config
    prefetch_query_vectors(embedder, queries)
    second = companion.companion_for(embedder)
    english = [q for q in queries if companion.asks_in_english(q)] if second else []
    if second is not None and english:
        prefetch_query_vectors(second, english)
    return config


def _search_on_disk(
    ws: Workspace,
    query: str,
    limit: int,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    warnings: list[str] | None = None,
    pool: IndexPool | None = None,
    since: int | None = None,
) -> tuple[IndexReport, list[Any]]:
    from memcore.search.connections import index_connection
    from memcore.search.dense import sync_dense, uses_dense
    from memcore.workspace.db import busy_timeout, check_deferred

    with busy_timeout(INDEX_BUSY_MS), check_deferred(), index_connection(ws, pool) as conn:

        def update() -> tuple[IndexReport, str | None]:
            watch = pool.watch if pool is not None else None
            report = update_index(conn, ws, progress=progress, watch=watch)
            if embedder is not None and uses_dense(embedder):
                try:
                    sync_dense(conn, embedder, progress)
                except (MemcoreError, sqlite3.Error) as exc:  # the lexical half still answers
                    return report, f"model vectors not updated ({exc})"
            return report, None

        if pool is not None and progress is None:
            # concurrent searches of this index share one update that began after they did
            key = f"{ws.db_path}\0{embedder.id if embedder is not None else ''}"
            report, problem = pool.shared_update(key, update, since)
        else:
            report, problem = update()
        if problem is not None and warnings is not None:
            warnings.append(problem)
        return report, query_index(conn, query, limit, embedder=embedder)


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
        from memcore.recall.scoring import cap_protection
        from memcore.recall.store import record_recalls
        from memcore.workspace.config import dreaming_settings, get_bool, load_config

        cfg = load_config(ws)
        if not get_bool(cfg, "search", "record", True):
            return 0, None, []  # the user turned recall recording off ([search] record = false)
        s = settings if settings is not None else dreaming_settings(cfg)
        res = record_recalls(
            ws,
            query,
            results,
            now=now,
            max_entries=s.max_entries,
            protect=cap_protection(s, now),
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
