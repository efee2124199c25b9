"""A warm start for promotion: seed the recall store from what recurs across the daily notes.

A new user's store is empty, so nothing can pass the gates until searches have found each
fact several times. The notes already say what matters: a fact written down on several days
(in other words each time), and decisions and rules stated as such. :func:`plan` reads the
daily notes of the last ``days`` days, cuts them into chunks (as the search index does),
groups chunks of different days whose hashing vectors are close (cosine >= ``SAME_FACT``) and
seeds, for each group, its latest statement: one recall per day it was written on (at most
``MAX_RECALLS``), at a relevance of ``REPEAT_SCORE`` (more for more days). A chunk that
states a decision or a rule ("Decision:", "Rule:", "always", "never") is seeded once even on a
single day.

Seeds are recorded with origin ``backfill``: they count as recalls and relevance, never toward
the query-diversity gate (``userQueryHashes``), so real searches with distinct queries still
have to confirm an entry before it is promoted; they only need fewer repeats.

:func:`apply` is one journaled run (kind ``backfill``) whose changes list exactly what each key
received (recalls, score, the backfill query hash, whether the entry was new);
:func:`rollback` subtracts exactly that from the store as it is now (searches recorded since
are kept), and marks the run undone. Files that cannot be used are skipped and named: invalid
UTF-8 or NUL bytes, larger than ``MAX_NOTE_BYTES``, names that are not valid UTF-8.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from memcore.errors import InputError, Unreadable, WorkspaceError
from memcore.journal import runs, wal
from memcore.journal.runs import Change
from memcore.recall.entries import apply_hashed, entry_key, parse_hits, query_hash
from memcore.recall.store import fold_logged, read_store, stamped_bytes, sync_mirror
from memcore.search.chunks import chunk_markdown
from memcore.workspace import safe_read
from memcore.workspace.clock import iso_ms
from memcore.workspace.core import Workspace, daily_note_reason

SAME_FACT = 0.45  # hashing cosine from which two chunks of different days state one fact
MAX_NOTE_BYTES = 2 * 1024 * 1024
MIN_CHARS = 30  # shorter chunks ("- Lunch was soup.") are not facts worth seeding
MAX_RECALLS = 5  # recalls one group may seed, however often it was written
DEFAULT_DAYS = 30
# Relevance of a seeded recall: how sure it is that the notes state a durable fact. Written on
# two days: 0.85 (a true hit of a targeted search scores about that), more days a little more.
REPEAT_SCORE, REPEAT_STEP, REPEAT_MAX = 0.85, 0.05, 0.95
RULE_SCORE = 0.8
KIND = "backfill"
_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_RULE_RE = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?(?:decision|decided|rule|policy|convention)\b"
    r"|\b(?:always|never)\b",
    re.IGNORECASE,
)


@dataclass
class Seed:
    """One entry a backfill adds recalls to."""

    path: str
    start_line: int
    end_line: int
    snippet: str
    days: list[str]  # the days the fact was written on
    recalls: int
    score: float  # relevance of each seeded recall
    reason: str  # "repeated" or "rule"

    @property
    def key(self) -> str:
        return entry_key(self.path, self.start_line, self.end_line)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "snippet": self.snippet,
            "days": self.days,
            "recalls": self.recalls,
            "score": round(self.score, 6),
            "reason": self.reason,
        }


@dataclass
class BackfillPlan:
    """What a backfill would seed, and the files it could not use."""

    seeds: list[Seed] = field(default_factory=list)
    notes: int = 0  # daily notes read
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    applied_run: str | None = None  # an earlier backfill still applied
    run_id: str | None = None  # set by apply
    removed: dict[str, int] = field(default_factory=dict)  # set by rollback

    def to_json(self) -> dict[str, Any]:
        return {
            "notes": self.notes,
            "seeds": [s.to_json() for s in self.seeds],
            "recalls": sum(s.recalls for s in self.seeds),
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "appliedRun": self.applied_run,
            "runId": self.run_id,
        }


def _note_day(rel: str) -> date | None:
    m = _DATE_RE.search(rel.rsplit("/", 1)[-1])
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def daily_notes(
    ws: Workspace, now: datetime, days: int
) -> tuple[list[tuple[str, date, str]], list[tuple[str, str]]]:
    """(workspace-relative path, day, text) of the daily notes of the last ``days`` days, and
    the files skipped with their reason."""
    notes: list[tuple[str, date, str]] = []
    skipped: list[tuple[str, str]] = []
    if not ws.memory_dir.is_dir():
        return notes, skipped
    since = now.date() - timedelta(days=max(0, days - 1))
    for dirpath, dirnames, filenames in os.walk(ws.memory_dir):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.endswith(".md"):
                continue
            full = Path(dirpath) / name
            rel = full.relative_to(ws.root).as_posix()
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                skipped.append((shown, "file name is not valid UTF-8"))
                continue
            if daily_note_reason(rel) is not None:
                continue  # topic pages and other files are not daily notes
            day = _note_day(rel)
            if day is None:
                skipped.append((rel, "file name is not a real date"))
                continue
            if day < since or day > now.date():
                continue
            try:
                text = safe_read.decode_text(
                    rel, safe_read.read_bytes(ws, full, max_bytes=MAX_NOTE_BYTES)
                )
            except Unreadable as exc:
                skipped.append((rel, exc.reason))
                continue
            except (WorkspaceError, OSError) as exc:
                skipped.append((rel, str(exc).replace(str(full), rel)))
                continue
            notes.append((rel, day, text))
    return notes, skipped


def plan(ws: Workspace, now: datetime, days: int = DEFAULT_DAYS) -> BackfillPlan:
    """What :func:`apply` would seed (reads the notes and the journal; writes nothing)."""
    import numpy as np

    from memcore.search.embeddings.hashing import HashingEmbedder

    notes, skipped = daily_notes(ws, now, days)
    out = BackfillPlan(notes=len(notes), skipped=skipped, applied_run=_applied_run(ws))
    items: list[tuple[str, date, int, int, str]] = []
    for rel, day, text in notes:
        for ch in chunk_markdown(text):
            if len(ch.text) >= MIN_CHARS:
                items.append((rel, day, ch.start_line, ch.end_line, ch.text))
    if not items:
        return out
    emb = HashingEmbedder().fit([t for *_, t in items])
    vecs = emb.embed([t for *_, t in items])
    sims = vecs @ vecs.T
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    rows, cols = np.nonzero(np.triu(sims >= SAME_FACT, k=1))
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        if items[i][0] != items[j][0]:  # the same fact on another day, not a neighbour line
            parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(items)):
        groups.setdefault(find(i), []).append(i)
    for members in groups.values():
        day_set = sorted({items[i][1].isoformat() for i in members})
        latest = max(members, key=lambda i: (items[i][1], items[i][2]))
        rel, _, start, end, text = items[latest]
        if len(day_set) >= 2:
            score = min(REPEAT_MAX, REPEAT_SCORE + REPEAT_STEP * (len(day_set) - 2))
            recalls, reason = min(MAX_RECALLS, len(day_set)), "repeated"
        elif _RULE_RE.search(text):
            recalls, score, reason = 1, RULE_SCORE, "rule"
        else:
            continue
        out.seeds.append(Seed(rel, start, end, text, day_set, recalls, score, reason))
    out.seeds.sort(key=lambda s: (-s.recalls, s.path, s.start_line))
    return out


def _applied_run(ws: Workspace) -> str | None:
    """The latest backfill run still applied (read-only; None without a database)."""
    import sqlite3

    if not ws.db_path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute(
            "SELECT run_id FROM dream_runs WHERE kind = ? AND status = 'applied'"
            " ORDER BY started_at DESC, rowid DESC LIMIT 1",
            (KIND,),
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return str(row[0]) if row else None


def _connect(ws: Workspace) -> Any:
    from memcore.workspace import db

    conn = db.connect(ws.db_path)
    runs.ensure_schema(conn)
    return conn


def apply(
    ws: Workspace,
    now: datetime,
    days: int = DEFAULT_DAYS,
    *,
    lock_timeout: float | None = None,
    trigger: str = "command",
) -> BackfillPlan:
    """Seed the store as :func:`plan` says, as one journaled run. Refused (InputError) while
    an earlier backfill is still applied: roll it back first, so nothing counts twice."""
    with ws.lock(lock_timeout):
        p = plan(ws, now, days)
        if p.applied_run is not None:
            raise InputError(
                f"a backfill is already applied (run {p.applied_run}); roll it back first: "
                "memcore memory backfill --rollback"
            )
        if not p.seeds:
            return p
        fold_logged(ws, now)
        store = read_store(ws, now=now)
        before_stat = _stat(ws)
        now_iso = iso_ms(now)
        changes: list[Change] = []
        touched: list[str] = []
        for seed in p.seeds:
            qh = query_hash(f"backfill:{seed.snippet}")
            hits = parse_hits(
                ws,
                [
                    {
                        "path": seed.path,
                        "startLine": seed.start_line,
                        "endLine": seed.end_line,
                        "score": seed.score,
                        "snippet": seed.snippet,
                    }
                ],
            )
            if not hits:
                continue  # not recordable (e.g. a promoted line); nothing added
            created = hits[0].key not in store.entries
            had_hash = qh in (store.entries.get(hits[0].key) or {}).get("queryHashes", [])
            for _ in range(seed.recalls):
                apply_hashed(store.entries, qh, hits, now_iso, origin="backfill")
            touched.append(hits[0].key)
            changes.append(
                Change(
                    "backfill",
                    "recall",
                    hits[0].key,
                    reason=seed.reason,
                    after_meta={
                        "recalls": seed.recalls,
                        "score": round(hits[0].score * seed.recalls, 9),
                        "queryHash": qh,
                        "addedHash": not had_hash,
                        "created": created,
                    },
                )
            )
        if not changes:
            p.seeds = []
            return p
        run_id = runs.new_run_id(now)
        conn = _connect(ws)
        try:
            wal.commit_run(
                ws,
                conn,
                wal.RunSpec(
                    run_id,
                    KIND,
                    "apply",
                    now,
                    trigger,
                    counters={"seeded": len(changes), "recalls": sum(s.recalls for s in p.seeds)},
                    changes=changes,
                ),
                {ws.store_path: stamped_bytes(store, now)},
            )
        finally:
            conn.close()
        sync_mirror(ws, store, before=before_stat, changed=touched)
        p.run_id = run_id
        return p


def _stat(ws: Workspace) -> Any:
    from memcore.recall.mirror import file_stat

    return file_stat(ws)


def rollback(
    ws: Workspace,
    now: datetime,
    run_id: str | None = None,
    *,
    lock_timeout: float | None = None,
    trigger: str = "command",
) -> BackfillPlan:
    """Remove exactly what backfill run ``run_id`` (default: the latest still applied) added,
    from the store as it is now: each key loses the recalls, score and query hash the run gave
    it, and an entry the run created and nothing else recalled since goes. One journaled run
    (kind ``backfill-rollback``); the backfill run is marked undone."""
    with ws.lock(lock_timeout):
        conn = _connect(ws)
        try:
            rid = run_id or _applied_run(ws)
            row = runs.get_run(conn, rid) if rid else None
            if row is None or row["kind"] != KIND:
                raise InputError("no backfill run to roll back (memcore history lists runs)")
            if row["status"] != "applied":
                raise InputError(f"backfill run {rid} is {row['status']}, not applied")
            fold_logged(ws, now)
            store = read_store(ws, now=now)
            before_stat = _stat(ws)
            removed = {"recalls": 0, "entries": 0, "missing": 0}
            changed: list[str] = []
            gone: list[str] = []
            for ch in runs.changes_of(conn, str(rid)):
                meta = ch.after_meta or {}
                entry = store.entries.get(ch.entry_id)
                if entry is None:
                    removed["missing"] += 1  # evicted or removed since: nothing left to take
                    continue
                n = int(meta.get("recalls", 0))
                count = max(0, int(entry.get("recallCount") or 0) - n)
                removed["recalls"] += int(entry.get("recallCount") or 0) - count
                entry["recallCount"] = count
                entry["totalScore"] = max(
                    0.0, float(entry.get("totalScore") or 0.0) - float(meta.get("score", 0.0))
                )
                if meta.get("addedHash"):
                    entry["queryHashes"] = [
                        h for h in entry.get("queryHashes") or [] if h != meta.get("queryHash")
                    ]
                if count == 0 and not entry.get("promotedAt"):
                    del store.entries[ch.entry_id]
                    gone.append(ch.entry_id)
                    removed["entries"] += 1
                else:
                    changed.append(ch.entry_id)
            new_id = runs.new_run_id(now)

            def finish(c: Any) -> None:
                c.execute(
                    "UPDATE dream_runs SET status = 'undone', undone_by = ? WHERE run_id = ?",
                    (new_id, rid),
                )

            wal.commit_run(
                ws,
                conn,
                wal.RunSpec(
                    new_id,
                    f"{KIND}-rollback",
                    "apply",
                    now,
                    trigger,
                    counters=removed,
                    undo_of=str(rid),
                ),
                {ws.store_path: stamped_bytes(store, now)},
                finish=finish,
            )
        finally:
            conn.close()
        sync_mirror(ws, store, before=before_stat, changed=changed, removed=gone)
        out = BackfillPlan(run_id=new_id, removed=removed)
        return out


__all__ = ["BackfillPlan", "Seed", "apply", "daily_notes", "plan", "rollback"]
