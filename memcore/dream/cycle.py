"""The dream cycle in its fixed order: promote, merge, reconcile, decay, forget.

:func:`memcore.dream.plan.build_plan` reads MEMORY.md, the ledger and the recall store and
proposes every change without writing anything. :func:`apply_plan` applies a plan under the
workspace lock, checking first that MEMORY.md is still the text the plan was made from.
:func:`run_cycle` is the unattended path (``--auto``, the scheduler,
``POST /api/memories/dream``): plan and apply in one locked step; conflicts and detail-losing
merges go to the review queue, at most ``REVIEW_LIMIT`` new items a run (most confident first;
the rest are counted in ``reviewOverflow`` and proposed again by later runs).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memcore.dream import review as review_mod
from memcore.dream import tables
from memcore.dream.apply import Applied, MergeOp, Op, RemoveOp, apply_ops, promote_step
from memcore.dream.plan import STEPS, MergeProposal, Plan, build_plan
from memcore.dream.reconcile import ConflictProposal
from memcore.dream.settings import ConsolidationSettings, consolidation_settings
from memcore.errors import InputError, LossBoundExceeded
from memcore.journal import runs as journal
from memcore.journal import wal
from memcore.promotion.budget import budget_chars, check_growth
from memcore.workspace.clock import iso_ms, parse_iso, utcnow
from memcore.workspace.config import load_config
from memcore.workspace.core import Workspace
from memcore.workspace.gcpause import no_gc
from memcore.workspace.progress import Progress

#: The result every run reports (one contract for the CLI, the API and the job).
RESULT_KEYS = (
    "promoted",
    "merged",
    "conflicts",
    "decayed",
    "forgotten",
    "remaining",
    "durationMs",
    "ranAt",
)


def parse_steps(only: str | Sequence[str] | None) -> tuple[str, ...]:
    """Steps to run, in the fixed order; ``only`` is a comma list or a sequence of names."""
    if not only:
        return STEPS
    names = only.split(",") if isinstance(only, str) else list(only)
    wanted = {n.strip().lower() for n in names if n.strip()}
    unknown = wanted - set(STEPS)
    if unknown:
        raise InputError(
            f"unknown step(s) {', '.join(sorted(unknown))}; allowed: {', '.join(STEPS)}"
        )
    return tuple(s for s in STEPS if s in wanted)


def conflict_payload(c: ConflictProposal, plan: Plan) -> dict[str, Any]:
    return {
        "a": {"id": c.a, "text": c.a_text, "raw": c.a_raw, "meta": plan.metas[c.a].to_json()},
        "b": {"id": c.b, "text": c.b_text, "raw": c.b_raw, "meta": plan.metas[c.b].to_json()},
        "topic": c.topic,
        "reason": c.reason,
        "suggested": c.suggested,
        "verdict": c.verdict,
        "confidence": round(c.confidence, 3),
        "similarity": round(c.similarity, 4),
    }


def merge_payload(m: MergeProposal, plan: Plan) -> dict[str, Any]:
    op = m.op
    by_id = plan.doc.by_id()
    return {
        "keeper": {"id": m.keeper, "text": by_id[m.keeper].text, "raw": op.keeper_raw},
        "absorbed": [{"id": i, "raw": r, "text": by_id[i].text} for i, r in op.absorbed],
        "text": m.text,
        "missing": m.missing,
        "similarity": round(m.similarity, 4),
        "confidence": round(m.similarity, 3),
        "reason": m.reason,
        "keeperAfter": op.keeper_after.to_json(),
        "metas": {k: v.to_json() for k, v in op.absorbed_metas.items()},
    }


def conflict_op(c: ConflictProposal, plan: Plan, winner: str) -> RemoveOp:
    loser, loser_raw = (c.b, c.b_raw) if winner == "a" else (c.a, c.a_raw)
    kept = c.a if winner == "a" else c.b
    return RemoveOp(
        "reconcile",
        loser,
        loser_raw,
        f'conflict on "{c.topic}" resolved for {kept}',
        plan.metas.get(loser),
    )


#: New review items one run may queue (most confident first); the rest are counted.
REVIEW_LIMIT = 50

#: A run that touches at most this many entries is never refused by the loss bound (so a
#: small MEMORY.md can still have one duplicate merged).
LOSS_FLOOR = 3


def chosen_ops(
    plan: Plan, mode: str, choices: dict[int, str] | None = None
) -> tuple[list[MergeProposal], list[MergeProposal], list[Op], int, list[int]]:
    """What a run applies: (merges, deferred merges, ops, conflicts resolved, queued
    conflict indexes)."""
    choices = choices or {}
    merges = plan.merges if mode == "apply" else plan.auto_merges()
    deferred = [] if mode == "apply" else plan.deferred_merges()
    ops: list[Op] = [m.op for m in merges]
    ops.extend(s.op for s in plan.supersedes)
    resolved = 0
    queued: list[int] = []
    for i, c in enumerate(plan.conflicts):
        choice = choices.get(i, "skip") if mode == "apply" else "skip"
        if choice in ("a", "b"):
            ops.append(conflict_op(c, plan, choice))
            resolved += 1
        else:
            queued.append(i)
    ops.extend(p.op for p in plan.prunes)
    return merges, deferred, ops, resolved, queued


def affected_entries(ops: Sequence[Op]) -> list[str]:
    """Ids of existing entries the ops remove or rewrite (metadata changes do not count)."""
    out: list[str] = []
    for op in ops:
        if isinstance(op, MergeOp):
            if op.new_text is not None:
                out.append(op.keeper_id)
            out.extend(a for a, _ in op.absorbed)
        elif isinstance(op, RemoveOp):
            out.append(op.entry_id)
    return list(dict.fromkeys(out))


def loss_check(plan: Plan, ops: Sequence[Op], fraction: float | None = None) -> None:
    """Refuse (LossBoundExceeded) a run that removes or rewrites more than
    ``[consolidation] max_loss_fraction`` of MEMORY.md's existing entries."""
    if fraction is None:
        fraction = consolidation_settings(load_config(plan.ws)).max_loss_fraction
    affected = affected_entries(ops)
    existing = len(plan.doc.entries)
    if len(affected) <= max(LOSS_FLOOR, fraction * existing):
        return
    shown = ", ".join(affected[:10]) + (", …" if len(affected) > 10 else "")
    raise LossBoundExceeded(
        f"this run would remove or rewrite {len(affected)} of {existing} MEMORY.md entries "
        f"({len(affected) / max(existing, 1):.0%}), more than [consolidation] "
        f"max_loss_fraction = {fraction:g}; nothing was applied (entries: {shown}). "
        "Allowed: a larger max_loss_fraction, or memcore dream --apply to confirm the list",
        affected,
    )


@no_gc()  # the plan's objects are alive: a collection would rescan all of them
def apply_plan(
    plan: Plan,
    *,
    now: datetime,
    mode: str,
    choices: dict[int, str] | None = None,
    lock_timeout: float = 10.0,
    trigger: str = "command",
    allow_loss: bool = False,
    loss_fraction: float | None = None,
) -> dict[str, Any]:
    """Apply ``plan`` (``mode`` "apply": every merge plus the conflicts answered in ``choices``,
    index -> "a"/"b"/"skip"; ``mode`` "auto": safe merges only, conflicts queued for review).

    Refuses with StalePlan, changing nothing, when MEMORY.md changed since the plan; with
    LossBoundExceeded when it would remove or rewrite too much (unless ``allow_loss``, which
    the interactive ``--apply`` passes after showing the list); with InputError when it
    would take MEMORY.md past its size budget. ``loss_fraction`` is the bound to use instead
    of ``[consolidation] max_loss_fraction`` (a scheduled run on the last good settings).
    """
    ws = plan.ws
    started = time.perf_counter()
    run_id = journal.new_run_id(now)
    merges, deferred, ops, resolved, queued = chosen_ops(plan, mode, choices)
    if not allow_loss:
        loss_check(plan, ops, loss_fraction)
    ranked: list[tuple[float, str, dict[str, Any]]] = [
        (m.similarity, "merge", merge_payload(m, plan)) for m in deferred
    ]
    ranked += [
        (plan.conflicts[i].confidence, "conflict", conflict_payload(plan.conflicts[i], plan))
        for i in queued
    ]
    ranked.sort(key=lambda r: -r[0])  # most confident first (a stable sort keeps plan order)
    queue = [(kind, payload) for _conf, kind, payload in ranked]
    counters = {
        "merged": sum(len(m.absorbed) for m in merges),
        "superseded": len(plan.supersedes),
        "conflicts": len(plan.conflicts),
        "conflictsResolved": resolved,
        "conflictsSkipped": len(plan.conflicts) - resolved,
        "mergesDeferred": len(deferred),
        "decayed": len(plan.decays),
        "forgotten": len(plan.prunes),
    }
    promote_fn = None
    if "promote" in plan.steps and plan.promotions:
        promote_fn = promote_step(ws, now)
    budget = budget_chars(ws)
    with ws.lock(lock_timeout), tables.connect(ws) as conn:
        applied = apply_ops(
            ws,
            conn,
            ops,
            now=now,
            run_id=run_id,
            kind="dream",
            mode=mode,
            counters=counters,
            expected_sha1=plan.sha1,
            promote_fn=promote_fn,
            trigger=trigger,
            check=lambda before, after: check_growth(before, after, budget),
            parsed=plan.doc,
        )
        _added, overflow = review_mod.queue(conn, queue, run_id, now, limit=REVIEW_LIMIT)
        waiting = review_mod.pending_count(conn)
    out = _result(plan, applied, counters, now, started, waiting, mode)
    out["reviewOverflow"] = overflow
    return out


def _result(
    plan: Plan,
    applied: Applied | None,
    counters: dict[str, Any],
    now: datetime,
    started: float,
    waiting: int,
    mode: str,
) -> dict[str, Any]:
    promotion = (applied.promotion if applied else None) or {}
    out = {
        "promoted": applied.promoted if applied else len(plan.promotions),
        "merged": counters["merged"],
        "conflicts": counters["conflicts"],
        "decayed": counters["decayed"],
        "forgotten": counters["forgotten"],
        "remaining": applied.remaining
        if applied
        else len(plan.doc.entries)
        - counters["merged"]
        - counters.get("superseded", 0)
        - counters["forgotten"],
        "durationMs": round((time.perf_counter() - started) * 1000, 1),
        "ranAt": iso_ms(now),
        "runId": applied.run_id if applied else None,
        "applied": applied is not None,
        "mode": mode,
        "conflictsResolved": counters.get("conflictsResolved", 0),
        "conflictsSkipped": counters.get("conflictsSkipped", counters["conflicts"]),
        "mergesDeferred": counters.get("mergesDeferred", 0),
        "reviewPending": waiting,
        "superseded": counters.get("superseded", len(plan.supersedes)),
        "backend": plan.backend,
        "judge": plan.judge,
        "model": plan.model,
        "candidates": plan.candidates,
        "skippedPairs": plan.skipped[:20],
        "skippedPairsTotal": len(plan.skipped),
        "warnings": plan.warnings
        + [
            f"promotion of {h['key']} held back: {h['reason']}"
            for h in promotion.get("heldBack", [])
        ],
        "promotion": {
            "appended": promotion.get("appended", 0),
            "reinforced": promotion.get("reinforcedExisting", []),
            "heldBack": promotion.get("heldBack", []),
            "skipped": promotion.get("skipped", []),
        }
        if applied
        else None,
    }
    return out


def preview_counters(plan: Plan) -> dict[str, Any]:
    return {
        "merged": sum(len(m.absorbed) for m in plan.merges),
        "superseded": len(plan.supersedes),
        "conflicts": len(plan.conflicts),
        "decayed": len(plan.decays),
        "forgotten": len(plan.prunes),
    }


def preview_result(plan: Plan, now: datetime) -> dict[str, Any]:
    """The result dict of a plan that was not applied (``applied`` false, no run id)."""
    return _result(
        plan, None, preview_counters(plan), now, time.perf_counter(), _waiting(plan.ws), "preview"
    )


def preview(
    ws: Workspace,
    *,
    now: datetime | None = None,
    steps: Sequence[str] = STEPS,
    progress: Progress | None = None,
) -> Plan:
    """A plan made without changing any memory: MEMORY.md, the archive and the ledger stay as
    they are. Only the vector cache of an existing database may gain rows (a cache, by content
    hash); a workspace without a database is not given one."""
    now = now or utcnow()
    return _preview(ws, now, steps, progress)


def preview_for_apply(
    ws: Workspace,
    *,
    now: datetime,
    steps: Sequence[str] = STEPS,
    lock_timeout: float = 10.0,
    progress: Progress | None = None,
) -> Plan:
    """The plan ``dream --apply`` shows and then applies: a run that was interrupted is rolled
    back first, so the report is made from what the run will find under the lock."""
    wal.recover_pending(ws, lock_timeout)
    return _preview(ws, now, steps, progress)


def _preview(ws: Workspace, now: datetime, steps: Sequence[str], progress: Progress | None) -> Plan:
    if ws.db_path.exists():
        with tables.connect(ws) as conn:
            return build_plan(
                ws, now=now, steps=steps, conn=conn, write_cache=True, progress=progress
            )
    return build_plan(ws, now=now, steps=steps, conn=None, progress=progress)


def run_cycle(
    ws: Workspace,
    *,
    now: datetime | None = None,
    mode: str = "auto",
    steps: Sequence[str] = STEPS,
    lock_timeout: float = 10.0,
    keep_plan: bool = False,
    trigger: str = "command",
    progress: Progress | None = None,
    settings: ConsolidationSettings | None = None,
) -> dict[str, Any]:
    """Run the whole cycle unattended (``auto``) or just report it (``preview``).

    ``settings`` replaces ``[consolidation]`` of memcore.toml (the scheduler passes the last
    good ones while the file is invalid).

    Returns ``{promoted, merged, conflicts, decayed, forgotten, remaining, durationMs, ranAt}``
    plus ``runId``, ``reviewPending``, ``conflictsSkipped``, ``mergesDeferred``, ``warnings``
    (JSON-ready); ``keep_plan`` adds the :class:`Plan` under ``plan`` (for the CLI).
    """
    now = now or utcnow()
    started = time.perf_counter()
    if mode == "preview":
        plan = preview(ws, now=now, steps=steps, progress=progress)
        out = preview_result(plan, now)
        if keep_plan:
            out["plan"] = plan
        return out
    if mode != "auto":
        raise InputError(f"run_cycle mode must be auto or preview, not {mode!r}")
    with ws.lock(lock_timeout):  # one lock for plan and apply (the filelock is reentrant)
        with tables.connect(ws) as conn:
            plan = build_plan(
                ws,
                now=now,
                steps=steps,
                conn=conn,
                settings=settings,
                write_cache=True,
                progress=progress,
            )
        out = apply_plan(
            plan,
            now=now,
            mode="auto",
            lock_timeout=lock_timeout,
            trigger=trigger,
            loss_fraction=None if settings is None else settings.max_loss_fraction,
        )
    out["durationMs"] = round((time.perf_counter() - started) * 1000, 1)
    if keep_plan:
        out["plan"] = plan
    return out


def _waiting(ws: Workspace) -> int:
    if not ws.db_path.exists():
        return 0
    with tables.connect(ws) as conn:
        return review_mod.pending_count(conn)


def last_run_at(ws: Workspace) -> datetime | None:
    """When the last applied dream run started (state in memcore.sqlite, not config)."""
    if not ws.db_path.exists():
        return None
    with tables.connect(ws) as conn:
        return parse_iso(journal.last_applied_at(conn))
