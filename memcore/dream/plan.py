"""Planning the dream cycle: every change it would make, proposed without writing anything.

:func:`build_plan` reads MEMORY.md, the ledger and the recall store and returns a :class:`Plan`:
the promotions, near-duplicate merges, conflicts, decays and forgets of the steps asked for.
Applying it is :mod:`memcore.dream.cycle`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from memcore.dream.apply import MergeOp, MetaOp, RemoveOp
from memcore.dream.lifecycle import age_days, decayed, forget_reason
from memcore.dream.merge import Item, candidate_pairs, cluster, combined_text
from memcore.dream.reconcile import ConflictProposal, find_conflicts
from memcore.dream.settings import ConsolidationSettings, consolidation_settings
from memcore.judge import model_merge
from memcore.recall import ledger
from memcore.recall.ledger import Meta
from memcore.workspace.config import load_config
from memcore.workspace.core import Workspace
from memcore.workspace.entries import Document, parse
from memcore.workspace.progress import Progress

STEPS = ("promote", "merge", "reconcile", "decay", "forget")
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


def _embed(
    texts: list[str],
    settings: ConsolidationSettings,
    conn: sqlite3.Connection | None,
    write_cache: bool,
    progress: Progress | None = None,
) -> tuple[Any, Any]:
    import numpy as np

    from memcore.search.embeddings import (
        VectorCache,
        cache_id,
        content_sha1,
        embed_batches,
        get_embedder,
    )

    emb = get_embedder(settings.embedder)
    fit = getattr(emb, "fit", None)
    if callable(fit):
        fit(texts)  # the hashing backend's IDF is fitted on the memory itself
    if not texts:
        return emb, np.zeros((0, emb.dim), dtype=np.float32)
    if conn is None or callable(fit):
        return emb, embed_batches(emb, texts, progress)
    cache = VectorCache(conn)
    backend = cache_id(emb)
    hashes = [content_sha1(t) for t in texts]
    have = cache.get_many(backend, hashes)
    out = np.zeros((len(texts), emb.dim), dtype=np.float32)
    missing = [i for i, h in enumerate(hashes) if h not in have]
    if missing:
        fresh = embed_batches(emb, [texts[i] for i in missing], progress)
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
    progress: Progress | None = None,
) -> Plan:
    """Propose every change of the cycle; writes nothing (unless ``write_cache``).

    ``progress`` follows the embedding of MEMORY.md's entries (a model takes a while)."""
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
        emb, vecs = _embed([it.text for it in items], settings, conn, write_cache, progress)
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
                (m.last_accessed_at for m in [km, *group_metas] if m.last_accessed_at),
                default=None,
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
            d = decayed(m, now, settings)  # shown, never stored: decay is a function of dates
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
        if "forget" in steps and i not in protected:
            why = forget_reason(m, e.text, now, settings)
            if why is not None:
                forget = RemoveOp("forget", e.id, e.raw, why.text, m)
                plan.prunes.append(PruneProposal(e.id, m.type, age_days(m, now), why.text, forget))
    return plan


def _promotions(ws: Workspace, now: datetime) -> list[dict[str, Any]]:
    from memcore.promotion import promote
    from memcore.workspace.markdown import promoted_entry_id

    res = promote.preview(ws, now=now)
    return [
        {"id": promoted_entry_id(c.key), "key": c.key, "snippet": c.snippet, "score": c.score}
        for c in res.candidates
    ]
