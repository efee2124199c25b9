"""``memcore undo``: put a run's changes back, or refuse without changing anything.

Any run can be undone: promote, dream, review decisions, ``memory set``, restores, undos.
When a file is exactly what the run left, its bytes from before the run come back.
Otherwise each change is reversed on its own: rewritten entries must still hold the run's text,
removed entries come back after the entry that preceded them (or at the top of their
section), added entries go if unchanged. Any later edit in the way is a conflict: the undo is
refused, naming the entries. An empty "Promoted From Short-Term Memory" section the run
appended goes with its entries. Metadata is restored from the journal; the undo is a run too.

The recall keys a promote step marked get their previous ``promotedAt`` back (so they can be
promoted again), through the recall store's own read/write (its SQLite mirror follows), but
only where ``promotedAt`` is still what the run set: a later change is left alone and reported.

An eviction by the recall store's cap (kind ``evict``) is undone by putting the entries of its
sidecar back into the store (a key recorded again since keeps its live entry) and deleting the
sidecar; ``[dreaming] max_entries`` is raised to fit, or the next record would drop them again.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.dream import review, tables
from memcore.errors import InputError, UndoConflict
from memcore.journal import runs as journal
from memcore.journal import wal
from memcore.journal.runs import Change
from memcore.recall import ledger
from memcore.recall import mirror as recall_index
from memcore.recall.store import read_store, stamped_bytes, sync_mirror
from memcore.workspace.core import Workspace
from memcore.workspace.entries import Document, content_hash, insert_at, parse, render

#: Heading of the section ``memcore.promote`` appends (kept in step with promote.SECTION_PREFIX).
PROMOTED_SECTION = "## Promoted From Short-Term Memory"
_TOP_HEADING_RE = re.compile(r"#{1,2}\s")


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
    for c in restore:
        entry = store.entries[c.entry_id]
        previous = (c.before_meta or {}).get("promotedAt")
        if previous is None:
            entry.pop("promotedAt", None)
        else:
            entry["promotedAt"] = previous
    return store, stat, restore, kept


def _plan_evicted(
    ws: Workspace,
    images: dict[str, wal.FileImage],
    store: Any,
    stat: recall_index.Stat,
    now: datetime,
) -> tuple[Any, recall_index.Stat, list[str]]:
    """For an ``evict`` run: the store with the sidecar's entries put back where their key is
    absent, and those keys. The sidecar must be as the run wrote it (else the undo is refused
    by the file check; ``memory status --fix`` may have restored it already)."""
    from memcore.errors import StoreError
    from memcore.recall import evicted

    entries: dict[str, Any] = {}
    for rel, img in images.items():
        path = wal.abs_path(ws, rel)
        if path.name.startswith(evicted.PREFIX) and wal.sha1_of(wal.read_bytes(path)) == (
            img.after_sha1
        ):
            try:
                entries.update(evicted.load(path))
            except StoreError:
                continue
    if not entries:
        return store, stat, []
    if store is None:
        stat = recall_index.file_stat(ws)
        store = read_store(ws, now=now, normalize=False)
        if store.quarantined:
            stat = None
    back = [k for k in entries if k not in store.entries]
    for k in back:
        store.entries[k] = entries[k]
    return store, stat, back


def _raise_cap(ws: Workspace, size: int) -> int | None:
    """Raise ``[dreaming] max_entries`` to ``size`` when it is lower; the new cap or None."""
    from memcore.errors import ConfigError
    from memcore.workspace.config import dreaming_settings, load_config, set_value

    try:
        cap = dreaming_settings(load_config(ws)).max_entries
    except ConfigError:
        return None
    if size <= cap:
        return None
    set_value(ws, "dreaming", "max_entries", size)
    return size


def _entries_differing(after: str, current: str) -> list[str]:
    """Ids of entries that differ between the run's after-image and MEMORY.md now."""
    a = {e.id: e.raw.rstrip("\r\n") for e in parse(after).entries}
    b = {e.id: e.raw.rstrip("\r\n") for e in parse(current).entries}
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def _inverse(rid: str, changes: list[Change], back_keys: set[str]) -> list[Change]:
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
    return inverse


def _check_run(conn: Any, rid: str | None) -> Any:
    if rid is None:
        raise InputError("no run to undo (memcore history lists the runs)")
    row = journal.get_run(conn, rid)
    if row is None:
        raise InputError(
            f"no run {rid!r} in the journal; allowed: a run id that memcore history lists"
        )
    if row["status"] == "undone":
        raise InputError(f"run {rid} was already undone by {row['undone_by']}")
    if row["status"] == "rolled_back":
        raise InputError(f"run {rid} was interrupted and rolled back; there is nothing to undo")
    if row["status"] != "applied":
        raise InputError(f"run {rid} is {row['status']}; only applied runs can be undone")
    return row


def undo_run(
    ws: Workspace,
    run_id: str | None = None,
    *,
    now: datetime,
    lock_timeout: float = 10.0,
    trigger: str = "command",
) -> dict[str, Any]:
    """Undo ``run_id`` (default: the latest applied run) as a write-ahead run of its own.

    Per file, a three-way check: a file that is exactly what the run left gets its bytes
    from before the run back; MEMORY.md edited since has the run's entry changes reversed
    one by one (refused, naming the entries, when an edit is in the way); the recall store has
    each ``promotedAt`` the run set put back where it is still the run's; the archive loses
    the run's blocks; any other file edited since refuses the undo. Undoing an undo (a redo)
    and undoing a restore need every file unchanged since."""
    with ws.lock(lock_timeout), tables.connect(ws) as conn:
        rid = run_id or journal.latest_undoable(conn)
        row = _check_run(conn, rid)
        assert rid is not None
        if str(row["kind"]).startswith("backfill"):
            raise InputError(
                f"run {rid} is a backfill; it is undone with: memcore memory backfill --rollback"
            )
        changes = journal.changes_of(conn, rid)
        images = {img.path: img for img in wal.file_images(conn, rid)}
        legacy = not images and row["before_text"] is not None
        whole = row["kind"] in ("undo", "restore")
        writes: dict[Path, bytes | None] = {}
        exact: list[bool] = []
        problems: list[str] = []
        source = ledger.read_memory(ws)
        mem = images.pop(wal.MEMORY_MD, None)
        before = wal.memory_before(conn, rid)
        if mem is not None and _restorable(conn, ws.memory_md, mem):
            writes[ws.memory_md] = wal.get_blob(conn, mem.before_sha1)
            exact.append(True)
        elif legacy and content_hash(source) == row["after_sha1"] and before is not None:
            writes[ws.memory_md] = before.encode("utf-8")
            exact.append(True)
        elif mem is not None or legacy:
            exact.append(False)
            after_image = wal.image_text(conn, mem.after_sha1) if mem is not None else None
            if whole:
                names = _entries_differing(after_image or "", source)
                problems.append(
                    "MEMORY.md was edited after the run ("
                    + (", ".join(names[:5]) or "text outside entries")
                    + ")"
                )
            elif _counters(row).get("format") == "hermes":
                writes[ws.memory_md] = _without_hermes_entries(rid, source, changes)
            else:
                try:
                    writes[ws.memory_md] = reverse_text(source, changes, before).encode("utf-8")
                except UndoConflict as exc:
                    raise UndoConflict(str(exc)) from None
        archive_rel = wal.rel_path(ws, ws.archive_path)
        arc = images.pop(archive_rel, None)
        if arc is not None and _restorable(conn, ws.archive_path, arc):
            writes[ws.archive_path] = wal.get_blob(conn, arc.before_sha1)
        else:
            trimmed = journal.archive_without(ws, rid)
            if trimmed is not None:
                writes[ws.archive_path] = trimmed.encode("utf-8")
        store_rel = wal.rel_path(ws, ws.store_path)
        st = images.pop(store_rel, None)
        marks = [c for c in changes if c.action == "recall"]
        store: Any = None
        stat: recall_index.Stat = None
        exact_store = st is not None and _restorable(conn, ws.store_path, st)
        if st is not None and exact_store:
            writes[ws.store_path] = wal.get_blob(conn, st.before_sha1)
            recall_back: list[Change] = marks
            recall_kept: list[dict[str, Any]] = []
            stat = recall_index.file_stat(ws)
        else:
            store, stat, recall_back, recall_kept = _plan_recall(ws, marks, now)
            if recall_back:
                writes[ws.store_path] = stamped_bytes(store, now)
        evicted_back: list[str] = []
        if row["kind"] == "evict":
            store, stat, evicted_back = _plan_evicted(ws, images, store, stat, now)
            if evicted_back:
                writes[ws.store_path] = stamped_bytes(store, now)
        for rel, img in images.items():
            path = wal.abs_path(ws, rel)
            if _restorable(conn, path, img):
                writes[path] = wal.get_blob(conn, img.before_sha1)
                exact.append(True)
            else:
                problems.append(f"{rel} was changed after the run")
        if problems:
            raise UndoConflict(
                f"cannot undo run {rid}: " + "; ".join(problems) + ". Nothing was changed."
            )
        back_keys = {c.entry_id for c in recall_back}
        undo_id = journal.new_run_id(now)
        restored = sum(1 for c in changes if c.action == "remove")
        counters = {
            "restored": restored,
            "changes": len(changes),
            "recallRestored": len(recall_back),
            "recallKept": len(recall_kept),
            "evictedRestored": len(evicted_back),
        }

        def finish(c: Any) -> None:
            for ch in reversed(changes):
                if ch.action == "recall":
                    continue  # recall-store state, restored in the file
                if ch.action == "add":
                    ledger.restore(c, ch.entry_id, None)
                elif ch.before_meta is not None:
                    ledger.restore(c, ch.entry_id, ch.before_meta)
            c.execute(
                "UPDATE dream_runs SET status = 'undone', undone_by = ? WHERE run_id = ?",
                (undo_id, rid),
            )
            if row["kind"] == "review":  # the decision is undone: the item waits again
                review.reopen(c, _counters(row))
            if row["kind"] == "undo" and row["undo_of"]:
                c.execute(
                    "UPDATE dream_runs SET status = 'applied', undone_by = NULL WHERE run_id = ?",
                    (row["undo_of"],),
                )

        written = wal.commit_run(
            ws,
            conn,
            wal.RunSpec(
                undo_id,
                "undo",
                "undo",
                now,
                trigger,
                counters=counters,
                changes=_inverse(rid, changes, back_keys),
                undo_of=rid,
            ),
            writes,
            finish=finish,
        )
        dirs_removed: list[str] = []
        if row["kind"] == "export":  # the folders it made for the files it created
            from memcore.dream.exports import remove_created_dirs

            made = _counters(row).get("createdDirs")
            dirs_removed = remove_created_dirs(made if isinstance(made, list) else [])
        if exact_store:
            store = read_store(ws, now=now, normalize=False)
        if store is not None and (recall_back or exact_store or evicted_back):
            sync_mirror(ws, store, before=stat, changed=sorted(back_keys | set(evicted_back)))
        cap_raised = _raise_cap(ws, len(store.entries)) if evicted_back else None
    return {
        "runId": rid,
        "undoRunId": undo_id,
        "restored": restored,
        "changes": len(changes),
        "exact": bool(exact) and all(exact),
        "files": written,
        "recallRestored": [c.entry_id for c in recall_back],
        "recallKept": recall_kept,
        "evictedRestored": evicted_back,
        "capRaisedTo": cap_raised,
        "dirsRemoved": dirs_removed,
        "warnings": [f"recall entry {k['key']} stays as it is: {k['reason']}" for k in recall_kept],
    }


def _without_hermes_entries(rid: str, source: str, changes: list[Change]) -> bytes:
    """A Hermes MEMORY.md edited since run ``rid``: the § entries the run added taken out,
    the rest as it is now; UndoConflict when one of them was edited or removed since."""
    from memcore.workspace.layouts import hermes

    added = [c.after_raw or "" for c in changes if c.action == "add"]
    text = hermes.without_entries(source, added)
    if text is None:
        raise UndoConflict(
            f"cannot undo run {rid}: an entry it added to the Hermes MEMORY.md was edited or "
            "removed since. Nothing was changed."
        )
    return text.encode("utf-8")


def _counters(row: Any) -> dict[str, Any]:
    """A run's counters (empty when they are not a JSON object)."""
    import json

    try:
        value = json.loads(row["counters"] or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _restorable(conn: Any, path: Path, img: wal.FileImage) -> bool:
    """The file is exactly what the run left and its preimage is still kept."""
    return wal.sha1_of(wal.read_bytes(path)) == img.after_sha1 and wal.has_blob(
        conn, img.before_sha1
    )
