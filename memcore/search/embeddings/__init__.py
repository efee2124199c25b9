"""Embedding providers behind one small protocol, a registry, and a vector cache.

* ``hashing`` (default, built in): :class:`memcore.embeddings.hashing.HashingEmbedder`.
* ``minilm`` (optional extra ``memcore[embed]``): the int8 ONNX MiniLM in
  ``memcore.embeddings.onnx``, imported only when asked for.

Vectors are cached in ``memcore.sqlite`` by (backend cache id, SHA-1 of the text), so unchanged
text is never embedded twice. The cache id is ``embedder.cache_id`` when the backend has one,
else ``embedder.id``: the hashing backend's cache id includes a fingerprint of its fitted IDF,
because its vectors change when the IDF is refitted; a model backend's vectors do not.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from memcore.errors import ConfigError
from memcore.workspace.db import rollback_quietly as db_rollback
from memcore.workspace.progress import Progress, report

if TYPE_CHECKING:
    import numpy as np

BACKENDS = ("hashing", "minilm")
EMBED_BATCH = 32
EMBED_LABEL = "Embedding"
_NEEDS_EXTRA = "embedding backend 'minilm' needs the optional extra: pip install 'memcore[embed]'"


@runtime_checkable
class Embedder(Protocol):
    """What memcore needs from an embedding backend."""

    id: str  # stable backend id (thresholds are stored with it)
    dim: int
    default_merge_threshold: float

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32 array (len(texts), dim) with L2-normalised rows."""
        ...


def get_embedder(name: str = "hashing") -> Embedder:
    """The embedder registered under ``name``; ConfigError for an unknown or missing backend."""
    key = (name or "hashing").strip().lower()
    if key == "hashing":
        from memcore.search.embeddings.hashing import HashingEmbedder

        return HashingEmbedder()
    if key == "minilm":
        from memcore.search.embeddings.onnx import create_embedder

        try:
            return create_embedder()
        except ImportError as exc:  # onnxruntime, tokenizers or the model package missing
            raise ConfigError(f"{_NEEDS_EXTRA} ({exc})") from None
    raise ConfigError(f"unknown embedding backend {name!r}; allowed: {', '.join(BACKENDS)}")


def content_sha1(text: str) -> str:
    """Hex SHA-1 of the UTF-8 text: the content half of a cache key."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def cache_id(embedder: Embedder) -> str:
    """The backend half of a cache key (includes the IDF fingerprint for hashing)."""
    return str(getattr(embedder, "cache_id", None) or embedder.id)


class VectorCache:
    """Vectors in ``memcore.sqlite`` keyed by (backend cache id, content SHA-1)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(
            "CREATE TABLE IF NOT EXISTS embedding_cache ("
            " backend TEXT NOT NULL, sha1 TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL,"
            " PRIMARY KEY (backend, sha1)) WITHOUT ROWID"
        )

    def get_many(self, backend: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors of the given content hashes (missing ones are left out)."""
        import numpy as np

        out: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self.conn.execute(
                "SELECT sha1, dim, vec FROM embedding_cache"
                f" WHERE backend = ? AND sha1 IN ({marks})",
                [backend, *part],
            )
            for sha1, dim, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float32)
                if vec.shape == (dim,):
                    out[sha1] = vec
        return out

    def put_many(self, backend: str, items: Mapping[str, np.ndarray]) -> None:
        """Store vectors by content hash (replacing what was there)."""
        import numpy as np

        rows = []
        for sha1, vec in items.items():
            arr = np.ascontiguousarray(vec, dtype=np.float32).reshape(-1)
            rows.append((backend, sha1, int(arr.shape[0]), arr.tobytes()))
        if not rows:
            return
        own_tx = not self.conn.in_transaction
        if own_tx:
            self.conn.execute("BEGIN")
        try:
            self.conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache (backend, sha1, dim, vec)"
                " VALUES (?, ?, ?, ?)",
                rows,
            )
        except BaseException:
            if own_tx:
                db_rollback(self.conn)
            raise
        if own_tx:
            self.conn.execute("COMMIT")

    def prune(self, backend: str, keep: set[str] | None = None) -> int:
        """Drop a backend's vectors (all, or all but ``keep``); returns how many went."""
        if keep is None:
            cur = self.conn.execute("DELETE FROM embedding_cache WHERE backend = ?", (backend,))
            return cur.rowcount
        have = [
            r[0]
            for r in self.conn.execute(
                "SELECT sha1 FROM embedding_cache WHERE backend = ?", (backend,)
            )
        ]
        drop = [h for h in have if h not in keep]
        self.conn.executemany(
            "DELETE FROM embedding_cache WHERE backend = ? AND sha1 = ?",
            [(backend, h) for h in drop],
        )
        return len(drop)


def embed_batches(
    embedder: Embedder, texts: Sequence[str], progress: Progress | None = None
) -> np.ndarray:
    """``embedder.embed(texts)`` in batches of EMBED_BATCH, reporting
    ``progress(EMBED_LABEL, done, total)`` after each (a model takes a while on many texts)."""
    import numpy as np

    texts = list(texts)
    if progress is None or len(texts) <= EMBED_BATCH:
        out = np.asarray(embedder.embed(texts), dtype=np.float32)
        report(progress, EMBED_LABEL, len(texts), len(texts))
        return out
    parts = []
    for start in range(0, len(texts), EMBED_BATCH):
        parts.append(np.asarray(embedder.embed(texts[start : start + EMBED_BATCH]), np.float32))
        report(progress, EMBED_LABEL, min(len(texts), start + EMBED_BATCH), len(texts))
    return np.concatenate(parts)


def embed_cached(
    embedder: Embedder,
    texts: Sequence[str],
    cache: VectorCache | None,
    progress: Progress | None = None,
) -> np.ndarray:
    """Embed ``texts``, taking unchanged ones from the cache and storing the new ones."""
    import numpy as np

    texts = list(texts)
    if cache is None or not texts:
        return embed_batches(embedder, texts, progress)
    backend = cache_id(embedder)
    hashes = [content_sha1(t) for t in texts]
    have = cache.get_many(backend, hashes)
    missing = [i for i, h in enumerate(hashes) if h not in have or have[h].shape != (embedder.dim,)]
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    if missing:
        fresh = embed_batches(embedder, [texts[i] for i in missing], progress)
        new: dict[str, np.ndarray] = {}
        for row, i in enumerate(missing):
            out[i] = fresh[row]
            new[hashes[i]] = fresh[row]
        cache.put_many(backend, new)
    missing_set = set(missing)
    for i, h in enumerate(hashes):
        if i not in missing_set:
            out[i] = have[h]
    return out
