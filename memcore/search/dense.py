"""Model vectors of every indexed chunk, for the semantic half of hybrid search.

The lexical index (``memcore.search.index``) finds chunks that share words with a query; a
paraphrase ("publishing the website" for a note about ``make publish``) or a question in
another language shares none. This module keeps vectors of every chunk from the search's
embedding model (``[search] embedder``; see ``memcore.search.embeddings``) in the table
``search_dense`` and answers "which chunks are nearest to this query vector" over all of them.

Each chunk has the vectors of its pieces (:func:`pieces`: the whole chunk, and each clause of
a long one); a chunk's similarity to a query is the mean of its whole vector's cosine and its
best piece's (:func:`nearest`).

Incremental: after each index update, only chunks without vectors are embedded (a chunk that
only moved keeps its row id, so its vectors), and vectors of deleted chunks are dropped. The
shared vector cache is not used: the vectors would be stored twice. The vectors are stored for
one backend at a time; switching the backend re-embeds. ``search_meta`` keeps two tokens:
``chunks_gen`` (set by every index change) and ``dense_gen`` (the chunks_gen the vectors
match), so a search that finds them equal does no work. A process keeps the matrix of the last
database it searched in memory, keyed by the token, so a long-running gateway or MCP server
answers with one matrix-vector product; it also keeps the vectors of its last queries
(:func:`query_vector`).

The hashing backend has no dense vectors here (a 4,096-wide float matrix of every chunk would
not fit the memory budget); its semantic signal is computed on the lexical candidates only.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from memcore.workspace.db import rollback_quietly as db_rollback
from memcore.workspace.progress import Progress

if TYPE_CHECKING:
    import numpy as np

    from memcore.search.embeddings import Embedder

TOP = 64  # nearest chunks a query takes from the model vectors
SHORTLIST = 256  # chunks whose clause vectors are compared (the nearest by whole-chunk vector)
_CLAUSE_RE = re.compile(r"[;:]\s+|\.\s+|, (?:and|but|so|plus) |\s+\(")
_MIN_CLAUSE = 9
_lock = threading.Lock()
_cache: dict[str, Any] = {}


def uses_dense(embedder: Embedder | None) -> bool:
    """Whether search keeps model vectors for this backend (every backend but hashing)."""
    return embedder is not None and not str(embedder.id).startswith("hashing")


def index_meta(conn: sqlite3.Connection, key: str) -> Any:
    row = conn.execute("SELECT value FROM search_meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]


def mark_changed(conn: sqlite3.Connection) -> None:
    """Record that the chunks changed (called inside the index update's transaction)."""
    conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('chunks_gen', ?)", (uuid.uuid4().hex,))


def pieces(text: str, context: str = "") -> list[str]:
    """The texts embedded for one chunk: the whole chunk with its heading, and each of its
    clauses when it has several (a query usually asks for one clause of a long note, and a
    clause's vector is not drowned by the rest; :func:`nearest` mixes the best piece's cosine
    with the whole chunk's)."""
    from memcore.search.chunks import Chunk

    body = Chunk(0, 0, text, context).body
    plain = re.sub(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+", "", text.strip())
    parts = [p.strip() for p in _CLAUSE_RE.split(plain) if len(p.strip()) >= _MIN_CLAUSE]
    return [body, *parts] if len(parts) > 1 else [body]


def _ensure_table(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS search_dense (id INTEGER PRIMARY KEY, chunk INTEGER NOT NULL,"
        " vec BLOB NOT NULL)"
    )
    conn.execute("CREATE INDEX IF NOT EXISTS search_dense_chunk ON search_dense(chunk)")


def sync_dense(
    conn: sqlite3.Connection, embedder: Embedder, progress: Progress | None = None
) -> int:
    """Embed the chunks that have no vector of ``embedder`` yet; returns how many pieces were.
    The search's second model, when it has one (``memcore.search.companion``), is brought up
    to date after it.

    The model runs outside any transaction (a first index of 10,000 chunks takes a while);
    the vectors are written in one short transaction afterwards, and only if the chunks did not
    change meanwhile (else the next search catches up)."""
    from memcore.search.companion import companion_for, sync_companion

    done = _sync_first(conn, embedder, progress)
    second = companion_for(embedder)
    if second is not None:
        sync_companion(conn, second, progress)
    return done


def _sync_first(conn: sqlite3.Connection, embedder: Embedder, progress: Progress | None) -> int:

    from memcore.search.embeddings import cache_id, embed_batches

    backend = cache_id(embedder)
    gen = index_meta(conn, "chunks_gen")
    stamp_gen = gen is None  # an index written before the token existed
    gen = gen or uuid.uuid4().hex
    if index_meta(conn, "dense_backend") == backend and index_meta(conn, "dense_gen") == gen:
        return 0
    _ensure_table(conn)
    same_backend = index_meta(conn, "dense_backend") == backend
    # only the chunks without vectors are read (one note changed: a few rows, not every text)
    rows = conn.execute(
        "SELECT id, text, context FROM search_chunks"
        + (" WHERE id NOT IN (SELECT chunk FROM search_dense)" if same_backend else "")
    )
    todo = [(cid, piece) for cid, text, context in rows for piece in pieces(text, context)]
    vecs = embed_batches(embedder, [b for _, b in todo], progress)
    written = [(cid, v) for (cid, _), v in zip(todo, vecs, strict=True)]
    if not store_vectors(
        conn, "search_dense", "dense", backend, gen, not same_backend, written, stamp_gen=stamp_gen
    ):
        return 0
    return len(todo)


def store_vectors(
    conn: sqlite3.Connection,
    table: str,
    prefix: str,
    backend: str,
    gen: str,
    fresh: bool,
    rows: list[tuple[int, Any]],
    *,
    stamp_gen: bool = False,
) -> bool:
    """Write ``rows`` ((chunk id, vector) pairs of ``backend``) into ``table`` in one short
    transaction (every row of the table replaced when ``fresh``, rows of chunks gone dropped);
    ``{prefix}_backend`` and ``{prefix}_gen`` then name what it holds. Nothing is written and
    False returned when the chunks are no longer version ``gen`` (they changed while the model
    ran: the next search catches up). ``stamp_gen``: an index written before the version token
    existed gets ``gen``."""
    import numpy as np

    conn.execute("BEGIN IMMEDIATE")
    try:
        if stamp_gen and index_meta(conn, "chunks_gen") is None:
            conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('chunks_gen', ?)", (gen,))
        if index_meta(conn, "chunks_gen") != gen:
            conn.execute("COMMIT")
            return False
        if fresh:
            conn.execute(f"DELETE FROM {table}")
        conn.executemany(
            f"INSERT OR REPLACE INTO {table} (chunk, vec) VALUES (?, ?)",
            [(cid, np.ascontiguousarray(v, np.float32).tobytes()) for cid, v in rows],
        )
        conn.execute(f"DELETE FROM {table} WHERE chunk NOT IN (SELECT id FROM search_chunks)")
        conn.execute(
            f"INSERT OR REPLACE INTO search_meta VALUES ('{prefix}_backend', ?)", (backend,)
        )
        conn.execute(f"INSERT OR REPLACE INTO search_meta VALUES ('{prefix}_gen', ?)", (gen,))
        conn.execute("COMMIT")
    except BaseException:
        db_rollback(conn)
        raise
    return True


def db_key(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row is not None else ""


Matrix = tuple["np.ndarray", "np.ndarray", "np.ndarray", "np.ndarray"]


def dense_matrix(conn: sqlite3.Connection, dim: int) -> Matrix | None:
    """(sorted unique chunk ids, index of each chunk's first row, float32 matrix of the piece
    vectors ordered by chunk, the whole-chunk rows alone), or None when the stored vectors do
    not match the chunks (the search then goes on lexical signals alone)."""
    import numpy as np

    gen = index_meta(conn, "dense_gen")
    if gen is None or gen != index_meta(conn, "chunks_gen"):
        return None
    key = f"{db_key(conn)}\0{gen}\0{index_meta(conn, 'dense_backend')}"
    with _lock:
        hit = _cache.get("key") == key
        if hit:
            return _cache["value"]  # type: ignore[no-any-return]
    cur = conn.cursor()
    cur.row_factory = None  # plain tuples: a Row object per vector costs more than its bytes
    rows = cur.execute("SELECT chunk, vec FROM search_dense ORDER BY chunk, id").fetchall()
    owners = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    blob = b"".join(r[1] for r in rows)
    if len(blob) != len(rows) * dim * 4:
        return None
    matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), dim)
    ids, starts = np.unique(owners, return_index=True)
    value = (ids, starts, matrix, np.ascontiguousarray(matrix[starts]))
    if db_key(conn):  # an in-memory database has nothing to share with a later search
        with _lock:
            _cache.update(key=key, value=value)
    return value


QUERY_CACHE = 256  # query vectors a process keeps (an agent repeats its searches)
_queries: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()


def query_vector(embedder: Embedder, query: str) -> np.ndarray:
    """The model's vector of ``query``, from the last ``QUERY_CACHE`` queries of this process
    when it is one of them (the model call is the largest part of a search's own work)."""
    import numpy as np

    from memcore.search.embeddings import cache_id

    key = (cache_id(embedder), query)
    with _lock:
        known = _queries.get(key)
        if known is not None:
            _queries.move_to_end(key)
            return known
    from memcore.search.embeddings.combined import embed_query

    # one model call shared with the searches that embed at the same time
    vec: np.ndarray = np.asarray(embed_query(embedder, query), dtype=np.float32)
    vec.setflags(write=False)  # shared between searches
    with _lock:
        _queries[key] = vec
        while len(_queries) > QUERY_CACHE:
            _queries.popitem(last=False)
    return vec


def prefetch_query_vectors(embedder: Embedder, queries: list[str]) -> int:
    """Put the model's vectors of ``queries`` in :func:`query_vector`'s cache with one model
    call for those not there yet (a server's batch of searches); returns how many were
    embedded. Rows of one call equal each query embedded alone up to float rounding."""
    import numpy as np

    from memcore.search.embeddings import cache_id, one_blas_thread

    cid = cache_id(embedder)
    with _lock:
        new = list(dict.fromkeys(q for q in queries if (cid, q) not in _queries))
    if not new:
        return 0
    with one_blas_thread():
        vectors = np.asarray(embedder.embed(new), dtype=np.float32)
    with _lock:
        for q, vec in zip(new, vectors, strict=True):
            vec.setflags(write=False)  # shared between searches
            _queries[(cid, q)] = vec
            _queries.move_to_end((cid, q))
        while len(_queries) > QUERY_CACHE:
            _queries.popitem(last=False)
    return len(new)


def nearest(m: Matrix, qvec: np.ndarray, top: int = TOP) -> tuple[dict[int, float], np.ndarray]:
    """The ``top`` chunks nearest to ``qvec`` ({id: similarity}) and the similarities of all
    chunks (aligned with the matrix's ids). Rows and ``qvec`` are L2-normalised, so a dot
    product is the cosine. Two stages, so a query reads the whole-chunk rows only: every
    chunk's whole-chunk cosine, then for the ``SHORTLIST`` nearest the mean of that cosine and
    their best piece's (see :func:`pieces`; the best piece alone let one short clause that
    happens to sit near the query outrank a chunk that answers it as a whole)."""
    import numpy as np

    ids, starts, matrix, whole = m
    if len(ids) == 0:
        return {}, np.zeros(0, np.float32)
    q = np.asarray(qvec, dtype=np.float32)
    sims = whole @ q
    short = np.argpartition(-sims, min(SHORTLIST, len(ids)) - 1)[:SHORTLIST]
    ends = np.append(starts[1:], len(matrix))
    spans = ends[short] - starts[short]
    many = spans > 1
    if many.any():
        sel, lo, n = short[many], starts[short[many]], spans[many]
        rows = np.repeat(lo - np.cumsum(np.r_[0, n[:-1]]), n) + np.arange(int(n.sum()))
        best = np.maximum.reduceat(matrix[rows] @ q, np.r_[0, np.cumsum(n)[:-1]])
        sims[sel] = 0.5 * (sims[sel] + np.maximum(sims[sel], best))
    k = min(top, len(ids))
    part = np.argpartition(-sims, k - 1)[:k]
    return {int(ids[i]): float(sims[i]) for i in part}, sims


def cosine_of(ids: np.ndarray, sims: np.ndarray, cid: int) -> float:
    """The cosine of chunk ``cid`` from :func:`nearest`'s full array (0 if unknown)."""
    import numpy as np

    i = int(np.searchsorted(ids, cid))
    return float(sims[i]) if i < len(ids) and int(ids[i]) == cid else 0.0
