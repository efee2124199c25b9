"""``memcore dream undo``: put a run's changes back, or refuse without changing anything.

When MEMORY.md is exactly what the run left, its text before the run comes back byte for byte.
Otherwise each change is reversed on its own: rewritten entries must still hold the run's text,
removed entries come back after the entry that preceded them (or at the top of their
section), added entries go if unchanged. Any later edit in the way is a conflict: the undo is
refused, naming the entries. An empty "Promoted From Short-Term Memory" section the run
appended goes with its entries. Metadata is restored from the journal; the undo is a run too.

The recall keys a promote step marked get their previous ``promotedAt`` back (so they can be
promoted again), through the recall store's own read/write (its SQLite mirror follows), but
only where ``promotedAt`` is still what the run set: a later change is left alone and reported.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from memcore.dream import tables
from memcore.errors import InputError
from memcore.journal import runs as journal
from memcore.journal.runs import Change
from memcore.recall import ledger
from memcore.recall import mirror as recall_index
from memcore.recall.store import read_store, write_store
from memcore.workspace.core import Workspace, atomic_write_text
from memcore.workspace.entries import Document, content_hash, insert_at, parse, render

#: Heading of the section ``memcore.promote`` appends (kept in step with promote.SECTION_PREFIX).
PROMOTED_SECTION = "## Promoted From Short-Term Memory"
_TOP_HEADING_RE = re.compile(r"#{1,2}\s")


class UndoConflict(InputError):
    """A later edit conflicts with the undo; nothing was changed."""


def _same(a: str | None, b: str | None) -> bool:
    return (a or "").rstrip("\r\n") == (b or "").rstrip("\r\n")


def _insert_pos(doc: Document, anchor: dict[str, Any]) -> int:
    lines = doc.lines
    by_id = doc.by_id()
    prev = anchor.get("prev")
    if prev and prev in by_id:
        pos = by_id[prev].end
    else:
        pos = -1
        section = anchor.get("section") or ""
        if section:
            for i, ln in enumerate(lines):
                s = ln.strip()
                if s.startswith("#") and s.lstrip("#").strip() == section:
                    pos = i + 1
                    break
        if pos < 0:
            pos = min(int(anchor.get("line", len(lines))), len(lines))
    if anchor.get("blankAfter") or (prev is None or prev not in by_id):
        while pos < len(lines) and not lines[pos].strip():
            pos += 1
    return pos


def _added_by_run(changes: list[Change]) -> dict[str, str | None]:
    """Entries the run added (promote): id -> their text when the run ended (None when a later
    step of the same run removed them again)."""
    added: dict[str, str | None] = {}
    for c in changes:
        if c.action == "add" or (c.entry_id in added and c.action == "modify"):
            added[c.entry_id] = c.after_raw
        elif c.entry_id in added and c.action == "remove":
            added[c.entry_id] = None
    return added


def _lines_count(text: str, line: str) -> int:
    return sum(1 for ln in text.splitlines() if ln == line)


def drop_added_sections(text: str, before: str) -> str:
    """Remove promoted-section headings the run appended (not in ``before``, its text before
    the run) whose section is now empty, with the blank lines around them it added."""
    lines = text.splitlines(keepends=True)
    budget: dict[str, int] = {}
    for ln in lines:
        h = ln.rstrip("\r\n")
        if h.startswith(PROMOTED_SECTION) and h not in budget:
            budget[h] = _lines_count(text, h) - _lines_count(before, h)
    out: list[str] = []
    i = 0
    while i < len(lines):
        h = lines[i].rstrip("\r\n")
        if budget.get(h, 0) > 0:
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j == len(lines) or _TOP_HEADING_RE.match(lines[j]):
                budget[h] -= 1
                if out and not out[-1].strip():
                    out.pop()
                i = j
                continue
        out.append(lines[i])
        i += 1
    result = "".join(out)
    if not before.strip() and result.strip() in ("", "# Long-Term Memory"):
        return before  # the run also wrote the title into an empty file
    return result


def reverse_text(source: str, changes: list[Change], before: str | None = None) -> str:
    """MEMORY.md with ``changes`` reversed; raises UndoConflict when a later edit is in the way.

    ``before`` is the text before the run: promoted sections it lacked and that are now empty
    are removed too."""
    doc = parse(source)
    index = {e.id: i for i, e in enumerate(doc.entries)}
    problems: list[str] = []
    edits: dict[int, str | None] = {}
    added = _added_by_run(changes)
    for eid, final in added.items():
        i = index.get(eid)
        if i is None:
            continue
        if final is None:
            problems.append(f"{eid} (added and removed by the run) is in MEMORY.md again")
        elif not _same(doc.entries[i].raw, final):
            problems.append(f"{eid} (added by the run) was edited after it")
        else:
            edits[i] = None
    for c in changes:
        if c.entry_id in added:
            continue
        i = index.get(c.entry_id)
        if c.action == "modify":
            if i is None:
                problems.append(f"{c.entry_id} (rewritten by the run) is gone")
            elif not _same(doc.entries[i].raw, c.after_raw):
                problems.append(f"{c.entry_id} was edited after the run")
            else:
                edits[i] = c.before_raw
        elif c.action == "remove" and i is not None:
            problems.append(f"{c.entry_id} (removed by the run) is in MEMORY.md again")
    if problems:
        raise UndoConflict(
            "cannot undo: a later edit conflicts with it: "
            + "; ".join(problems[:5])
            + ("; …" if len(problems) > 5 else "")
            + ". Nothing was changed."
        )
    text = render(doc, edits) if edits else source
    dropped_added = any(v is None and doc.entries[k].id in added for k, v in edits.items())
    if before is not None and dropped_added:
        text = drop_added_sections(text, before)
    for c in changes:
        if c.action != "remove" or c.before_raw is None or c.entry_id in added:
            continue
        d = parse(text)
        pos = _insert_pos(d, c.anchor)
        chunk = c.before_raw if c.before_raw.endswith("\n") else c.before_raw + "\n"
        if c.anchor.get("blankAfter"):
            chunk += "\n"
        text = insert_at(text, pos, chunk)
    return text


def _plan_recall(
    ws: Workspace, marks: list[Change], now: datetime
) -> tuple[Any, recall_index.Stat, list[Change], list[dict[str, Any]]]:
    """Read the recall store (lock held) and decide, per key the run marked promoted, whether
    its ``promotedAt`` can go back: (store, its stat before, restorable marks, kept ones)."""
    if not marks:
        return None, None, [], []
    stat = recall_index.file_stat(ws)
    store = read_store(ws, now=now, normalize=False)  # untouched entries stay as they are
    if store.quarantined:
        stat = None
    restore: list[Change] = []
    kept: list[dict[str, Any]] = []
    for c in marks:
        set_to = (c.after_meta or {}).get("promotedAt")
        entry = store.entries.get(c.entry_id)
        now_at = entry.get("promotedAt") if isinstance(entry, dict) else None
        if not isinstance(entry, dict):
            kept.append({"key": c.entry_id, "reason": "no longer in the recall store"})
        elif now_at != set_to:
            kept.append(
                {
                    "key": c.entry_id,
                    "promotedAt": now_at,
                    "reason": "promotedAt was changed after the run; left as it is",
                }
            )
        else:
            restore.append(c)
    return store, stat, restore, kept


def _restore_recall(
    ws: Workspace, store: Any, stat: recall_index.Stat, restore: list[Change], now: datetime
) -> None:
    """Put the previous ``promotedAt`` back on ``restore``'s keys; one atomic store write."""
    if not restore:
        return
    for c in restore:
        entry = store.entries[c.entry_id]
        previous = (c.before_meta or {}).get("promotedAt")
        if previous is None:
            entry.pop("promotedAt", None)
        else:
            entry["promotedAt"] = previous
    write_store(ws, store, now, before=stat, changed=[c.entry_id for c in restore])


def undo_run(
    ws: Workspace, run_id: str | None = None, *, now: datetime, lock_timeout: float = 10.0
) -> dict[str, Any]:
    """Undo ``run_id`` (default: the latest applied run). Returns what was restored."""
    with ws.lock(lock_timeout), tables.connect(ws) as conn:
        rid = run_id or journal.latest_undoable(conn)
        if rid is None:
            raise InputError("no dream run to undo (memcore dream history lists runs)")
        row = journal.get_run(conn, rid)
        if row is None:
            raise InputError(f"no dream run {rid!r} (memcore dream history lists runs)")
        if row["kind"] == "undo":
            raise InputError(f"run {rid} is an undo; run memcore dream again instead")
        if row["status"] == "undone":
            raise InputError(f"run {rid} was already undone by {row['undone_by']}")
        changes = journal.changes_of(conn, rid)
        source = ledger.read_memory(ws)
        before = journal.before_text(row)
        if content_hash(source) == row["after_sha1"] and before is not None:
            text = before
        else:
            text = reverse_text(source, changes, before)
        marks = [c for c in changes if c.action == "recall"]
        store, stat, recall_back, recall_kept = _plan_recall(ws, marks, now)
        back_keys = {c.entry_id for c in recall_back}
        inverse: list[Change] = []
        for c in changes:
            if c.action == "recall":
                if c.entry_id in back_keys:
                    inverse.append(
                        Change(
                            "undo",
                            "recall",
                            c.entry_id,
                            f"undo of {rid}",
                            before_meta=c.after_meta,
                            after_meta=c.before_meta,
                        )
                    )
                continue
            if c.action in ("remove", "modify", "add"):
                inverse.append(
                    Change(
                        "undo",
                        {"remove": "add", "add": "remove", "modify": "modify"}[c.action],
                        c.entry_id,
                        f"undo of {rid}",
                        before_raw=c.after_raw,
                        after_raw=c.before_raw,
                        anchor=c.anchor,
                    )
                )
            if c.before_meta is not None or c.action in ("meta", "add"):
                inverse.append(
                    Change(
                        "undo",
                        "meta",
                        c.entry_id,
                        f"undo of {rid}",
                        before_meta=c.after_meta,
                        after_meta=c.before_meta,
                    )
                )
        undo_id = journal.new_run_id(now)
        restored = sum(1 for c in changes if c.action == "remove")
        if text != source:
            atomic_write_text(ws.memory_md, text)
        _restore_recall(ws, store, stat, recall_back, now)
        journal.remove_archived(ws, rid)
        conn.execute("BEGIN IMMEDIATE")
        try:
            for c in reversed(changes):
                if c.action == "recall":
                    continue  # recall-store state, restored above
                if c.action == "add":
                    ledger.restore(conn, c.entry_id, None)
                elif c.before_meta is not None:
                    ledger.restore(conn, c.entry_id, c.before_meta)
            journal.record_run(
                conn,
                run_id=undo_id,
                kind="undo",
                mode="undo",
                started=now,
                finished=now,
                counters={
                    "restored": restored,
                    "changes": len(changes),
                    "recallRestored": len(recall_back),
                    "recallKept": len(recall_kept),
                },
                before_text=source,
                before_sha1=content_hash(source),
                after_sha1=content_hash(text),
                changes=inverse,
                undo_of=rid,
            )
            conn.execute(
                "UPDATE dream_runs SET status = 'undone', undone_by = ? WHERE run_id = ?",
                (undo_id, rid),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return {
        "runId": rid,
        "undoRunId": undo_id,
        "restored": restored,
        "changes": len(changes),
        "exact": text == before,
        "recallRestored": [c.entry_id for c in recall_back],
        "recallKept": recall_kept,
        "warnings": [f"recall entry {k['key']} stays as it is: {k['reason']}" for k in recall_kept],
    }
