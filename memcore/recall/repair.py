"""Repair of the recall store (``memcore memory status --fix``): normalise every entry, drop
invalid ones, de-duplicate query hashes, and rewrite the file only when that changes it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memcore.recall.store import read_store, write_store
from memcore.workspace.clock import iso_ms, utcnow
from memcore.workspace.core import Workspace


@dataclass
class RepairResult:
    changed: bool
    dropped_invalid: int
    entries: int
    quarantined: Path | None = None


def repair_store(
    ws: Workspace, *, now: datetime | None = None, lock_timeout: float | None = None
) -> RepairResult:
    """Normalise the store (drop invalid entries, de-duplicate hashes); rewrite only on change."""
    now = now or utcnow()
    with ws.lock(lock_timeout):
        path = ws.store_path
        before = path.read_bytes() if path.exists() else None
        store = read_store(ws, now=now)
        if store.quarantined is not None:
            write_store(ws, store, now)
            return RepairResult(True, 0, 0, store.quarantined)
        if before is None:
            return RepairResult(False, 0, 0)
        if not before.strip():
            write_store(ws, store, now)
            return RepairResult(True, 0, 0)
        store.updated_at = store.updated_at or iso_ms(now)
        after = store.to_json_bytes()
        if after == before:
            return RepairResult(False, 0, len(store.entries))
        write_store(ws, store, now)
        return RepairResult(True, store.invalid, len(store.entries))
