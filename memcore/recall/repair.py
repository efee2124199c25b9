"""Repair of the recall store (``memcore memory status --fix``): fold pending recalls, normalise
every entry, drop invalid ones (saying why: no path, a line number beyond SQLite's range...),
de-duplicate query hashes, redact secrets in snippets, put back entries the cap once set aside,
and rewrite the file only when that changes it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memcore.recall import evicted
from memcore.recall.entries import clean_snippet, invalid_reason, normalize_entry
from memcore.recall.store import fold_logged, read_store, write_store
from memcore.workspace.clock import iso_ms, utcnow
from memcore.workspace.core import Workspace


@dataclass
class RepairResult:
    changed: bool
    dropped_invalid: int
    entries: int
    quarantined: Path | None = None
    reasons: dict[str, int] = field(default_factory=dict)  # why entries were dropped
    redacted: int = 0  # snippets that held a secret
    restored: evicted.RestoreResult | None = None


def repair_store(
    ws: Workspace, *, now: datetime | None = None, lock_timeout: float | None = None
) -> RepairResult:
    """Repair the store (see the module docstring); rewrite only on change."""
    now = now or utcnow()
    restored = evicted.restore(ws, now, lock_timeout=lock_timeout) if evicted.sidecars(ws) else None
    with ws.lock(lock_timeout):
        fold_logged(ws, now)
        path = ws.store_path
        before = path.read_bytes() if path.exists() else None
        raw = read_store(ws, now=now, normalize=False)
        if raw.quarantined is not None:
            write_store(ws, raw, now)
            return RepairResult(True, 0, 0, raw.quarantined, restored=restored)
        if before is None:
            return RepairResult(False, 0, 0, restored=restored)
        store = read_store(ws, now=now)
        reasons = Counter(
            invalid_reason(e)
            for k, e in raw.entries.items()
            if normalize_entry(k, e, iso_ms(now)) is None
        )
        redacted = 0
        for entry in store.entries.values():
            clean = clean_snippet(entry.get("snippet"))
            if clean != entry.get("snippet"):
                entry["snippet"] = clean
                redacted += 1
        out = RepairResult(
            False, store.invalid, len(store.entries), reasons=dict(reasons), redacted=redacted
        )
        out.restored = restored
        if not before.strip():
            write_store(ws, store, now)
            out.changed = True
            return out
        store.updated_at = store.updated_at or iso_ms(now)
        if store.to_json_bytes() != before:
            write_store(ws, store, now)
            out.changed = True
        return out
