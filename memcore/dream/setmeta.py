"""``memcore memory set``: a human sets an entry's importance, pin, type or scope.

Pin, type and scope are written into the entry's marker (the file stays the source of truth and
a reader of MEMORY.md sees them); importance goes to the ledger. The edit is a journaled run,
so ``memcore dream undo`` reverses it like any other.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from memcore.dream import tables
from memcore.errors import InputError
from memcore.journal import runs as journal
from memcore.journal import wal
from memcore.journal.runs import Change
from memcore.recall import ledger
from memcore.workspace.core import Workspace
from memcore.workspace.entries import (
    SCOPES,
    TYPES,
    Document,
    Entry,
    body_of,
    entry_raw,
    eol_of,
    marker_attrs_for,
    parse,
    render,
)
from memcore.workspace.kinds import kind_of


def find_entry(doc: Document, entry_id: str) -> tuple[int, Entry]:
    """The entry with this id, or the only one whose id starts with it (4+ characters)."""
    for i, e in enumerate(doc.entries):
        if e.id == entry_id:
            return i, e
    if len(entry_id) >= 4:
        hits = [(i, e) for i, e in enumerate(doc.entries) if e.id.startswith(entry_id)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise InputError(
                f"id {entry_id!r} is ambiguous: {', '.join(e.id for _, e in hits[:5])}"
            )
    raise InputError(f"no entry {entry_id!r} in MEMORY.md (memcore dream entries lists the ids)")


def set_entry(
    ws: Workspace,
    entry_id: str,
    *,
    now: datetime,
    importance: float | None = None,
    pinned: bool | None = None,
    type: str | None = None,
    scope: str | None = None,
    trigger: str = "command",
    lock_timeout: float | None = None,
) -> dict[str, Any]:
    """Change one entry's metadata; returns the entry's id and metadata after.

    LockBusy when the workspace lock is not free within ``lock_timeout`` seconds."""
    if importance is not None and not 0.0 <= importance <= 1.0:
        raise InputError(f"importance {importance!r} is out of range; allowed: 0 to 1")
    if type is not None and type not in TYPES:
        raise InputError(f"type {type!r} is not allowed; allowed: {', '.join(TYPES)}")
    if scope is not None and scope not in SCOPES:
        raise InputError(f"scope {scope!r} is not allowed; allowed: {', '.join(SCOPES)}")
    with ws.lock(lock_timeout), tables.connect(ws) as conn:
        source = ledger.read_memory(ws)
        doc = parse(source)
        idx, e = find_entry(doc, entry_id)
        before_meta = ledger.metas_for(conn, Document(source, doc.lines, [e], []), now)[e.id]
        changes: list[Change] = []
        marker_changes: dict[str, str | None] = {}
        if pinned is not None:
            marker_changes["pinned"] = "true" if pinned else None
        if type is not None:
            marker_changes["type"] = type
        if scope is not None:
            marker_changes["scope"] = scope
        text = source
        if marker_changes and kind_of(ws.root).name == "hermes":
            raise InputError(
                f"{ws.memory_md} is a Hermes memory file (§ entries, no markers), so pin, type "
                "and scope cannot be written there; allowed: --importance (kept in memcore's "
                "ledger)"
            )
        if marker_changes:
            new_raw = entry_raw(body_of(e), marker_attrs_for(e, **marker_changes), eol_of(e))
            if new_raw != e.raw:
                text = render(doc, {idx: new_raw})
                changes.append(
                    Change("set", "modify", e.id, "memory set", before_raw=e.raw, after_raw=new_raw)
                )
        after_meta = replace(
            before_meta,
            importance=before_meta.importance if importance is None else float(importance),
            pinned=before_meta.pinned if pinned is None else pinned,
            type=type or before_meta.type,
            scope=scope or before_meta.scope,
        )
        changes.append(
            Change(
                "set",
                "meta",
                e.id,
                "memory set",
                before_meta=before_meta.to_json(),
                after_meta=after_meta.to_json(),
            )
        )
        wal.commit_run(
            ws,
            conn,
            wal.RunSpec(
                journal.new_run_id(now),
                "set",
                "set",
                now,
                trigger,
                counters={"set": 1},
                changes=changes,
            ),
            {ws.memory_md: text.encode("utf-8")} if text != source else {},
            finish=lambda c: ledger.save(c, [after_meta]),
        )
    return {"id": e.id, **after_meta.to_json()}
