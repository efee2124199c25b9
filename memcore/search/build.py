"""Indexing new files on two cores: one thread chunks and hashes, the caller's thread writes.

Chunking markdown and computing the hashing features are Python work; inserting the rows and
their FTS5 entries is SQLite work, which releases the GIL while it runs. So while the writer
(the thread that holds the connection and its write transaction) inserts one batch, a helper
thread chunks and hashes the next: the two overlap on two cores, and only the caller's thread
ever touches the connection. The rows are the ones a chunk-by-chunk build gives, bit for bit:
each text's vector depends on that text alone, whatever batch it is hashed in.

Only files with no chunks in the index yet come here (a first build, new notes); a changed
file with indexed chunks keeps its unchanged rows, which needs the database, and is indexed
by :func:`memcore.search.index.update_index` itself.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from memcore.search.chunks import Chunk, chunk_markdown, fts_text

#: New chunks vectorised and inserted together (the hashing features of a batch are computed
#: in a few numpy operations; one file at a time cost twice the whole build).
INSERT_BATCH = 4096
_QUEUED = 3  # batches hashed ahead of the writer (bounds the memory the helper can fill)


@dataclass
class Rows:
    """One batch of new chunks, ready to insert."""

    chunks: list[tuple[Any, ...]]  # search_chunks rows
    fts: list[tuple[int, str, str]]  # search_fts rows
    df: Any  # bucket document frequencies of the batch (numpy int64, DIM)
    files: list[tuple[str, int]]  # (path, chunk count) of the files now wholly inserted


def chunk_rows(fresh: Sequence[tuple[str, Chunk]], first_id: int) -> Rows:
    """The rows of new chunks ``(path, chunk)``, with ids from ``first_id`` on."""
    import numpy as np

    from memcore.search.embeddings.hashing import DIM, raw_features_many

    feats = raw_features_many([ch.body for _, ch in fresh])
    ids = range(first_id, first_id + len(fresh))
    chunks = [
        (cid, path, ch.start_line, ch.end_line, ch.text, ch.context, i.tobytes(), v.tobytes())
        for cid, (path, ch), (i, v) in zip(ids, fresh, feats, strict=True)
    ]
    fts = [(row[0], fts_text(row[4]), fts_text(row[5])) for row in chunks]
    if feats:
        df = np.bincount(np.concatenate([i for i, _ in feats]), minlength=DIM)
    else:
        df = np.zeros(DIM, np.int64)
    return Rows(chunks, fts, df.astype(np.int64), [])


def write_rows(conn: Any, rows: Rows) -> None:
    """Insert a batch: one statement for the chunks, one for their FTS entries."""
    conn.executemany(
        "INSERT INTO search_chunks (id, path, start_line, end_line, text, context, vidx, vval)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows.chunks,
    )
    conn.executemany("INSERT INTO search_fts(rowid, text, context) VALUES (?, ?, ?)", rows.fts)


def _batches(
    files: Sequence[tuple[str, str, bool]], first_id: int, stop: threading.Event
) -> Iterator[Rows]:
    """Chunk ``files`` ``(path, text, front_matter)`` in order and yield their rows a batch of
    :data:`INSERT_BATCH` chunks at a time (a big file spans several batches)."""
    pending: list[tuple[str, Chunk]] = []
    ends: list[tuple[str, int, int]] = []  # (path, chunk count, offset in pending past its end)
    next_id = first_id

    def take(count: int) -> Rows:
        nonlocal pending, ends, next_id
        rows = chunk_rows(pending[:count], next_id)
        next_id += count
        pending = pending[count:]
        rows.files = [(path, n) for path, n, end in ends if end <= count]
        ends = [(path, n, end - count) for path, n, end in ends if end > count]
        return rows

    for path, text, front_matter in files:
        if stop.is_set():
            return
        chunks = chunk_markdown(text, front_matter=front_matter)
        pending.extend((path, ch) for ch in chunks)
        ends.append((path, len(chunks), len(pending)))
        while len(pending) >= INSERT_BATCH:
            yield take(INSERT_BATCH)
            if stop.is_set():
                return
    yield take(len(pending))


def build_rows(files: Sequence[tuple[str, str, bool]], first_id: int) -> Iterator[Rows]:
    """The rows of ``files`` ``(path, text, front_matter)``, a batch at a time, in order,
    chunked and hashed on a helper thread while the caller writes the previous batch.

    An error on the helper thread is raised here; closing the iterator early (an error in the
    caller) stops the helper."""
    out: queue.Queue[Rows | BaseException | None] = queue.Queue(maxsize=_QUEUED)
    stop = threading.Event()

    def put(item: Rows | BaseException | None) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for rows in _batches(files, first_id, stop):
                if not put(rows):
                    return
            put(None)
        except BaseException as exc:  # handed to the caller's thread, which raises it
            put(exc)

    helper = threading.Thread(target=work, name="memcore-index", daemon=True)
    helper.start()
    try:
        while True:
            item = out.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        helper.join()
