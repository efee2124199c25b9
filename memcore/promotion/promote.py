"""Promotion of recalled daily-note snippets into MEMORY.md.

Preview ranks the recall store and writes nothing. Apply, under the workspace lock, re-ranks the
live store (so no hand-built candidate bypasses a gate), re-locates each snippet in its current
daily note, appends one dated section to MEMORY.md (each bullet behind a marker naming its
recall key) and marks the store entries ``promotedAt``: both files in one write-ahead run
(:mod:`memcore.journal.wal`), so they are committed together or not at all and the run can
be undone. A key already marked in MEMORY.md is reconciled, never appended twice; a candidate
that MEMORY.md already states (:func:`memcore.promotion.dedupe.already_stated`) reinforces that
entry instead; MEMORY.md's size budget (``[memory] budget_chars``) holds.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.errors import AmbiguousSelector, InputError, StoreCorrupt, WorkspaceError
from memcore.journal import runs, wal
from memcore.journal.runs import Change
from memcore.promotion.budget import budget_chars, over_budget_error
from memcore.promotion.dedupe import StatedIndex
from memcore.recall import ledger
from memcore.recall import mirror as recall_index
from memcore.recall.entries import is_promoted, normalize_snippet, workspace_rel
from memcore.recall.ledger import Meta
from memcore.recall.scoring import Candidate, Thresholds, gate_checks, rank
from memcore.recall.store import (
    Store,
    fold_logged,
    fresh_mirror,
    read_store,
    read_view,
    stamped_bytes,
    sync_mirror,
)
from memcore.redact import redact
from memcore.workspace import db, safe_read
from memcore.workspace.clock import iso_ms, utcnow
from memcore.workspace.config import DreamingSettings, dreaming_settings, load_config
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from memcore.workspace.markdown import format_marker, marked_recall_keys, promoted_entry_id
from memcore.workspace.openclaw_md import (
    CONSOLIDATED_HEADING,
    comparable,
    consolidated_bullet,
    unmarked_promotions,
)
from memcore.workspace.provenance import range_reason, snippet_reason

SECTION_PREFIX = "## Promoted From Short-Term Memory"
_LIST_MARK_RE = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
TITLE = "# Long-Term Memory"
MAX_LISTED = 10  # keys an ambiguous explain selector lists


@dataclass
class PromoteResult:
    """What a preview or an apply found and did."""

    ws: Workspace
    thresholds: Thresholds
    limit: int | None
    candidates: list[Candidate]
    exclusions: dict[str, Any] = field(default_factory=dict)
    apply: dict[str, Any] | None = None
    store_entries: int = 0
    store_promoted: int = 0
    store_invalid: int = 0
    quarantined: str | None = None
    store_error: str | None = None  # a preview found the store corrupt and left it
    nearest: list[dict[str, Any]] = field(default_factory=list)  # closest to the gates

    def to_json(self) -> dict[str, Any]:
        th = self.thresholds
        return {
            "workspaceDir": str(self.ws.root),
            "storePath": str(self.ws.store_path),
            "lockPath": str(self.ws.lock_path),
            "thresholds": {
                "limit": self.limit,
                "minScore": th.min_score,
                "minRecallCount": th.min_recall_count,
                "minUniqueQueries": th.min_unique_queries,
                "minRelevance": th.min_relevance,
                "recencyHalfLifeDays": th.half_life_days,
            },
            "storeHealth": {
                "entries": self.store_entries,
                "promoted": self.store_promoted,
                "invalid": self.store_invalid,
                "quarantined": self.quarantined,
                "error": self.store_error,
            },
            "exclusions": self.exclusions,
            "candidates": [c.to_json() for c in self.candidates],
            "nearest": self.nearest,
            "apply": self.apply,
        }


def resolve_thresholds(
    settings: DreamingSettings,
    *,
    min_score: float | None = None,
    min_recall_count: int | None = None,
    min_unique_queries: int | None = None,
) -> Thresholds:
    """Flag, else config, else the mode's preset (core's when the mode is off)."""
    return Thresholds.from_settings(
        settings,
        min_score=min_score,
        min_recall_count=min_recall_count,
        min_unique_queries=min_unique_queries,
    ).sanitized()


def _resolve(
    ws: Workspace,
    settings: DreamingSettings | None,
    limit: int | None,
    min_score: float | None,
    min_recall_count: int | None,
    min_unique_queries: int | None,
    *,
    mode_limit: bool = True,
) -> tuple[DreamingSettings, Thresholds, int | None]:
    """Settings, thresholds and limit of one run: flags over config over the mode's preset.

    Without ``--limit`` an apply (and a scheduled run) takes the mode's ``limit``; a preview
    (``mode_limit=False``) lists every qualifying candidate, as OpenClaw's CLI does."""
    settings = settings or dreaming_settings(load_config(ws))
    th = resolve_thresholds(
        settings,
        min_score=min_score,
        min_recall_count=min_recall_count,
        min_unique_queries=min_unique_queries,
    )
    if limit is not None:
        return settings, th, limit
    return settings, th, settings.limit if mode_limit else None


def preview(
    ws: Workspace,
    *,
    now: datetime | None = None,
    limit: int | None = None,
    min_score: float | None = None,
    min_recall_count: int | None = None,
    min_unique_queries: int | None = None,
    include_promoted: bool = False,
    settings: DreamingSettings | None = None,
    mode_limit: bool = False,
) -> PromoteResult:
    """Rank the store with the resolved thresholds; write nothing (no file of the user's is
    moved, created or changed: a corrupt store is reported in ``store_error``).

    Without ``limit`` every qualifying candidate is listed; ``mode_limit`` caps the list at
    the mode's ``limit`` instead (what an apply or a scheduled run would take)."""
    now = now or utcnow()
    settings, th, lim = _resolve(
        ws, settings, limit, min_score, min_recall_count, min_unique_queries, mode_limit=mode_limit
    )
    try:
        conn = fresh_mirror(ws, now, read_only=True)
    except StoreCorrupt as exc:
        return PromoteResult(ws=ws, thresholds=th, limit=lim, candidates=[], store_error=str(exc))
    from memcore.recall.columns import rank_mirror  # numpy: only where ranking happens

    try:
        ranking = rank_mirror(
            conn, now, th, limit=lim, include_promoted=include_promoted, nearest=3
        )
    finally:
        conn.close()
    excl = ranking.exclusions
    by_reason = {k: v for k, v in excl.items() if k != "total" and v}
    considered = excl["total"] - excl["promoted"]
    return PromoteResult(
        nearest=ranking.nearest,
        ws=ws,
        thresholds=th,
        limit=lim,
        candidates=ranking.candidates,
        exclusions={
            "considered": considered,
            "excluded": sum(v for k, v in by_reason.items() if k != "promoted"),
            "byReason": by_reason,
        },
        store_entries=ranking.exclusions["total"],  # the counts of the same scan
        store_promoted=ranking.promoted,
    )


@dataclass
class _Said:
    """Something MEMORY.md says (an entry, or a candidate accepted earlier in the batch)."""

    text: str
    entry_id: str
    new: bool  # added by this batch


@dataclass
class PromotionPlan:
    """What one promotion does, computed before anything is written (a run writes it)."""

    text: str  # MEMORY.md after
    outcome: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    marked: list[str] = field(default_factory=list)  # recall keys given promotedAt
    reinforced: list[Meta] = field(default_factory=list)  # ledger rows after reinforcement

    @property
    def promoted(self) -> int:
        return int(self.outcome.get("applied", 0))


@dataclass
class Prepared:
    """A promotion planned under the lock: the result, the plan and the store it changes."""

    result: PromoteResult
    plan: PromotionPlan
    store: Store
    stat: recall_index.Stat


def prepare(
    ws: Workspace,
    conn: sqlite3.Connection,
    *,
    now: datetime,
    text: str,
    limit: int | None = None,
    min_score: float | None = None,
    min_recall_count: int | None = None,
    min_unique_queries: int | None = None,
    keys: list[str] | None = None,
    settings: DreamingSettings | None = None,
    over_budget: str = "error",
) -> Prepared:
    """Rank the live store and plan the promotion onto ``text`` (lock held; nothing written).

    ``over_budget`` is what happens when MEMORY.md is already over ``[memory] budget_chars``:
    ``error`` (InputError) or ``hold`` (every candidate held back, with a warning)."""
    settings, th, lim = _resolve(
        ws, settings, limit, min_score, min_recall_count, min_unique_queries
    )
    fold_logged(ws, now)  # recalls recorded while the lock was busy count too
    stat = recall_index.file_stat(ws)
    store = read_store(ws, now=now)
    if store.quarantined:
        stat = None
    ranked = rank(store.entries.values(), now, th)
    if keys is not None:
        wanted = set(keys)
        ranked = [c for c in ranked if c.key in wanted]
    selected = ranked[: max(0, lim)] if lim is not None else ranked
    result = PromoteResult(
        ws=ws,
        thresholds=th,
        limit=lim,
        candidates=selected,
        store_entries=len(store.entries),
        store_invalid=store.invalid,
        quarantined=str(store.quarantined) if store.quarantined else None,
    )
    plan = plan_promotion(
        ws, conn, store, selected, text, now, settings, budget_chars(ws), over_budget
    )
    result.apply = plan.outcome
    result.store_promoted = sum(1 for e in store.entries.values() if is_promoted(e))
    return Prepared(result, plan, store, stat)


def connect(ws: Workspace) -> sqlite3.Connection:
    """The workspace database with the ledger and journal tables (caller closes it)."""
    conn = db.connect(ws.db_path)
    ledger.ensure_schema(conn)
    runs.ensure_schema(conn)
    return conn


def apply(
    ws: Workspace,
    *,
    now: datetime | None = None,
    limit: int | None = None,
    min_score: float | None = None,
    min_recall_count: int | None = None,
    min_unique_queries: int | None = None,
    keys: list[str] | None = None,
    settings: DreamingSettings | None = None,
    lock_timeout: float | None = None,
    trigger: str = "command",
) -> PromoteResult:
    """Promote the live candidates into MEMORY.md as one journaled, undoable run (see the
    module docstring). ``keys`` restricts the run to those recall keys; they must still pass
    every gate. MEMORY.md and the recall store are committed together or not at all."""
    now = now or utcnow()
    with ws.lock(lock_timeout):
        text = _read_memory_md(ws)
        conn = connect(ws)
        try:
            prep = prepare(
                ws,
                conn,
                now=now,
                text=text,
                limit=limit,
                min_score=min_score,
                min_recall_count=min_recall_count,
                min_unique_queries=min_unique_queries,
                keys=keys,
                settings=settings,
            )
            plan = prep.plan
            if plan.changes:
                run_id = runs.new_run_id(now)
                writes: dict[Path, bytes | None] = {}
                if plan.text != text:
                    writes[ws.memory_md] = plan.text.encode("utf-8")
                if plan.marked:
                    writes[ws.store_path] = stamped_bytes(prep.store, now)
                saved = plan.reinforced
                wal.commit_run(
                    ws,
                    conn,
                    wal.RunSpec(
                        run_id,
                        "promote",
                        "apply",
                        now,
                        trigger,
                        counters=promote_counters(plan),
                        changes=plan.changes,
                    ),
                    writes,
                    finish=lambda c: ledger.save(c, saved),
                )
                if plan.marked:
                    sync_mirror(ws, prep.store, before=prep.stat, changed=plan.marked)
                plan.outcome["runId"] = run_id
        finally:
            conn.close()
    return prep.result


def promote_counters(plan: PromotionPlan) -> dict[str, Any]:
    o = plan.outcome
    out = {
        "promoted": o["applied"],
        "appended": o["appended"],
        "reinforced": len(o["reinforcedExisting"]),
        "heldBack": len(o["heldBack"]),
    }
    if o.get("format"):
        out["format"] = o["format"]  # how undo reverses the entries after later edits
    return out


def _read_memory_md(ws: Workspace) -> str:
    path = ws.memory_md
    if path.is_dir():
        raise WorkspaceError(f"{path} is a directory; MEMORY.md must be a file")
    if not path.exists():
        return ""
    return safe_read.read_text(ws, path, max_bytes=safe_read.MEMORY_MD_MAX_BYTES)


def plan_promotion(
    ws: Workspace,
    conn: sqlite3.Connection,
    store: Store,
    selected: list[Candidate],
    text: str,
    now: datetime,
    settings: DreamingSettings,
    budget: int,
    over_budget: str = "error",
) -> PromotionPlan:
    """Plan promoting ``selected`` (best first) onto MEMORY.md's ``text``; marks the store
    entries in memory (``store`` is written by the caller's run, never here).

    A key already marked in MEMORY.md is reconciled; a candidate that states what an entry
    already states reinforces it (ledger access count and importance) instead of adding a
    copy, and two candidates of the batch that say the same are promoted once; candidates
    that would take MEMORY.md past ``budget`` characters are held back."""
    outcome: dict[str, Any] = {
        "applied": 0,
        "appended": 0,
        "reconciledExisting": 0,
        "reinforcedExisting": [],
        "heldBack": [],
        "skipped": [],
        "memoryPath": str(ws.memory_md),
        "appliedCandidates": [],
        "budgetChars": budget,
    }
    plan = PromotionPlan(text, outcome)
    if not selected:
        return plan
    style = promotion_style(ws)
    if len(text) > budget and over_budget == "error":
        raise over_budget_error(len(text), budget)
    if style == "hermes":
        return _plan_hermes(ws, plan, store, selected, now, budget)
    already = marked_recall_keys(text)
    unmarked = unmarked_promotions(text)
    doc = parse(text)
    said: StatedIndex[_Said] = StatedIndex([_Said(e.text, e.id, False) for e in doc.entries])
    to_append: list[Candidate] = []
    reconciled: list[Candidate] = []
    reinforce: dict[str, list[Candidate]] = {}
    for c in selected:
        if c.key in already or _written_unmarked(unmarked, c):
            reconciled.append(c)
            continue
        reason = _relocate(ws, c)
        if reason:
            outcome["skipped"].append({"key": c.key, "path": c.path, "reason": reason})
            continue
        if _written_unmarked(unmarked, c):  # its relocated text is there
            reconciled.append(c)
            continue
        hit = already_stated_in(said, c.snippet)
        if hit is not None:
            reinforce.setdefault(hit.entry_id, []).append(c)
            continue
        trial = text + render_section(text, [*to_append, c], now, settings, style)
        if len(trial) > budget:
            outcome["heldBack"].append(
                {
                    "key": c.key,
                    "score": round(c.score, 6),
                    "snippet": c.snippet,
                    "reason": f"MEMORY.md would pass [memory] budget_chars = {budget}",
                }
            )
            continue
        to_append.append(c)
        said.add(_Said(c.snippet, promoted_entry_id(c.key), True))
    if to_append:
        plan.text = text + render_section(text, to_append, now, settings, style)
        old_ids = {e.id for e in doc.entries}
        for e in parse(plan.text).entries:
            if e.id not in old_ids:
                plan.changes.append(
                    Change(
                        "promote", "add", e.id, "promoted from short-term recall", after_raw=e.raw
                    )
                )
    existing = [eid for eid, cands in reinforce.items() if not _is_new(said, eid)]
    metas = ledger.metas_for(conn, doc, now) if existing else {}
    now_iso = iso_ms(now)
    for eid, cands in reinforce.items():
        keys = [c.key for c in cands]
        outcome["reinforcedExisting"].append({"id": eid, "keys": keys})
        if eid not in metas:
            continue  # a candidate of this batch: the copy is simply not added
        before = metas[eid]
        after = replace(
            before,
            access_count=before.access_count + len(cands),
            importance=min(1.0, round(before.importance + 0.05 * len(cands), 6)),
            last_accessed_at=now_iso,
        )
        plan.reinforced.append(after)
        plan.changes.append(
            Change(
                "promote",
                "meta",
                eid,
                "already stated; reinforced by " + ", ".join(keys),
                before_meta=before.to_json(),
                after_meta=after.to_json(),
            )
        )
    marked = to_append + reconciled + [c for cands in reinforce.values() for c in cands]
    _mark(plan, store, marked, now_iso)
    outcome["appended"] = len(to_append)
    outcome["reconciledExisting"] = len(reconciled)
    outcome["applied"] = len(marked)
    outcome["appliedCandidates"] = [c.to_json() for c in marked]
    return plan


def _mark(plan: PromotionPlan, store: Store, marked: list[Candidate], now_iso: str) -> None:
    """Give the promoted keys ``promotedAt`` in the store (in memory), journaled as changes."""
    for c in marked:
        entry = store.entries.get(c.key)
        if entry is None:
            continue
        previous = entry.get("promotedAt")
        entry["promotedAt"] = now_iso
        entry["startLine"], entry["endLine"], entry["snippet"] = c.start_line, c.end_line, c.snippet
        plan.marked.append(c.key)
        plan.changes.append(
            Change(
                "promote",
                "recall",
                c.key,
                "marked promoted in the recall store",
                before_meta={"promotedAt": previous},
                after_meta={"promotedAt": now_iso},
            )
        )


def _plan_hermes(
    ws: Workspace,
    plan: PromotionPlan,
    store: Store,
    selected: list[Candidate],
    now: datetime,
    budget: int,
) -> PromotionPlan:
    """Promotion into a Hermes MEMORY.md: each candidate one ``§`` entry (its snippet, on one
    line, no marker: Hermes shows the file to its model as it is). A candidate whose entry
    would take the file past Hermes' limit (or ``budget``) is held back and named, never cut;
    one the file already holds is only marked promoted. Journaled with ``format: hermes``, so
    an undo after later edits takes out exactly these entries."""
    from memcore.workspace.layouts import hermes

    outcome = plan.outcome
    outcome["format"] = "hermes"
    limit = min(hermes.limit_of(ws.memory_md) or budget, budget)
    text = plan.text
    held = set(hermes.split_entries(text))
    added: list[Candidate] = []
    reconciled: list[Candidate] = []
    for c in selected:
        reason = _relocate(ws, c)
        if reason:
            outcome["skipped"].append({"key": c.key, "path": c.path, "reason": reason})
            continue
        entry = hermes.entry_text(_LIST_MARK_RE.sub("", redact(c.snippet), count=1))
        if not entry or entry in held:
            reconciled.append(c)
            continue
        trial = hermes.appended(text, entry)
        if len(trial) > limit:
            outcome["heldBack"].append(
                {
                    "key": c.key,
                    "score": round(c.score, 6),
                    "snippet": c.snippet,
                    "reason": (
                        f"{ws.memory_md} would be {len(trial)} characters; allowed: at most "
                        f"{limit} (Hermes' limit for MEMORY.md, or [memory] budget_chars)"
                    ),
                }
            )
            continue
        text = trial
        held.add(entry)
        added.append(c)
        plan.changes.append(
            Change(
                "promote",
                "add",
                promoted_entry_id(c.key),
                "promoted from short-term recall (a Hermes § entry)",
                after_raw=entry,
            )
        )
    plan.text = text
    marked = added + reconciled
    _mark(plan, store, marked, iso_ms(now))
    outcome["appended"] = len(added)
    outcome["reconciledExisting"] = len(reconciled)
    outcome["applied"] = len(marked)
    outcome["appliedCandidates"] = [c.to_json() for c in marked]
    return plan


def _written_unmarked(unmarked: set[tuple[str, str]], c: Candidate) -> bool:
    """True when OpenClaw already wrote this candidate without a marker: the same snippet
    from the same daily note under one of its promotion headings."""
    return bool(unmarked) and (c.path, comparable(redact(c.snippet))) in unmarked


def already_stated_in(index: StatedIndex[_Said], text: str) -> _Said | None:
    return index.find(text)


def _is_new(index: StatedIndex[_Said], entry_id: str) -> bool:
    return any(s.entry_id == entry_id and s.new for s in index.entries)


def bullet_text(c: Candidate) -> str:
    """``- <snippet> [score=0.812 recalls=4 avg=0.903 source=memory/2026-04-01.md:10-12]``."""
    snippet = _LIST_MARK_RE.sub("", redact(c.snippet), count=1) or "(no snippet captured)"
    return (
        f"- {snippet} [score={c.score:.3f} recalls={c.recall_count} avg={c.avg_score:.3f} "
        f"source={c.path}:{c.start_line}-{c.end_line}]"
    )


def promotion_style(ws: Workspace) -> str:
    """``openclaw`` (OpenClaw's newest format) in an OpenClaw workspace, ``hermes`` (one
    ``§`` entry per promotion, within Hermes' limit) in a Hermes one, else ``memcore``."""
    from memcore.workspace.kinds import kind_of

    name = kind_of(ws.root).name
    return name if name in ("openclaw", "hermes") else "memcore"


def render_section(
    existing: str,
    cands: list[Candidate],
    now: datetime,
    settings: DreamingSettings,
    style: str = "memcore",
) -> str:
    """The text appended to ``existing``: title if empty, newline fix, the dated section.

    ``style`` ``openclaw`` writes OpenClaw's newest format (``## Consolidated Memory (date)``,
    a promotion marker per entry, ``Source:`` and trigger/importance annotations), so an
    OpenClaw gateway recognises the entries and never promotes them again."""
    prefix = ""
    if not existing.strip():
        prefix = TITLE + "\n\n"
    elif not existing.endswith("\n"):
        prefix = "\n"
    day = now.astimezone(settings.tz).date().isoformat()
    if style == "openclaw":
        lines = ["", f"{CONSOLIDATED_HEADING} ({day})", ""]
        for c in cands:
            snippet = _LIST_MARK_RE.sub("", redact(c.snippet), count=1)
            lines.extend(
                consolidated_bullet(c.key, snippet, c.path, c.start_line, c.end_line, c.score)
            )
        lines.append("")
        return prefix + "\n".join(lines)
    lines = ["", f"{SECTION_PREFIX} ({day})", ""]
    for c in cands:
        lines.append(
            format_marker(
                {
                    "id": promoted_entry_id(c.key),
                    "key": c.key,
                }
            )
        )
        lines.append(bullet_text(c))
    lines.append("")
    return prefix + "\n".join(lines)


# -- relocation -------------------------------------------------------------------------

_OWN_OUTPUT_MARKERS = (
    "<!-- memcore:entry",
    "<!-- openclaw-memory-promotion:",
    "<!-- openclaw-memory-lineage:",
    SECTION_PREFIX,
    CONSOLIDATED_HEADING,
)


def _looks_like_own_output(snippet: str) -> bool:
    if any(m in snippet for m in _OWN_OUTPUT_MARKERS):
        return True
    return "[score=" in snippet and "recalls=" in snippet and "source=" in snippet


def _relocate(ws: Workspace, c: Candidate) -> str | None:
    """Find the candidate's snippet in its daily note now; update its range. Returns a skip
    reason, or None when found."""
    if _looks_like_own_output(c.snippet):
        return "snippet is memcore's own promotion output, not a memory"
    why = snippet_reason(c.snippet)
    if why is not None:
        return f"snippet is {why}, not the user's knowledge"
    path = _source_file(ws, c.path)
    if path is None:
        return f"source file {c.path} no longer exists"
    try:
        text = safe_read.read_text(ws, path)
    except WorkspaceError as exc:
        return str(exc)
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    lines = [ln.rstrip("\r") for ln in lines]
    found = locate(lines, c.snippet, c.start_line, c.end_line)
    if found is None and "[REDACTED:" in c.snippet:  # recorded redacted: compare redacted
        found = locate(lines, c.snippet, c.start_line, c.end_line, transform=redact)
    if found is None:
        if not c.snippet:
            return "no snippet was captured and the stored lines are empty"
        return f"snippet no longer found in {c.path} (edited or removed)"
    start, end, snippet = found
    if range_reason(text, start, end) is not None:
        return "text inside an OpenClaw dreaming block or recalled context"
    c.start_line, c.end_line, c.snippet = start, end, redact(snippet)
    return None


def _source_file(ws: Workspace, rel: str) -> Path | None:
    """The daily note ``rel`` names, only when it lies inside the workspace (a path from a
    store another tool wrote may point anywhere)."""
    try:
        rel = workspace_rel(ws, rel)
    except InputError:
        return None
    candidates = [ws.root / rel]
    if not rel.startswith("memory/"):
        candidates.append(ws.memory_dir / Path(rel).name)
    for p in candidates:
        if p.is_file():
            return p
    return None


def locate(
    lines: list[str],
    snippet: str,
    start: int,
    end: int,
    transform: Callable[[str], str] | None = None,
) -> tuple[int, int, str] | None:
    """Best window of ``lines`` for ``snippet``: exact > contains > contained, then nearest to
    the stored start, then the closest span. Returns (start, end, normalised text) or None.
    ``transform`` (redaction) is applied to each window before it is compared."""
    tf: Callable[[str], str] = transform or (lambda x: x)
    n = len(lines)
    tokens = [ln.split() for ln in lines]
    if not snippet:
        window = " ".join(t for row in tokens[start - 1 : end] for t in row)
        return (start, end, window) if window else None
    if 1 <= start <= end <= n:
        window = " ".join(t for row in tokens[start - 1 : end] for t in row)
        if tf(window) == snippet:
            return start, end, window
    truncated = snippet.endswith("…")
    core = snippet[:-1].rstrip() if truncated else snippet
    span = max(1, end - start + 1)
    max_span = min(n, max(span + 3, 8))
    best: tuple[int, int, int, int, int] | None = None  # (-quality, dist, spandiff, s, e)
    for s in range(n):
        if not tokens[s]:
            continue
        parts: list[str] = []
        for e in range(s, min(n, s + max_span)):
            parts.extend(tokens[e])
            if not parts or not tokens[e]:
                continue
            window = tf(" ".join(parts))
            if window == snippet or (truncated and window.startswith(core)):
                q = 3
            elif core in window:
                q = 2
            elif window in core and len(window) * 2 >= len(core):
                q = 1
            else:
                if len(window) > len(core) + 200:
                    break
                continue
            key = (-q, abs(s + 1 - start), abs((e - s + 1) - span), s + 1, e + 1)
            if best is None or key < best:
                best = key
    if best is None:
        return None
    s1, e1 = best[3], best[4]
    text = normalize_snippet(" ".join(t for row in tokens[s1 - 1 : e1] for t in row))
    return s1, e1, text


# -- explain ----------------------------------------------------------------------------


def explain(
    ws: Workspace,
    selector: str,
    *,
    now: datetime | None = None,
    settings: DreamingSettings | None = None,
) -> dict[str, Any]:
    """One entry's components, score and every gate with pass/fail and margin.

    The selector matches a key exactly or by substring, or a path or snippet (case-insensitive).
    AmbiguousSelector (listing the keys) when it matches several entries and none exactly.
    """
    now = now or utcnow()
    settings = settings or dreaming_settings(load_config(ws))
    th = resolve_thresholds(settings)
    store = read_view(ws, now)
    zero = Thresholds(0.0, 0, 0, th.half_life_days, th.weights)
    everything = rank(store.entries.values(), now, zero, include_promoted=True)
    sel = selector.strip().lower()
    match = next((c for c in everything if c.key.lower() == sel), None)
    if match is None:
        found = [
            c
            for c in everything
            if sel in c.key.lower() or sel in c.path.lower() or sel in c.snippet.lower()
        ]
        if not found:
            raise InputError(f'No promotion candidate matched "{selector}".')
        if len(found) > 1:
            listed = [f"{c.key}  {c.snippet[:60]}" for c in found[:MAX_LISTED]]
            more = len(found) - len(listed)
            raise AmbiguousSelector(
                f'"{selector}" matches {len(found)} entries; give one of these keys:\n  '
                + "\n  ".join(listed)
                + (f"\n  ... and {more} more" if more > 0 else ""),
                [c.key for c in found],
            )
        match = found[0]
    checks = gate_checks(match, th)
    return {
        "candidate": match.to_json(),
        "thresholds": {
            "minScore": th.min_score,
            "minRecallCount": th.min_recall_count,
            "minUniqueQueries": th.min_unique_queries,
            "minRelevance": th.min_relevance,
            "recencyHalfLifeDays": th.half_life_days,
        },
        "weights": th.weights,
        "gates": [
            {
                "gate": g.name,
                "passed": g.passed,
                "actual": g.actual,
                "required": g.required,
                "margin": round(g.margin, 6),
            }
            for g in checks
        ],
        "passes": all(g.passed for g in checks) and not match.promoted_at,
    }
