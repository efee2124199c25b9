"""Recording a search without re-parsing the whole recall store.

When the SQLite mirror says the store file is exactly as memcore last wrote it, the file's
layout is known (orjson's 2-space indentation: one entry per block at four spaces). Recording
then parses only the blocks of the hit keys, splices the updated blocks in, drops capped entries
picked from the mirror, and writes the file atomically. Anything unexpected returns None and
the caller takes the full read-modify-write path; the result on disk is the same either way.

The work is linear in the file whatever the number of keys: a few keys are each found with
one ``bytes.find``; more are found in a single regex pass over the blocks (:func:`locate`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from memcore.recall import mirror as recall_index
from memcore.recall.blocks import BLOCK_END as _BLOCK_END
from memcore.recall.blocks import BLOCK_START as _BLOCK_START
from memcore.recall.blocks import ENTRIES as _ENTRIES
from memcore.recall.blocks import HEAD as _HEAD
from memcore.recall.blocks import TAIL as _TAIL
from memcore.recall.blocks import block_bytes as _block_bytes
from memcore.recall.entries import apply_hashed
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace, atomic_write_bytes

#: Up to this many keys are found one ``find`` each; more take one pass over every block.
FEW_KEYS = 8


@dataclass
class Patched:
    """What a patching record did: the updated entries, the dropped ones (raw, as they were
    in the file) and how many times the file was searched from end to end."""

    entries: dict[str, Any]
    dropped: dict[str, Any]
    file_scans: int


def _block_end(data: bytes, i: int, marker_len: int) -> tuple[int, int] | None:
    j = data.find(_BLOCK_END, i + marker_len - 1)
    return None if j == -1 else (i, j + len(_BLOCK_END))


def locate(data: bytes, keys: Iterable[str], start: int) -> tuple[dict[str, tuple[int, int]], int]:
    """The (start, end) byte span of each key's block that is in the file after ``start``,
    and how many end-to-end searches that took: one per key for a few keys, else one regex
    pass over all blocks (so the cost never grows with keys x file)."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, tuple[int, int]] = {}
    if len(wanted) <= FEW_KEYS:
        for key in wanted:
            marker = b"\n    " + orjson.dumps(key) + b": {\n"
            i = data.find(marker, start)
            if i != -1 and (span := _block_end(data, i, len(marker))) is not None:
                found[key] = span
        return found, len(wanted)
    by_json = {orjson.dumps(k): k for k in wanted}
    for m in _BLOCK_START.finditer(data, start):
        name = by_json.get(m.group(1))
        if name is not None and name not in found:
            span = _block_end(data, m.start(), m.end() - m.start())
            if span is not None:
                found[name] = span
    return found, 1


def _block_entry(data: bytes, span: tuple[int, int]) -> Any:
    brace = data.index(b"{", span[0] + 5)
    return orjson.loads(data[brace : span[1]])


def try_record(
    ws: Workspace,
    conn: sqlite3.Connection,
    before: recall_index.Stat,
    events: list[Any],
    now: datetime,
    max_entries: int | None,
    protect: Callable[[dict[str, Any]], bool] | None,
    before_replace: Callable[[str], None] | None = None,
    on_evict: Callable[[dict[str, Any]], None] | None = None,
) -> Patched | None:
    """Fold recall-log ``events`` (in order) by patching the file, or None when the fast path
    does not apply. Call with the workspace lock held. ``on_evict`` gets the entries the cap
    drops (raw), before the file is written."""
    if before is None:
        return None
    if recall_index.current_meta(conn) != before:
        return None
    totals = recall_index.counts(conn)
    if max_entries is not None and totals["entries"] + totals["invalid"] > max_entries:
        return None  # over the cap already: the full path keeps what it evicts
    data = ws.store_path.read_bytes()
    if data.endswith(_TAIL[:-1]):
        data += b"\n"  # another writer left out the final newline; memcore's file has it
    if not (data.startswith(_HEAD) and data.endswith(_TAIL)) or totals["entries"] == 0:
        return None
    entries_at = data.find(_ENTRIES)
    if entries_at == -1:
        return None
    body_start = entries_at + len(_ENTRIES) - 1
    keys = list(dict.fromkeys(h.key for ev in events for h in ev.hits))
    found, scans = locate(data, keys, body_start)
    current: dict[str, Any] = {key: _block_entry(data, span) for key, span in found.items()}
    for ev in events:
        apply_hashed(current, ev.query_hash, ev.hits, ev.at, ev.origin)
    new_keys = [k for k in keys if k not in found]
    if new_keys and totals["invalid"]:
        return None  # a junk entry may hold a new key's name: the full path decides
    total_after = totals["entries"] + totals["invalid"] + len(new_keys)
    dropped: list[str] = []
    if max_entries is not None and total_after > max_entries:
        if totals["invalid"]:
            return None  # junk entries are not in the mirror: let the full path decide
        dropped = recall_index.cap_victims(conn, total_after - max_entries, set(keys), protect)
        if len(dropped) >= totals["entries"] + len(new_keys) - len(keys):
            return None

    edits: list[tuple[int, int, bytes]] = []
    for key, (i, j) in found.items():
        edits.append((i, j, _block_bytes(key, current[key])))
    spans = []
    evicted: dict[str, Any] = {}
    if dropped:
        dropped_at, n = locate(data, dropped, body_start)
        scans += n
        for key in dropped:
            span = dropped_at.get(key)
            if span is None:
                return None
            spans.append(span)
            evicted[key] = _block_entry(data, span)
    for start, end in _removal_runs(data, spans):
        if data[start - 1 : start] == b"," and data[end : end + 1] == b",":
            edits.append((start, end + 1, b""))  # survivors on both sides keep one comma
        elif data[start - 1 : start] == b",":
            edits.append((start - 1, end, b""))  # the run ends the object
        elif data[end : end + 1] == b",":
            edits.append((start, end + 1, b""))  # the run starts the object
        else:
            return None
    tail_at = len(data) - len(_TAIL)
    if new_keys:
        ins = b"".join(b"," + _block_bytes(k, current[k]) for k in new_keys)
        edits.append((tail_at, tail_at, ins))
    stamp_at = len(_HEAD)
    stamp_end = data.index(b'"', stamp_at)
    edits.append((stamp_at, stamp_end, iso_ms(now).encode()))
    out = _splice(data, edits)
    if out is None:
        return None
    if evicted and on_evict is not None:
        on_evict(evicted)
    atomic_write_bytes(ws.store_path, out, before_replace=before_replace)
    return Patched(current, evicted, scans)


def _removal_runs(data: bytes, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join removed blocks that sit next to each other (only a comma between) into runs."""
    runs: list[list[int]] = []
    for start, end in sorted(spans):
        if runs and start == runs[-1][1] + 1 and data[runs[-1][1] : start] == b",":
            runs[-1][1] = end
        else:
            runs.append([start, end])
    return [(a, b) for a, b in runs]


def _splice(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes | None:
    """Apply non-overlapping (start, end, replacement) edits; None if two overlap."""
    merged: list[tuple[int, int, bytes]] = []
    for start, end, rep in sorted(edits, key=lambda e: (e[0], e[1])):
        if merged and start < merged[-1][1]:
            return None
        merged.append((start, end, rep))
    parts: list[bytes] = []
    pos = 0
    for start, end, rep in merged:
        parts.append(data[pos:start])
        parts.append(rep)
        pos = end
    parts.append(data[pos:])
    return b"".join(parts)
