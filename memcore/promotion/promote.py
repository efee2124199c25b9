"""Promotion of recalled daily-note snippets into MEMORY.md.

Preview ranks the recall store and writes nothing. Apply, under the workspace lock, re-ranks the
live store (so no hand-built candidate bypasses a gate), re-locates each snippet in its current
daily note, appends one dated section to MEMORY.md (each bullet behind a marker naming its
recall key), writes MEMORY.md atomically and only then marks the store entries ``promotedAt``.
A key already marked in MEMORY.md is reconciled, never appended twice.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.errors import InputError, WorkspaceError
from memcore.recall import mirror as recall_index
from memcore.recall.entries import normalize_snippet
from memcore.recall.scoring import Candidate, Thresholds, gate_checks, rank
from memcore.recall.store import Store, fresh_mirror, quarantined_files, read_store, write_store
from memcore.workspace.clock import iso_ms, utcnow
from memcore.workspace.config import DreamingSettings, dreaming_settings, load_config
from memcore.workspace.core import Workspace, atomic_write_text, read_text_checked
from memcore.workspace.markdown import format_marker, marked_recall_keys, promoted_entry_id

SECTION_PREFIX = "## Promoted From Short-Term Memory"
_LIST_MARK_RE = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
TITLE = "# Long-Term Memory"


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
                "recencyHalfLifeDays": th.half_life_days,
            },
            "storeHealth": {
                "entries": self.store_entries,
                "promoted": self.store_promoted,
                "invalid": self.store_invalid,
                "quarantined": self.quarantined,
            },
            "exclusions": self.exclusions,
            "candidates": [c.to_json() for c in self.candidates],
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
) -> tuple[DreamingSettings, Thresholds, int]:
    """Settings, thresholds and limit of one run: flags over config over the mode's preset."""
    settings = settings or dreaming_settings(load_config(ws))
    th = resolve_thresholds(
        settings,
        min_score=min_score,
        min_recall_count=min_recall_count,
        min_unique_queries=min_unique_queries,
    )
    return settings, th, settings.limit if limit is None else limit


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
) -> PromoteResult:
    """Rank the store with the resolved thresholds; write nothing."""
    now = now or utcnow()
    settings, th, lim = _resolve(
        ws, settings, limit, min_score, min_recall_count, min_unique_queries
    )
    aside_before = set(quarantined_files(ws))
    conn = fresh_mirror(ws, now)
    try:
        window = None if lim is None else 2 * lim + 20
        try:
            rows = recall_index.top_rows(conn, now, th, window, include_promoted)
            excl = recall_index.exclusions(conn, now, th, include_promoted)
        except sqlite3.OperationalError:  # SQLite without math functions: score in Python
            rows = recall_index.gate_rows(
                conn, th.min_recall_count, th.min_unique_queries, include_promoted
            )
            excl = None
        totals = recall_index.counts(conn)
    finally:
        conn.close()
    passing = rank(rows, now, th, include_promoted=include_promoted)
    if excl is None:
        excl = {"score": len(rows) - len(passing), "total": totals["entries"], "promoted": 0}
        if not include_promoted:
            excl["promoted"] = totals["promoted"]
    by_reason = {k: v for k, v in excl.items() if k != "total" and v}
    considered = excl["total"] - excl["promoted"]
    return PromoteResult(
        ws=ws,
        thresholds=th,
        limit=lim,
        candidates=passing[: max(0, lim)] if lim is not None else passing,
        exclusions={
            "considered": considered,
            "excluded": sum(v for k, v in by_reason.items() if k != "promoted"),
            "byReason": by_reason,
        },
        store_entries=totals["entries"],
        store_promoted=totals["promoted"],
        quarantined=next((str(p) for p in quarantined_files(ws) if p not in aside_before), None),
    )


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
) -> PromoteResult:
    """Promote the live candidates into MEMORY.md (see module docstring).

    ``keys`` restricts the run to those recall keys; they must still pass every gate.
    """
    now = now or utcnow()
    settings, th, lim = _resolve(
        ws, settings, limit, min_score, min_recall_count, min_unique_queries
    )
    with ws.lock(lock_timeout):
        before = recall_index.file_stat(ws)
        store = read_store(ws, now=now)
        if store.quarantined:
            before = None
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
        result.apply = _apply_locked(ws, store, selected, now, settings, before)
        result.store_promoted = sum(1 for e in store.entries.values() if e.get("promotedAt"))
    return result


def _read_memory_md(ws: Workspace) -> str:
    path = ws.memory_md
    if path.is_dir():
        raise WorkspaceError(f"{path} is a directory; MEMORY.md must be a file")
    if not path.exists():
        return ""
    return read_text_checked(path)


def _apply_locked(
    ws: Workspace,
    store: Store,
    selected: list[Candidate],
    now: datetime,
    settings: DreamingSettings,
    before: recall_index.Stat,
) -> dict[str, Any]:
    memory_path = str(ws.memory_md)
    outcome: dict[str, Any] = {
        "applied": 0,
        "appended": 0,
        "reconciledExisting": 0,
        "skipped": [],
        "memoryPath": memory_path,
        "appliedCandidates": [],
    }
    if not selected:
        return outcome
    text = _read_memory_md(ws)
    already = marked_recall_keys(text)
    to_append: list[Candidate] = []
    reconciled: list[Candidate] = []
    for c in selected:
        if c.key in already:
            reconciled.append(c)
            continue
        reason = _relocate(ws, c)
        if reason:
            outcome["skipped"].append({"key": c.key, "path": c.path, "reason": reason})
            continue
        to_append.append(c)
    if to_append:
        atomic_write_text(ws.memory_md, text + render_section(text, to_append, now, settings))
    now_iso = iso_ms(now)
    for c in to_append + reconciled:
        entry = store.entries.get(c.key)
        if entry is None:
            continue
        entry["promotedAt"] = now_iso
        entry["startLine"], entry["endLine"], entry["snippet"] = c.start_line, c.end_line, c.snippet
    if to_append or reconciled:
        write_store(ws, store, now, before=before, changed=[c.key for c in to_append + reconciled])
    outcome["appended"] = len(to_append)
    outcome["reconciledExisting"] = len(reconciled)
    outcome["applied"] = len(to_append) + len(reconciled)
    outcome["appliedCandidates"] = [c.to_json() for c in to_append + reconciled]
    return outcome


def bullet_text(c: Candidate) -> str:
    """``- <snippet> [score=0.812 recalls=4 avg=0.903 source=memory/2026-04-01.md:10-12]``."""
    snippet = _LIST_MARK_RE.sub("", c.snippet, count=1) or "(no snippet captured)"
    return (
        f"- {snippet} [score={c.score:.3f} recalls={c.recall_count} avg={c.avg_score:.3f} "
        f"source={c.path}:{c.start_line}-{c.end_line}]"
    )


def render_section(
    existing: str, cands: list[Candidate], now: datetime, settings: DreamingSettings
) -> str:
    """The text appended to ``existing``: title if empty, newline fix, the dated section."""
    prefix = ""
    if not existing.strip():
        prefix = TITLE + "\n\n"
    elif not existing.endswith("\n"):
        prefix = "\n"
    day = now.astimezone(settings.tz).date().isoformat()
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

_OWN_OUTPUT_MARKERS = ("<!-- memcore:entry", "<!-- openclaw-memory-promotion:", SECTION_PREFIX)


def _looks_like_own_output(snippet: str) -> bool:
    if any(m in snippet for m in _OWN_OUTPUT_MARKERS):
        return True
    return "[score=" in snippet and "recalls=" in snippet and "source=" in snippet


def _relocate(ws: Workspace, c: Candidate) -> str | None:
    """Find the candidate's snippet in its daily note now; update its range. Returns a skip
    reason, or None when found."""
    if _looks_like_own_output(c.snippet):
        return "snippet is memcore's own promotion output, not a memory"
    path = _source_file(ws, c.path)
    if path is None:
        return f"source file {c.path} no longer exists"
    try:
        text = read_text_checked(path)
    except WorkspaceError as exc:
        return str(exc)
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    lines = [ln.rstrip("\r") for ln in lines]
    found = locate(lines, c.snippet, c.start_line, c.end_line)
    if found is None:
        if not c.snippet:
            return "no snippet was captured and the stored lines are empty"
        return f"snippet no longer found in {c.path} (edited or removed)"
    start, end, snippet = found
    c.start_line, c.end_line, c.snippet = start, end, snippet
    return None


def _source_file(ws: Workspace, rel: str) -> Path | None:
    candidates = [ws.root / rel]
    if not rel.startswith("memory/"):
        candidates.append(ws.memory_dir / Path(rel).name)
    for p in candidates:
        if p.is_file():
            return p
    return None


def locate(lines: list[str], snippet: str, start: int, end: int) -> tuple[int, int, str] | None:
    """Best window of ``lines`` for ``snippet``: exact > contains > contained, then nearest to
    the stored start, then the closest span. Returns (start, end, normalised text) or None."""
    n = len(lines)
    tokens = [ln.split() for ln in lines]
    if not snippet:
        window = " ".join(t for row in tokens[start - 1 : end] for t in row)
        return (start, end, window) if window else None
    if 1 <= start <= end <= n:
        window = " ".join(t for row in tokens[start - 1 : end] for t in row)
        if window == snippet:
            return start, end, snippet
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
            window = " ".join(parts)
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
    """
    now = now or utcnow()
    settings = settings or dreaming_settings(load_config(ws))
    th = resolve_thresholds(settings)
    store = read_store(ws, now=now)
    zero = Thresholds(0.0, 0, 0, th.half_life_days, th.weights)
    everything = rank(store.entries.values(), now, zero, include_promoted=True)
    sel = selector.strip().lower()
    match = next((c for c in everything if c.key.lower() == sel), None)
    if match is None:
        match = next(
            (
                c
                for c in everything
                if sel in c.key.lower() or sel in c.path.lower() or sel in c.snippet.lower()
            ),
            None,
        )
    if match is None:
        raise InputError(f'No promotion candidate matched "{selector}".')
    checks = gate_checks(match, th)
    return {
        "candidate": match.to_json(),
        "thresholds": {
            "minScore": th.min_score,
            "minRecallCount": th.min_recall_count,
            "minUniqueQueries": th.min_unique_queries,
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
