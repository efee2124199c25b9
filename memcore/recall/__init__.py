"""The short-term recall store: which daily-note snippets searches keep finding, how they
score, the entry ledger and the SQLite mirror.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.recall.entries import (
        MAX_QUERY_HASHES,
        MAX_SNIPPET_CHARS,
        entry_key,
        normalize_snippet,
        query_hash,
    )
    from memcore.recall.ledger import Meta, record_access
    from memcore.recall.scoring import (
        Candidate,
        Thresholds,
        feasibility,
        first_failed_gate,
        gate_checks,
        is_eligible,
        passes_gates,
        rank,
        score_entry,
    )
    from memcore.recall.store import (
        Store,
        fresh_mirror,
        quarantined_files,
        read_store,
        record_recalls,
        write_store,
    )

__all__ = [
    "MAX_QUERY_HASHES",
    "MAX_SNIPPET_CHARS",
    "Candidate",
    "Meta",
    "Store",
    "Thresholds",
    "entry_key",
    "feasibility",
    "first_failed_gate",
    "fresh_mirror",
    "gate_checks",
    "is_eligible",
    "normalize_snippet",
    "passes_gates",
    "quarantined_files",
    "query_hash",
    "rank",
    "read_store",
    "record_access",
    "record_recalls",
    "score_entry",
    "write_store",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "entries": (
            "MAX_QUERY_HASHES",
            "MAX_SNIPPET_CHARS",
            "entry_key",
            "normalize_snippet",
            "query_hash",
        ),
        "ledger": ("Meta", "record_access"),
        "scoring": (
            "Candidate",
            "Thresholds",
            "feasibility",
            "first_failed_gate",
            "gate_checks",
            "is_eligible",
            "passes_gates",
            "rank",
            "score_entry",
        ),
        "store": (
            "Store",
            "fresh_mirror",
            "quarantined_files",
            "read_store",
            "record_recalls",
            "write_store",
        ),
    },
)
