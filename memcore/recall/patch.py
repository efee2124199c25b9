"""Recording a search without re-parsing the whole recall store.

When the SQLite mirror says the store file is exactly as memcore last wrote it, the file's
layout is known (orjson's 2-space indentation: one entry per block at four spaces). Recording
then parses only the blocks of the hit keys, splices the updated blocks in, drops capped entries
picked from the mirror, and writes the file atomically. Anything unexpected returns None and
the caller takes the full read-modify-write path; the result on disk is the same either way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

import orjson

from memcore.recall import mirror as recall_index
from memcore.recall.entries import apply_hashed, js_numbers
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace, atomic_write_bytes

_HEAD = b'{\n  "version": 1,\n  "updatedAt": "'
_ENTRIES = b'\n  "entries": {\n'
_TAIL = b"\n  }\n}\n"
_BLOCK_END = b"\n    }"


def _block_bytes(key: str, entry: dict[str, Any]) -> bytes:
    body = orjson.dumps(js_numbers(entry), option=orjson.OPT_INDENT_2).replace(b"\n", b"\n    ")
    return b"\n    " + orjson.dumps(key) + b": " + body


def _find_block(data: bytes, key: str, start: int) -> tuple[int, int] | None:
    marker = b"\n    " + orjson.dumps(key) + b": {\n"
    i = data.find(marker, start)
    if i == -1:
        return None
    j = data.find(_BLOCK_END, i + len(marker) - 1)
    if j == -1:
        return None
    return i, j + len(_BLOCK_END)


def try_record(
    ws: Workspace,
    conn: sqlite3.Connection,
    before: recall_index.Stat,
    events: list[Any],
    now: datetime,
    max_entries: int | None,
    protect: Callable[[dict[str, Any]], bool] | None,
    before_replace: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], list[str]] | None:
    """Fold recall-log ``events`` (in order) by patching the file; returns (the updated
    entries, dropped keys) or None when the fast path does not apply. Call with the
    workspace lock held."""
    if before is None:
        return None
    if recall_index.current_meta(conn) != before:
        return None
    totals = recall_index.counts(conn)
    if max_entries is not None and totals["entries"] + totals["invalid"] > max_entries:
        return None  # over the cap already: the full path keeps what it evicts
    data = ws.store_path.read_bytes()
    if not (data.startswith(_HEAD) and data.endswith(_TAIL)) or totals["entries"] == 0:
        return None
    entries_at = data.find(_ENTRIES)
    if entries_at == -1:
        return None
    body_start = entries_at + len(_ENTRIES) - 1
    keys = list(dict.fromkeys(h.key for ev in events for h in ev.hits))
    found: dict[str, tuple[int, int]] = {}
    current: dict[str, Any] = {}
    for key in keys:
        span = _find_block(data, key, body_start)
        if span is not None:
            found[key] = span
            brace = data.index(b"{", span[0] + 5)
            current[key] = orjson.loads(data[brace : span[1]])
    for ev in events:
        apply_hashed(current, ev.query_hash, ev.hits, ev.at, ev.origin)
    new_keys = [k for k in keys if k not in found]
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
    for key in dropped:
        span = _find_block(data, key, body_start)
        if span is None:
            return None
        spans.append(span)
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
    atomic_write_bytes(ws.store_path, out, before_replace=before_replace)
    return current, dropped


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
