"""Entries the cap took from a recall store memcore did not write, kept so nothing is lost.

When memcore meets a store over ``max_entries`` (another tool wrote it, or the cap was
lowered), the entries the cap drops go to ``memory/.dreams/evicted-<UTC>.json.gz``
(``{"version": 1, "evictedAt", "maxEntries", "entries": {...}}``, gzip). ``memory status``
lists these files; ``memory status --fix`` puts the entries back, raising
``[dreaming] max_entries`` in memcore.toml when the store would otherwise exceed it.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memcore.errors import StoreError
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace, atomic_write_bytes

PREFIX = "evicted-"
SUFFIX = ".json.gz"


def save_evicted(
    ws: Workspace, entries: dict[str, Any], now: datetime, max_entries: int | None
) -> Path:
    """Write ``entries`` to a new sidecar and return its path (a name no other run has)."""
    stamp = now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}Z"
    doc = {"version": 1, "evictedAt": iso_ms(now), "maxEntries": max_entries, "entries": entries}
    data = gzip.compress(orjson.dumps(doc), compresslevel=6, mtime=0)
    for n in range(1000):
        path = ws.dreams_dir / f"{PREFIX}{stamp}{'' if n == 0 else f'-{n}'}{SUFFIX}"
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            continue
        os.close(fd)  # the name is ours; fill it atomically
        atomic_write_bytes(path, data)
        return path
    raise StoreError(f"no free name for an evicted-entries file in {ws.dreams_dir}")


def sidecars(ws: Workspace) -> list[Path]:
    """Evicted-entries files, oldest first."""
    if not ws.dreams_dir.is_dir():
        return []
    return sorted(ws.dreams_dir.glob(PREFIX + "*" + SUFFIX))


def load(path: Path) -> dict[str, Any]:
    """The entries of one sidecar (StoreError when it cannot be read)."""
    try:
        doc = orjson.loads(gzip.decompress(path.read_bytes()))
    except (OSError, EOFError, orjson.JSONDecodeError) as exc:
        raise StoreError(f"cannot read evicted entries {path}: {exc}") from None
    entries = doc.get("entries") if isinstance(doc, dict) else None
    if not isinstance(entries, dict):
        raise StoreError(f"{path} does not hold evicted entries")
    return entries


def summary(ws: Workspace) -> list[dict[str, Any]]:
    """``[{path, entries}]`` for ``memory status`` (entries None when unreadable)."""
    out: list[dict[str, Any]] = []
    for p in sidecars(ws):
        try:
            n: int | None = len(load(p))
        except StoreError:
            n = None
        out.append({"path": str(p), "entries": n})
    return out


@dataclass
class RestoreResult:
    restored: int = 0
    already: int = 0  # keys the store holds again (recorded since): the live entry wins
    files: list[str] = field(default_factory=list)
    cap_raised_to: int | None = None


def restore(ws: Workspace, now: datetime, *, lock_timeout: float | None = None) -> RestoreResult:
    """Put every evicted entry back into the store (under the lock) and delete the sidecars.

    When the store would exceed ``max_entries``, ``[dreaming] max_entries`` in memcore.toml is
    raised to fit (the result says to what), since a cap below the store's size would evict
    the same entries again."""
    from memcore.recall.store import fold_logged, read_store, write_store
    from memcore.workspace.config import dreaming_settings, load_config, set_value

    out = RestoreResult()
    with ws.lock(lock_timeout):
        files = sidecars(ws)
        if not files:
            return out
        fold_logged(ws, now)
        store = read_store(ws, now=now, normalize=False)
        changed: list[str] = []
        for p in files:
            for key, entry in load(p).items():
                if key in store.entries:
                    out.already += 1
                    continue
                store.entries[key] = entry
                changed.append(key)
        cap = dreaming_settings(load_config(ws)).max_entries
        if len(store.entries) > cap:
            out.cap_raised_to = len(store.entries)
            set_value(ws, "dreaming", "max_entries", out.cap_raised_to)
        write_store(ws, store, now, changed=None)
        for p in files:
            p.unlink()
            out.files.append(str(p))
        out.restored = len(changed)
    return out
