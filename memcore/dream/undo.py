"""``memcore dream undo``: put a run's changes back, or refuse without changing anything.

When MEMORY.md is exactly what the run left, its text before the run comes back byte for byte.
Otherwise each change is reversed on its own: rewritten entries must still hold the run's text,
removed entries come back after the entry that preceded them (or at the top of their
section), added entries go if unchanged. Any later edit in the way is a conflict: the undo is
refused, naming the entries. Metadata is restored from the journal; the undo is a run too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memcore.dream import journal, ledger
from memcore.dream.entries import Document, content_hash, insert_at, parse, render
from memcore.dream.journal import Change
from memcore.errors import InputError
from memcore.workspace import Workspace, atomic_write_text


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


def reverse_text(source: str, changes: list[Change]) -> str:
    """MEMORY.md with ``changes`` reversed; raises UndoConflict when a later edit is in the way."""
    doc = parse(source)
    index = {e.id: i for i, e in enumerate(doc.entries)}
    problems: list[str] = []
    edits: dict[int, str | None] = {}
    for c in changes:
        i = index.get(c.entry_id)
        if c.action == "modify":
            if i is None:
                problems.append(f"{c.entry_id} (rewritten by the run) is gone")
            elif not _same(doc.entries[i].raw, c.after_raw):
                problems.append(f"{c.entry_id} was edited after the run")
            else:
                edits[i] = c.before_raw
        elif c.action == "add":
            if i is None:
                continue
            if not _same(doc.entries[i].raw, c.after_raw):
                problems.append(f"{c.entry_id} (added by the run) was edited after it")
            else:
                edits[i] = None
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
    for c in changes:
        if c.action != "remove" or c.before_raw is None:
            continue
        d = parse(text)
        pos = _insert_pos(d, c.anchor)
        chunk = c.before_raw if c.before_raw.endswith("\n") else c.before_raw + "\n"
        if c.anchor.get("blankAfter"):
            chunk += "\n"
        text = insert_at(text, pos, chunk)
    return text


def undo_run(
    ws: Workspace, run_id: str | None = None, *, now: datetime, lock_timeout: float = 10.0
) -> dict[str, Any]:
    """Undo ``run_id`` (default: the latest applied run). Returns what was restored."""
    with ws.lock(lock_timeout), ledger.connect(ws) as conn:
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
            text = reverse_text(source, changes)
        inverse: list[Change] = []
        for c in changes:
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
        journal.remove_archived(ws, rid)
        conn.execute("BEGIN IMMEDIATE")
        try:
            for c in reversed(changes):
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
                counters={"restored": restored, "changes": len(changes)},
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
    }
