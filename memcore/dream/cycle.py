"""The dream cycle in its fixed order: promote, merge, reconcile, decay, forget.

:func:`build_plan` reads MEMORY.md, the ledger and the recall store and proposes every change
without writing anything. :func:`apply_plan` applies a plan under the workspace lock, checking
first that MEMORY.md is still the text the plan was made from. :func:`run_cycle` is the
unattended path (``--auto``, the scheduler, ``POST /api/memories/dream``): plan and apply in
one locked step; conflicts and detail-losing merges go to the review queue.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any

from memcore.dream import review as review_mod
from memcore.dream import tables
from memcore.dream.apply import Applied, MergeOp, MetaOp, Op, RemoveOp, apply_ops, promote_step
from memcore.dream.lifecycle import age_days, decayed, forget_reason
from memcore.dream.merge import Item, candidate_pairs, cluster, combined_text
from memcore.dream.reconcile import ConflictProposal, find_conflicts
from memcore.dream.settings import ConsolidationSettings, consolidation_settings
from memcore.errors import InputError
from memcore.journal import runs as journal
from memcore.judge import model_merge
from memcore.recall import ledger
from memcore.recall.ledger import Meta
from memcore.workspace.clock import iso_ms, parse_iso, utcnow
from memcore.workspace.config import load_config
from memcore.workspace.core import Workspace
from memcore.workspace.entries import Document, parse

STEPS = ("promote", "merge", "reconcile", "decay", "forget")
#: The result every run reports (issue 4's contract for the CLI, the API and the job).
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
#: Cosine above which two entries are checked for a contradiction, per backend id.
CONFLICT_THRESHOLDS = {"hashing-v1-4096": 0.45, "minilm-l6-int8": 0.70}
#: Above this many entries merge and reconcile are skipped with a warning (bounded time and
#: memory on a runaway MEMORY.md); decay and forget still run.
MAX_SIMILARITY_ENTRIES = 20_000


@dataclass
class MergeProposal:
    keeper: str
    absorbed: list[str]
    text: str  # the merged text (the keeper's own when nothing would be lost)
    lossy: bool
    missing: dict[str, list[str]]
    similarity: float
    op: MergeOp
    by_model: bool = False  # a configured model wrote the text and kept every detail


@dataclass
class PruneProposal:
    id: str
    type: str
    age_days: int
    reason: str
    op: RemoveOp


@dataclass
class Plan:
    ws: Workspace
    now: datetime
    steps: tuple[str, ...]
    doc: Document
    metas: dict[str, Meta]
    backend: str
    threshold: float
    promotions: list[dict[str, Any]] = field(default_factory=list)
    merges: list[MergeProposal] = field(default_factory=list)
    conflicts: list[ConflictProposal] = field(default_factory=list)
    decays: list[MetaOp] = field(default_factory=list)
    prunes: list[PruneProposal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    model: str | None = None  # name of the configured model used for lossy merges

    @property
    def sha1(self) -> str:
        return self.doc.sha1

    def auto_merges(self) -> list[MergeProposal]:
        """Merges ``--auto`` may apply: nothing lost, or a model combined the text."""
        return [m for m in self.merges if not m.lossy or m.by_model]

    def deferred_merges(self) -> list[MergeProposal]:
        return [m for m in self.merges if m.lossy and not m.by_model]

    def empty(self) -> bool:
        return not (self.promotions or self.merges or self.conflicts or self.prunes)


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


def _embed(
    texts: list[str],
    settings: ConsolidationSettings,
    conn: sqlite3.Connection | None,
    write_cache: bool,
) -> tuple[Any, Any]:
    import numpy as np

    from memcore.search.embeddings import VectorCache, cache_id, content_sha1, get_embedder

    emb = get_embedder(settings.embedder)
    fit = getattr(emb, "fit", None)
    if callable(fit):
        fit(texts)  # the hashing backend's IDF is fitted on the memory itself
    if not texts:
        return emb, np.zeros((0, emb.dim), dtype=np.float32)
    if conn is None or callable(fit):
        return emb, np.asarray(emb.embed(texts), dtype=np.float32)
    cache = VectorCache(conn)
    backend = cache_id(emb)
    hashes = [content_sha1(t) for t in texts]
    have = cache.get_many(backend, hashes)
    out = np.zeros((len(texts), emb.dim), dtype=np.float32)
    missing = [i for i, h in enumerate(hashes) if h not in have]
    if missing:
        fresh = np.asarray(emb.embed([texts[i] for i in missing]), dtype=np.float32)
        for row, i in enumerate(missing):
            out[i] = fresh[row]
        if write_cache:
            cache.put_many(backend, {hashes[i]: fresh[r] for r, i in enumerate(missing)})
    if write_cache:
        cache.prune(backend, keep=set(hashes))  # vectors of texts no longer in MEMORY.md go
    for i, h in enumerate(hashes):
        if h in have:
            out[i] = have[h]
    return emb, out


def build_plan(
    ws: Workspace,
    *,
    now: datetime,
    steps: Sequence[str] = STEPS,
    conn: sqlite3.Connection | None = None,
    settings: ConsolidationSettings | None = None,
    write_cache: bool = False,
) -> Plan:
    """Propose every change of the cycle; writes nothing (unless ``write_cache``)."""
    settings = settings or consolidation_settings(load_config(ws))
    doc = parse(ledger.read_memory(ws))
    metas = (
        ledger.metas_for(conn, doc, now)
        if conn is not None
        else {e.id: ledger.effective(e, None, now) for e in doc.entries}
    )
    plan = Plan(
        ws=ws,
        now=now,
        steps=tuple(steps),
        doc=doc,
        metas=metas,
        backend="",
        threshold=0.0,
        warnings=list(doc.warnings),
    )
    if "promote" in steps:
        plan.promotions = _promotions(ws, now)
    entries = doc.entries
    llm = model_merge.configured_model(ws) if "merge" in steps and len(entries) > 1 else None
    plan.model = getattr(llm, "name", None) if llm is not None else None
    items = [
        Item(
            e.id,
            e.text,
            metas[e.id].type,
            metas[e.id].scope,
            metas[e.id].pinned,
            metas[e.id].importance,
            metas[e.id].created_at,
        )
        for e in entries
    ]
    sim_steps = {"merge", "reconcile"} & set(steps)
    groups: list[Any] = []
    pairs: list[tuple[int, int, float]] = []
    cthr = 1.0
    if sim_steps and len(entries) > MAX_SIMILARITY_ENTRIES:
        plan.warnings.append(
            f"MEMORY.md has {len(entries)} entries; merge and reconcile are skipped above "
            f"{MAX_SIMILARITY_ENTRIES} (move topics into memory/<topic>.md pages)"
        )
        sim_steps = set()
    if sim_steps and len(entries) > 1:
        emb, vecs = _embed([it.text for it in items], settings, conn, write_cache)
        plan.backend = emb.id
        plan.threshold = settings.threshold_for(emb.id, emb.default_merge_threshold)
        cthr = min(plan.threshold, CONFLICT_THRESHOLDS.get(emb.id, plan.threshold - 0.15))
        pairs = candidate_pairs(vecs, cthr)
        if "merge" in steps:
            groups, _refused = cluster(items, pairs, plan.threshold, vecs)
    sim = dict(metas)
    gone: dict[int, int] = {}  # absorbed index -> keeper index
    protected: set[int] = set()
    for g in groups:
        keeper = entries[g.keeper]
        absorbed = [entries[a] for a in g.absorbed]
        km = sim[keeper.id]
        group_metas = [metas[e.id] for e in absorbed]
        after = replace(
            km,
            importance=min(1.0, round(km.importance + 0.05, 6)),
            access_count=km.access_count + sum(m.access_count for m in group_metas),
            last_accessed_at=max(
                [m.last_accessed_at for m in [km, *group_metas] if m.last_accessed_at] or [None]  # type: ignore[list-item]
            ),
        )
        text = combined_text(keeper.text, [e.text for e in absorbed]) if g.lossy else keeper.text
        by_model = False
        if g.lossy and llm is not None:
            written = model_merge.model_text(llm, keeper.text, [e.text for e in absorbed])
            if written is not None:
                text, by_model = written, True
        reason = f"near-duplicates (cosine {max(g.sims):.2f})"
        op = MergeOp(
            keeper.id,
            keeper.raw,
            [(e.id, e.raw) for e in absorbed],
            text if g.lossy else None,
            after,
            {e.id: metas[e.id] for e in [keeper, *absorbed]},
            reason,
        )
        plan.merges.append(
            MergeProposal(
                keeper.id,
                [e.id for e in absorbed],
                text,
                g.lossy,
                {entries[a].id: m for a, m in g.missing.items()},
                max(g.sims),
                op,
                by_model,
            )
        )
        if g.lossy and not by_model:
            protected.update([g.keeper, *g.absorbed])
        else:
            sim[keeper.id] = after
            for a in g.absorbed:
                gone[a] = g.keeper
    if "reconcile" in steps:
        plan.conflicts = find_conflicts(entries, sim, pairs, gone, cthr)
        for c in plan.conflicts:
            protected.update(i for i, e in enumerate(entries) if e.id in (c.a, c.b))
    for i, e in enumerate(entries):
        if i in gone:
            continue
        m = sim[e.id]
        if "decay" in steps and i not in protected:  # entries waiting for a decision stay put
            d = decayed(m, now, settings)
            if d is not None:
                plan.decays.append(
                    MetaOp(
                        "decay",
                        e.id,
                        m,
                        d,
                        f"not accessed for more than {settings.decay_days:g} days",
                    )
                )
                m = sim[e.id] = d
        if "forget" in steps and i not in protected:
            why = forget_reason(m, e.text, now, settings)
            if why is not None:
                op = RemoveOp("forget", e.id, e.raw, why.text, m)
                plan.prunes.append(PruneProposal(e.id, m.type, age_days(m, now), why.text, op))
    return plan


def _promotions(ws: Workspace, now: datetime) -> list[dict[str, Any]]:
    from memcore.promotion import promote
    from memcore.workspace.markdown import promoted_entry_id

    res = promote.preview(ws, now=now)
    return [
        {"id": promoted_entry_id(c.key), "key": c.key, "snippet": c.snippet, "score": c.score}
        for c in res.candidates
    ]


def conflict_payload(c: ConflictProposal, plan: Plan) -> dict[str, Any]:
    return {
        "a": {"id": c.a, "text": c.a_text, "raw": c.a_raw, "meta": plan.metas[c.a].to_json()},
        "b": {"id": c.b, "text": c.b_text, "raw": c.b_raw, "meta": plan.metas[c.b].to_json()},
        "topic": c.topic,
        "reason": c.reason,
        "suggested": "a",
        "similarity": round(c.similarity, 4),
    }


def merge_payload(m: MergeProposal, plan: Plan) -> dict[str, Any]:
    op = m.op
    return {
        "keeper": {"id": m.keeper, "text": plan.doc.by_id()[m.keeper].text, "raw": op.keeper_raw},
        "absorbed": [{"id": i, "raw": r, "text": plan.doc.by_id()[i].text} for i, r in op.absorbed],
        "text": m.text,
        "missing": m.missing,
        "similarity": round(m.similarity, 4),
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


def apply_plan(
    plan: Plan,
    *,
    now: datetime,
    mode: str,
    choices: dict[int, str] | None = None,
    lock_timeout: float = 10.0,
) -> dict[str, Any]:
    """Apply ``plan`` (``mode`` "apply": every merge plus the conflicts answered in ``choices``,
    index -> "a"/"b"/"skip"; ``mode`` "auto": safe merges only, conflicts queued for review).

    Refuses with StalePlan, changing nothing, when MEMORY.md changed since the plan.
    """
    ws = plan.ws
    started = time.perf_counter()
    choices = choices or {}
    run_id = journal.new_run_id(now)
    merges = plan.merges if mode == "apply" else plan.auto_merges()
    deferred = [] if mode == "apply" else plan.deferred_merges()
    ops: list[Op] = [m.op for m in merges]
    resolved = 0
    queue: list[tuple[str, dict[str, Any]]] = [("merge", merge_payload(m, plan)) for m in deferred]
    for i, c in enumerate(plan.conflicts):
        choice = choices.get(i, "skip") if mode == "apply" else "skip"
        if choice in ("a", "b"):
            ops.append(conflict_op(c, plan, choice))
            resolved += 1
        else:
            queue.append(("conflict", conflict_payload(c, plan)))
    ops.extend(plan.decays)
    ops.extend(p.op for p in plan.prunes)
    counters = {
        "merged": sum(len(m.absorbed) for m in merges),
        "conflicts": len(plan.conflicts),
        "conflictsResolved": resolved,
        "conflictsSkipped": len(plan.conflicts) - resolved,
        "mergesDeferred": len(deferred),
        "decayed": len(plan.decays),
        "forgotten": len(plan.prunes),
    }
    promote_fn = None
    if "promote" in plan.steps and plan.promotions:
        promote_fn = partial(promote_step, ws, now, lock_timeout)
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
        )
        review_mod.queue(conn, queue, run_id, now)
        waiting = review_mod.pending_count(conn)
    return _result(plan, applied, counters, now, started, waiting, mode)


def _result(
    plan: Plan,
    applied: Applied | None,
    counters: dict[str, Any],
    now: datetime,
    started: float,
    waiting: int,
    mode: str,
) -> dict[str, Any]:
    out = {
        "promoted": applied.promoted if applied else len(plan.promotions),
        "merged": counters["merged"],
        "conflicts": counters["conflicts"],
        "decayed": counters["decayed"],
        "forgotten": counters["forgotten"],
        "remaining": applied.remaining
        if applied
        else len(plan.doc.entries) - counters["merged"] - counters["forgotten"],
        "durationMs": round((time.perf_counter() - started) * 1000, 1),
        "ranAt": iso_ms(now),
        "runId": applied.run_id if applied else None,
        "applied": applied is not None,
        "mode": mode,
        "conflictsResolved": counters.get("conflictsResolved", 0),
        "conflictsSkipped": counters.get("conflictsSkipped", counters["conflicts"]),
        "mergesDeferred": counters.get("mergesDeferred", 0),
        "reviewPending": waiting,
        "backend": plan.backend,
        "threshold": plan.threshold,
        "warnings": plan.warnings,
    }
    return out


def preview_counters(plan: Plan) -> dict[str, Any]:
    return {
        "merged": sum(len(m.absorbed) for m in plan.merges),
        "conflicts": len(plan.conflicts),
        "decayed": len(plan.decays),
        "forgotten": len(plan.prunes),
    }


def preview_result(plan: Plan, now: datetime) -> dict[str, Any]:
    """The result dict of a plan that was not applied (``applied`` false, no run id)."""
    return _result(
        plan, None, preview_counters(plan), now, time.perf_counter(), _waiting(plan.ws), "preview"
    )


def preview(ws: Workspace, *, now: datetime | None = None, steps: Sequence[str] = STEPS) -> Plan:
    """A plan made without changing any memory: MEMORY.md, the archive and the ledger stay as
    they are. Only the vector cache of an existing database may gain rows (a cache, by content
    hash); a workspace without a database is not given one."""
    now = now or utcnow()
    if ws.db_path.exists():
        with tables.connect(ws) as conn:
            return build_plan(ws, now=now, steps=steps, conn=conn, write_cache=True)
    return build_plan(ws, now=now, steps=steps, conn=None)


def run_cycle(
    ws: Workspace,
    *,
    now: datetime | None = None,
    mode: str = "auto",
    steps: Sequence[str] = STEPS,
    lock_timeout: float = 10.0,
    keep_plan: bool = False,
) -> dict[str, Any]:
    """Run the whole cycle unattended (``auto``) or just report it (``preview``).

    Returns ``{promoted, merged, conflicts, decayed, forgotten, remaining, durationMs, ranAt}``
    plus ``runId``, ``reviewPending``, ``conflictsSkipped``, ``mergesDeferred``, ``warnings``
    (JSON-ready); ``keep_plan`` adds the :class:`Plan` under ``plan`` (for the CLI).
    """
    now = now or utcnow()
    started = time.perf_counter()
    if mode == "preview":
        plan = preview(ws, now=now, steps=steps)
        out = preview_result(plan, now)
        if keep_plan:
            out["plan"] = plan
        return out
    if mode != "auto":
        raise InputError(f"run_cycle mode must be auto or preview, not {mode!r}")
    with ws.lock(lock_timeout):  # one lock for plan and apply (the filelock is reentrant)
        with tables.connect(ws) as conn:
            plan = build_plan(ws, now=now, steps=steps, conn=conn, write_cache=True)
        out = apply_plan(plan, now=now, mode="auto", lock_timeout=lock_timeout)
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
