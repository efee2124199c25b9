"""A second search model beside the first: MiniLM's vector of every chunk, next to use-m3's.

The two models of the ``memcore[embed]`` extra are good at different queries. use-m3, the
default, is multilingual; MiniLM is English only, but puts the note an English paraphrase asks
for nearer the top ("where do pictures go" for the note about the image folder). On the
labelled development queries of bench/eval/search, fusing both models' places found more
English paraphrases than either model alone, with other languages kept at use-m3's level
(BENCHMARKS.md, "Memory search"). So when the search model is use-m3 and MiniLM is installed
too, the search also keeps MiniLM's vector of each chunk's whole text (no clause pieces: they
measured no better and would triple the work), and for a query that reads as an English
sentence (:func:`asks_in_english`) ranks every chunk by it; the fusion
(``memcore.search.fusion``) takes its cosine and place as two more signals, with a
calibration of its own. Other queries (other languages, bare keywords) are ranked and scored
as with use-m3 alone.

The cost: a MiniLM call per English query (about 9 CPU-ms on the 2-core VM, cached for the
last queries of a process like the first model's) and one per new or changed chunk at index
time (about 14 CPU-ms for a 100-character chunk). ``$MEMCORE_SECOND_MODEL=none`` turns it off (the
search then uses use-m3 alone, with its own calibration).

Kept like the first model's vectors (``memcore.search.dense``): the table ``search_companion``
(one row per chunk), brought up to date after each index update for the chunks without one,
stamped in ``search_meta`` with the ``chunks_gen`` it matches, and read into one matrix per
process per index generation.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from typing import TYPE_CHECKING, Any

from memcore.errors import ConfigError, MemcoreError
from memcore.search.dense import db_key, index_meta, store_vectors
from memcore.workspace.progress import Progress

if TYPE_CHECKING:
    import numpy as np

    from memcore.search.embeddings import Embedder

#: The second model of a first one (by backend id prefix).
PAIRS = {"use-m3": "minilm"}
ENV = "MEMCORE_SECOND_MODEL"  # ``none`` turns the second model off
TOP = 64  # chunks the second model adds to a query's candidates
_lock = threading.Lock()
_cache: dict[str, Any] = {}
_seconds: dict[str, Embedder | None] = {}


def enabled() -> bool:
    """Whether a second model may be used (``$MEMCORE_SECOND_MODEL`` is not ``none``)."""
    return os.environ.get(ENV, "").strip().lower() not in ("none", "off", "0", "false")


def companion_for(embedder: Embedder | None) -> Embedder | None:
    """The second model of the search model ``embedder``, or None (no pair for this backend,
    turned off, or the second model not installed or not loadable)."""
    if embedder is None or not enabled():
        return None
    first = str(embedder.id)
    with _lock:
        if first in _seconds:  # found once per process (a search asks several times)
            return _seconds[first]
    from memcore.search.embeddings import extra_installed, get_embedder

    name = next((b for a, b in PAIRS.items() if first.startswith(a)), None)
    second: Embedder | None = None
    if name is not None and extra_installed(name):
        try:
            second = get_embedder(name)
        except (ConfigError, MemcoreError, OSError):
            second = None
    with _lock:
        _seconds[first] = second
    return second


def paired_id(embedder: Embedder | None) -> str:
    """The calibration key of a search with ``embedder`` and its second model
    (``use-m3+minilm``...); ``embedder.id`` when it has none."""
    if embedder is None:
        return "hashing"
    second = companion_for(embedder)
    return str(embedder.id) if second is None else f"{embedder.id}+{second.id}"


def sync_companion(
    conn: sqlite3.Connection, second: Embedder, progress: Progress | None = None
) -> int:
    """Embed with ``second`` the chunks that have no vector of it yet; returns how many were.
    Like ``dense.sync_dense``: the model runs outside any transaction, and its vectors are
    written only if the chunks did not change meanwhile."""
    import numpy as np

    from memcore.search.chunks import Chunk
    from memcore.search.embeddings import cache_id, embed_batches

    backend = cache_id(second)
    gen = index_meta(conn, "chunks_gen")
    stamp_gen = gen is None  # an index written before the token existed
    gen = gen or uuid.uuid4().hex
    if (
        index_meta(conn, "companion_backend") == backend
        and index_meta(conn, "companion_gen") == gen
    ):
        return 0
    conn.execute(
        "CREATE TABLE IF NOT EXISTS search_companion (chunk INTEGER PRIMARY KEY, vec BLOB NOT NULL)"
    )
    same = index_meta(conn, "companion_backend") == backend
    rows = conn.execute(
        "SELECT id, text, context FROM search_chunks"
        + (" WHERE id NOT IN (SELECT chunk FROM search_companion)" if same else "")
    ).fetchall()
    texts = [Chunk(0, 0, text, context).body for _, text, context in rows]
    vecs = embed_batches(second, texts, progress) if texts else np.zeros((0, second.dim))
    written = [(cid, v) for (cid, _, _), v in zip(rows, vecs, strict=True)]
    if not store_vectors(
        conn, "search_companion", "companion", backend, gen, not same, written, stamp_gen=stamp_gen
    ):
        return 0
    return len(rows)


def _matrix(conn: sqlite3.Connection, second: Embedder) -> tuple[np.ndarray, np.ndarray] | None:
    """(sorted chunk ids, their vectors) when they match the chunks, else None."""
    import numpy as np

    from memcore.search.embeddings import cache_id

    gen = index_meta(conn, "companion_gen")
    if gen is None or gen != index_meta(conn, "chunks_gen"):
        return None
    if index_meta(conn, "companion_backend") != cache_id(second):
        return None
    where = db_key(conn)
    key = f"{where}\0{gen}\0{cache_id(second)}"
    with _lock:
        if _cache.get("key") == key:
            return _cache["value"]  # type: ignore[no-any-return]
    cur = conn.cursor()
    cur.row_factory = None
    rows = cur.execute("SELECT chunk, vec FROM search_companion ORDER BY chunk").fetchall()
    blob = b"".join(r[1] for r in rows)
    if len(blob) != len(rows) * second.dim * 4:
        return None
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    value = (ids, np.frombuffer(blob, dtype=np.float32).reshape(len(rows), second.dim))
    if where:  # an in-memory database has nothing to share with a later search
        with _lock:
            _cache.update(key=key, value=value)
    return value


class Opinion:
    """The second model's view of one query: every chunk's cosine, its nearest chunks, and
    the place of any chunk (1-based, as a stable sort of every chunk by cosine would give)."""

    def __init__(self, ids: np.ndarray, sims: np.ndarray, top: int = TOP) -> None:
        import numpy as np

        self.ids, self.sims = ids, sims
        k = min(top, len(ids))
        best = np.zeros(0, np.intp)
        if k:  # the k nearest, ties at the edge taken in position order (a stable sort's)
            falling = -sims
            edge = np.partition(falling, k - 1)[k - 1]
            inside = np.flatnonzero(falling < edge)
            best = np.r_[inside, np.flatnonzero(falling == edge)[: k - len(inside)]]
            best = best[np.lexsort((best, falling[best]))]
        self.nearest = [int(ids[i]) for i in best]
        self._falling = np.sort(-sims)  # places are counted in it (a sort, not an argsort)

    def of_many(self, cids: list[int]) -> tuple[list[float], list[int]]:
        """(cosines, places) of chunks ``cids``; (0.0, 0) for a chunk without a vector."""
        import numpy as np

        if not len(self.ids):
            return [0.0] * len(cids), [0] * len(cids)
        want = np.asarray(cids, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, want), len(self.ids) - 1)
        known = self.ids[at] == want
        s = -self.sims[at]
        ahead = np.searchsorted(self._falling, s, "left")  # chunks nearer than it
        level = np.searchsorted(self._falling, s, "right") - ahead
        places = ahead + 1
        for j in np.flatnonzero(known & (level > 1)):  # ties: the earlier position first
            i = int(at[j])
            places[j] += int(np.count_nonzero(self.sims[:i] == self.sims[i]))
        cos = np.where(known, self.sims[at], 0.0)
        return cos.tolist(), np.where(known, places, 0).tolist()

    def of(self, cid: int) -> tuple[float, int]:
        """(cosine, 1-based place) of chunk ``cid``; (0.0, 0) when it has no vector."""
        cos, place = self.of_many([cid])
        return cos[0], place[0]


def asks_in_english(query: str) -> bool:
    """Whether ``query`` reads as an English sentence (``memcore.search.language``: Latin
    letters only, and more English function words than of any other language). The second
    model is English only, so it is asked only then; a bare keyword query (no function word)
    needs no paraphrase model, and the first model's place alone ranks it as well (the
    development queries: 98% of keyword and every typo query has no function word, 99% of
    paraphrases and every question has)."""
    from memcore.search.language import reads_as_english

    return reads_as_english(query)


class PendingOpinion:
    """The second model's :class:`Opinion` of one query, worked out on a thread of its own
    (the query's vector, its product with every chunk's vector, the places) while the search
    does the rest (FTS5, the first model's vector and product): an English search on a 2-core
    machine then waits for the longer of the two halves rather than for both. The thread
    runs only inside the search that started it, which joins it (:meth:`result`, or
    :meth:`join` when the search stopped early), and inside that search's one-BLAS-thread
    block, so its product runs on one BLAS thread too."""

    def __init__(self, second: Embedder, query: str, got: tuple[np.ndarray, np.ndarray]) -> None:
        self.second, self.query, self.got = second, query, got
        self._view: Opinion | None = None
        self._error: BaseException | None = None
        # "minilm..." names it one of the model threads a fork may ignore (judge.parallel)
        self._thread = threading.Thread(target=self._run, name="minilm-query", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from memcore.search.dense import query_vector

        try:
            qvec = query_vector(self.second, self.query)  # kept for the last queries
            self._view = Opinion(self.got[0], self.got[1] @ qvec)
        except BaseException as exc:  # raised again in the search, by result()
            self._error = exc

    def join(self) -> None:
        self._thread.join()

    def result(self) -> Opinion:
        self.join()
        if self._error is not None:
            raise self._error
        assert self._view is not None
        return self._view


def start_opinion(
    conn: sqlite3.Connection, embedder: Embedder | None, query: str
) -> PendingOpinion | None:
    """The second model's cosines of ``query`` with every chunk, started now on a thread of
    its own; None when the second model does not rank this query (no second model, a query
    that is not an English sentence, or vectors that do not match the chunks: the search then
    goes on with the first model alone, and its calibration)."""
    second = companion_for(embedder)
    if second is None or not asks_in_english(query):
        return None
    try:
        got = _matrix(conn, second)  # read here: a connection serves the thread it was made in
    except sqlite3.OperationalError:  # no table yet
        return None
    if got is None or len(got[0]) == 0:
        return None
    return PendingOpinion(second, query, got)
