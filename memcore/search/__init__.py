"""Memory search: the incremental index over MEMORY.md and memory/*.md, queries, and the
embedding backends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.search.chunks import Chunk, chunk_markdown
    from memcore.search.embeddings import (
        BACKENDS,
        Embedder,
        VectorCache,
        cache_id,
        content_sha1,
        default_backend,
        embed_cached,
        get_embedder,
        resolve_backend,
    )
    from memcore.search.index import IndexReport, index_stats, open_index, update_index
    from memcore.search.query import SearchResult, hit_score, last_record_error, query_index, search

__all__ = [
    "BACKENDS",
    "Chunk",
    "Embedder",
    "IndexReport",
    "SearchResult",
    "VectorCache",
    "cache_id",
    "chunk_markdown",
    "content_sha1",
    "default_backend",
    "embed_cached",
    "get_embedder",
    "hit_score",
    "index_stats",
    "last_record_error",
    "open_index",
    "query_index",
    "resolve_backend",
    "search",
    "update_index",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "chunks": ("Chunk", "chunk_markdown"),
        "embeddings": (
            "BACKENDS",
            "Embedder",
            "VectorCache",
            "cache_id",
            "content_sha1",
            "default_backend",
            "embed_cached",
            "get_embedder",
            "resolve_backend",
        ),
        "index": ("IndexReport", "index_stats", "open_index", "update_index"),
        "query": ("SearchResult", "hit_score", "last_record_error", "query_index", "search"),
    },
)
