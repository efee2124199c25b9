"""Applying planned operations to MEMORY.md: atomic, journaled, compare-and-swap.

The caller holds ``ws.lock()``. Every operation names the entries it touches by id *and* by the
exact text it saw; when MEMORY.md no longer holds that text (a human edited it after the
plan), :class:`StalePlan` is raised and nothing is written. MEMORY.md, the archive and the
recall store are written by one write-ahead run (:mod:`memcore.journal.wal`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.errors import StalePlan
from memcore.journal import runs as journal
from memcore.journal import wal
from memcore.journal.runs import Change
from memcore.promotion import promote
from memcore.recall import ledger
from memcore.recall.ledger import Meta
from memcore.recall.store import stamped_bytes, sync_mirror
from memcore.workspace.core import Workspace
from memcore.workspace.entries import (
    Document,
    Entry,
    body_of,
    content_hash,
    entry_raw,
    eol_of,
    marker_attrs_for,
    parse,
    render,
)


@dataclass
class MergeOp:
    keeper_id: str
    keeper_raw: str
    absorbed: list[tuple[str, str]]  # (id, raw)
    new_text: str | None  # merged one-line text, None when the keeper's text stays
    keeper_after: Meta
    absorbed_metas: dict[str, Meta]
    reason: str
    step: str = "merge"


@dataclass
class RemoveOp:
    step: str  # reconcile | forget
    entry_id: str
    raw: str
    reason: str
    meta: Meta | None


@dataclass
class MetaOp:
    step: str
    entry_id: str
    before: Meta
    after: Meta
    reason: str


Op = MergeOp | RemoveOp | MetaOp


@dataclass
class Applied:
    run_id: str
    before_text: str
    after_text: str
    changes: list[Change] = field(default_factory=list)
    promoted: int = 0
    remaining: int = 0
    promotion: dict[str, Any] | None = None  # the promote step's outcome


PromoteFn = Callable[[sqlite3.Connection, str], "promote.Prepared"]


def promote_step(
    ws: Workspace, now: datetime
) -> Callable[[sqlite3.Connection, str], promote.Prepared]:
    """The dream's promote step: plans the promotion onto the MEMORY.md text it is given
    (inside the dream's own run: one run writes MEMORY.md, the archive and the store). Over
    the size budget, every candidate is held back instead of failing the run."""

    def step(conn: sqlite3.Connection, text: str) -> promote.Prepared:
        return promote.prepare(ws, conn, now=now, text=text, over_budget="hold")

    return step


def _same(a: str, b: str) -> bool:
    return a.rstrip("\r\n") == b.rstrip("\r\n")


def with_text(entry: Entry, new_text: str) -> str:
    """The entry's raw text with its one-line text replaced, keeping the bullet prefix and a
    promotion trailer; the marker keeps the entry's id (added when it had none)."""
    body = body_of(entry)
    first = body.split("\n", 1)[0]
    prefix = first[: len(first) - len(first.lstrip())]
    stripped = first.lstrip()
    for bullet in ("- ", "* ", "+ "):
        if stripped.startswith(bullet):
            prefix += bullet
            break
    trailer = ""
    import re

    m = re.search(
        r"\s*\[score=[0-9.]+\s+recalls=\d+\s+avg=[0-9.]+\s+source=[^\]]*\]\s*$", body.rstrip()
    )
    if m:
        trailer = " " + m.group(0).strip()
    eol = eol_of(entry)
    return entry_raw(prefix + new_text + trailer + eol, marker_attrs_for(entry), eol)


def anchor_of(doc: Document, idx: int) -> dict[str, Any]:
    e = doc.entries[idx]
    lines = doc.lines
    before_blank = e.start == 0 or not lines[e.start - 1].strip()
    blank_after = before_blank and e.end < len(lines) and not lines[e.end].strip()
    return {
        "prev": doc.entries[idx - 1].id
        if idx > 0 and doc.entries[idx - 1].section == e.section
        else None,
        "section": e.section,
        "line": e.start,
        "blankAfter": blank_after,
    }


def apply_ops(
    ws: Workspace,
    conn: sqlite3.Connection,
    ops: Sequence[Op],
    *,
    now: datetime,
    run_id: str,
    kind: str,
    mode: str,
    counters: dict[str, Any],
    expected_sha1: str | None = None,
    promote_fn: PromoteFn | None = None,
    trigger: str = "command",
    check: Callable[[str, str], None] | None = None,
    parsed: Document | None = None,
) -> Applied:
    """Apply ``ops`` (caller holds the lock) as one write-ahead run; return what happened.

    ``promote_fn`` plans the promote step first; the entries it appends are journaled as
    ``add`` changes and the recall keys it marks as ``recall`` changes (step ``promote``,
    ``promotedAt`` before and after in the metadata columns, not ledger metadata).
    ``check(before, after)`` may refuse the run (raise) before anything is written.
    ``parsed``: the parse the ops were planned on, used as it is when MEMORY.md (after the
    promote step, if any) is still its text (parsing a large MEMORY.md again costs time)."""
    source = ledger.read_memory(ws)
    if expected_sha1 is not None and content_hash(source) != expected_sha1:
        raise StalePlan(
            "MEMORY.md was edited since the report was made; nothing applied. "
            "Run memcore dream again to see a fresh report."
        )
    changes: list[Change] = []
    promoted = 0
    prep: promote.Prepared | None = None
    work_source = source
    if promote_fn is not None:
        prep = promote_fn(conn, source)
        promoted = prep.plan.promoted
        changes.extend(prep.plan.changes)
        work_source = prep.plan.text
    doc = parsed if parsed is not None and parsed.source == work_source else parse(work_source)
    index = {e.id: i for i, e in enumerate(doc.entries)}

    def find(entry_id: str, raw: str) -> int:
        i = index.get(entry_id)
        if i is None or not _same(doc.entries[i].raw, raw):
            raise StalePlan(
                f"entry {entry_id} changed or went away since the plan; nothing applied. "
                "Run memcore dream again."
            )
        return i

    edits: dict[int, str | None] = {}
    blocks: list[str] = []
    metas_after: dict[str, Meta] = {}
    dropped: list[str] = []
    for op in ops:
        if isinstance(op, MergeOp):
            k = find(op.keeper_id, op.keeper_raw)
            ke = doc.entries[k]
            if op.new_text is not None:
                new_raw = with_text(ke, op.new_text)
                edits[k] = new_raw
                changes.append(
                    Change(
                        op.step,
                        "modify",
                        ke.id,
                        op.reason,
                        before_raw=ke.raw,
                        after_raw=new_raw,
                        anchor=anchor_of(doc, k),
                    )
                )
            for aid, araw in op.absorbed:
                a = find(aid, araw)
                ae = doc.entries[a]
                edits[a] = None
                am = op.absorbed_metas.get(aid)
                reason = f"merged into {ke.id}"
                changes.append(
                    Change(
                        op.step,
                        "remove",
                        aid,
                        reason,
                        before_raw=ae.raw,
                        before_meta=am.to_json() if am else None,
                        anchor=anchor_of(doc, a),
                    )
                )
                blocks.append(
                    journal.archive_block(
                        run_id, op.step, aid, reason, ae.raw, am.to_json() if am else None, now
                    )
                )
                dropped.append(aid)
            before = op.absorbed_metas.get(op.keeper_id)
            changes.append(
                Change(
                    op.step,
                    "meta",
                    ke.id,
                    op.reason,
                    before_meta=before.to_json() if before else None,
                    after_meta=op.keeper_after.to_json(),
                )
            )
            metas_after[ke.id] = op.keeper_after
        elif isinstance(op, RemoveOp):
            i = find(op.entry_id, op.raw)
            e = doc.entries[i]
            edits[i] = None
            meta_json = op.meta.to_json() if op.meta else None
            changes.append(
                Change(
                    op.step,
                    "remove",
                    e.id,
                    op.reason,
                    before_raw=e.raw,
                    before_meta=meta_json,
                    anchor=anchor_of(doc, i),
                )
            )
            blocks.append(
                journal.archive_block(run_id, op.step, e.id, op.reason, e.raw, meta_json, now)
            )
            dropped.append(e.id)
        else:
            changes.append(
                Change(
                    op.step,
                    "meta",
                    op.entry_id,
                    op.reason,
                    before_meta=op.before.to_json(),
                    after_meta=op.after.to_json(),
                )
            )
            metas_after[op.entry_id] = op.after
    after_text = render(doc, edits) if edits else work_source
    if check is not None:
        check(source, after_text)
    final = parse(after_text)
    writes: dict[Path, bytes | None] = {}
    if after_text != source:
        writes[ws.memory_md] = after_text.encode("utf-8")
    archive = journal.archive_appended(ws, blocks)
    if archive is not None:
        writes[ws.archive_path] = archive.encode("utf-8")
    if prep is not None and prep.plan.marked:
        writes[ws.store_path] = stamped_bytes(prep.store, now)
    reinforced = prep.plan.reinforced if prep is not None else []
    counters = dict(counters, promoted=promoted, remaining=len(final.entries))
    if prep is not None and prep.plan.outcome.get("format"):
        counters["format"] = prep.plan.outcome["format"]  # how undo reverses its entries

    def finish(c: sqlite3.Connection) -> None:
        # First-seen rows for entries the ledger does not know yet (promoted or hand-written).
        rows = ledger.load_rows(c, [e.id for e in final.entries])
        fresh = [ledger.effective(e, None, now) for e in final.entries if e.id not in rows]
        ledger.save(c, fresh + reinforced + list(metas_after.values()))
        ledger.delete(c, [d for d in dropped if d not in metas_after])

    wal.commit_run(
        ws,
        conn,
        wal.RunSpec(run_id, kind, mode, now, trigger, counters=counters, changes=changes),
        writes,
        finish=finish,
    )
    if prep is not None and prep.plan.marked:
        sync_mirror(ws, prep.store, before=prep.stat, changed=prep.plan.marked)
    return Applied(
        run_id,
        source,
        after_text,
        changes,
        promoted,
        len(final.entries),
        prep.plan.outcome if prep is not None else None,
    )
