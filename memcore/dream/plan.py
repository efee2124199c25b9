"""Planning the dream cycle: every change it would make, proposed without writing anything.

:func:`build_plan` reads MEMORY.md, the ledger and the recall store and returns a :class:`Plan`:
the promotions, merges, supersessions, conflicts, decays and forgets of the steps asked for.
Applying it is :mod:`memcore.dream.cycle`.

Merge and reconcile decide with the judge engine (:mod:`memcore.judge`):

1. candidates: every entry's nearest neighbours by embedding (top-k, no threshold) plus
   entries sharing a rare token (an identifier, a number with its unit, a path, a name);
   scope is a hard wall, ``type`` only a signal (:mod:`memcore.judge.candidates`);
2. one verdict per pair from the configured judge (:mod:`memcore.dream.judging`), cached in
   memcore.sqlite by (pair content hash, judge id): a second run with nothing new asks nothing;
3. ``same`` pairs become merge clusters (:mod:`memcore.dream.merge`), ``supersedes`` and
   ``conflict`` pairs supersessions and review items (:mod:`memcore.dream.reconcile`); every
   proposal passes the host-side checks of :mod:`memcore.judge.validate` first.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from memcore.dream.apply import MergeOp, MetaOp, RemoveOp
from memcore.dream.lifecycle import age_days, decayed, forget_reason
from memcore.dream.reconcile import ConflictProposal, SupersedeProposal
from memcore.dream.settings import ConsolidationSettings, consolidation_settings
from memcore.recall import ledger
from memcore.recall.ledger import Meta
from memcore.workspace.config import load_config
from memcore.workspace.core import Workspace
from memcore.workspace.entries import Document, parse
from memcore.workspace.gcpause import no_gc
from memcore.workspace.progress import Progress

STEPS = ("promote", "merge", "reconcile", "decay", "forget")
#: Above this many entries merge and reconcile are skipped with a warning (bounded time and
#: memory on a runaway MEMORY.md); decay and forget still run.
MAX_SIMILARITY_ENTRIES = 20_000


@dataclass
class MergeProposal:
    keeper: str
    absorbed: list[str]
    text: str  # the merged text (the keeper's own when nothing needs adding)
    lossy: bool  # no text keeps every detail of every member: waits for review
    missing: dict[str, list[str]]  # details of absorbed entries the keeper's own text lacks
    similarity: float  # the judge's confidence
    op: MergeOp
    by_model: bool = False  # a configured model wrote the text (and it kept every detail)
    reason: str = ""


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
    judge: str = ""  # the judge's id (offline-3+hashing-v1-4096, model-1+name, ...)
    promotions: list[dict[str, Any]] = field(default_factory=list)
    merges: list[MergeProposal] = field(default_factory=list)
    supersedes: list[SupersedeProposal] = field(default_factory=list)
    conflicts: list[ConflictProposal] = field(default_factory=list)
    decays: list[MetaOp] = field(default_factory=list)
    prunes: list[PruneProposal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # pairs the judge skipped
    candidates: int = 0  # candidate pairs judged
    model: str | None = None  # name of the configured model, when it judged

    @property
    def sha1(self) -> str:
        return self.doc.sha1

    def auto_merges(self) -> list[MergeProposal]:
        """Merges ``--auto`` may apply: the merged text keeps every detail of every member."""
        return [m for m in self.merges if not m.lossy]

    def deferred_merges(self) -> list[MergeProposal]:
        return [m for m in self.merges if m.lossy]

    def empty(self) -> bool:
        return not (
            self.promotions or self.merges or self.supersedes or self.conflicts or self.prunes
        )


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


@no_gc()  # millions of acyclic objects (analyses, pairs, verdicts): rescans cost 4-5 CPU-s
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
    """Propose every change of the cycle; writes nothing (unless ``write_cache``: the vector
    and verdict caches). ``progress`` follows the embedding of MEMORY.md's entries (a model
    takes a while)."""
    settings = settings or consolidation_settings(load_config(ws))
    hermes = _is_hermes(ws)
    if hermes:  # its § entries are not markdown entries memcore may merge or forget
        steps = tuple(s for s in steps if s == "promote")
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
        warnings=list(doc.warnings),
    )
    if hermes:
        plan.warnings.append(HERMES_NOTE)
    if "promote" in steps:
        plan.promotions = _promotions(ws, now)
    entries = doc.entries
    sim_steps = {"merge", "reconcile"} & set(steps)
    if sim_steps and len(entries) > MAX_SIMILARITY_ENTRIES:
        plan.warnings.append(
            f"MEMORY.md has {len(entries)} entries; merge and reconcile are skipped above "
            f"{MAX_SIMILARITY_ENTRIES} (move topics into memory/<topic>.md pages)"
        )
        sim_steps = set()
    sim = dict(metas)
    gone: set[int] = set()
    protected: set[int] = set()
    if sim_steps and len(entries) > 1:
        _judge_steps(plan, settings, conn, write_cache, sim, gone, protected, progress)
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


HERMES_NOTE = (
    "a Hermes MEMORY.md (§ entries): only promotion runs here, appending entries within "
    "Hermes' limit; merge, reconcile, decay and forget are left to Hermes"
)


def _is_hermes(ws: Workspace) -> bool:
    from memcore.workspace.kinds import kind_of

    return kind_of(ws.root).name == "hermes"


def _judge_steps(
    plan: Plan,
    settings: ConsolidationSettings,
    conn: sqlite3.Connection | None,
    write_cache: bool,
    sim: dict[str, Meta],
    gone: set[int],
    protected: set[int],
    progress: Progress | None = None,
) -> None:
    """Candidates, verdicts, merges, supersessions and conflicts (see the module docstring)."""
    from memcore.dream import judging, merge, reconcile
    from memcore.judge.analysis import Analyzer
    from memcore.judge.analysis_cache import AnalysisCache

    entries, metas = plan.doc.entries, plan.metas
    views = [judging.view(e, metas[e.id]) for e in entries]
    texts = [v.text for v in views]
    analyzer = Analyzer.for_texts(texts)
    analyses = AnalysisCache(conn) if conn is not None and write_cache else None
    if analyses is not None:
        analyses.load(analyzer, texts)  # unchanged entries are not analysed again
    # the other entries are analysed in worker processes while they are embedded and searched
    analysed = analyzer.analyse_soon(texts)
    try:
        emb, vecs = _embed(texts, settings, conn, write_cache, progress)
        plan.backend = emb.id
        cands = _candidates(views, vecs, analyzer, emb, conn if write_cache else None)
    finally:
        analysed()
    plan.candidates = len(cands)
    judge = judging.make_judge(plan.ws, settings, emb, analyzer, texts, vecs)
    plan.judge = judge.judge_id
    plan.model = judge.model_name
    verdicts = judge.run([(views[c.i], views[c.j]) for c in cands], conn if write_cache else None)
    if analyses is not None:
        analyses.store(analyzer, texts)
    judged = []
    sims = {(c.i, c.j): c.sim for c in cands}
    for c, jd in zip(cands, verdicts, strict=True):
        if jd.verdict is None:
            plan.skipped.append({"a": views[c.i].id, "b": views[c.j].id, "reason": jd.reason})
            continue
        judged.append((c.i, c.j, jd))
    # Contradictions first: an entry in question is not merged in the same run (its merge
    # waits until the pair is settled), so a merge never hides a contradiction.
    busy: set[int] = set()
    if "reconcile" in plan.steps:
        sups, conflicts = reconcile.reconcile(judged, views, entries, metas, sims, busy, analyzer)
        index = {e.id: i for i, e in enumerate(entries)}
        plan.supersedes, plan.conflicts = sups, conflicts
        for s in sups:
            gone.add(index[s.older])
        for cp in conflicts:
            protected.update((index[cp.a], index[cp.b]))
    if "merge" in plan.steps:
        for cl in merge.clusters(views, judged, exclude=busy):
            d = merge.draft(cl, views, analyzer, judge.merge_text)
            if d is None:
                continue
            plan.merges.append(_merge_proposal(plan, d, sim))
            if d.check.ok:
                gone.update(d.absorbed)
            else:
                protected.update([d.keeper, *d.absorbed])


def _candidates(
    views: Sequence[Any], vecs: Any, analyzer: Any, emb: Any, conn: sqlite3.Connection | None
) -> list[Any]:
    """Candidate pairs, from the last run's when nothing they depend on changed."""
    from memcore.judge.candidate_cache import CandidateCache, candidates_key
    from memcore.judge.candidates import candidates
    from memcore.search.embeddings import cache_id

    if conn is None:
        return candidates(views, vecs, analyzer)
    cache = CandidateCache(conn)
    key = candidates_key(views, cache_id(emb), analyzer)
    found = cache.get(key)
    if found is None:
        found = candidates(views, vecs, analyzer)
        cache.put(key, found)
    return found


def _merge_proposal(plan: Plan, d: Any, sim: dict[str, Meta]) -> MergeProposal:
    entries, metas = plan.doc.entries, plan.metas
    keeper = entries[d.keeper]
    absorbed = [entries[a] for a in d.absorbed]
    km = sim[keeper.id]
    group = [metas[e.id] for e in absorbed]
    after = replace(
        km,
        importance=min(1.0, round(max([km.importance, *(m.importance for m in group)]) + 0.05, 6)),
        access_count=km.access_count + sum(m.access_count for m in group),
        last_accessed_at=max(
            (m.last_accessed_at for m in [km, *group] if m.last_accessed_at), default=None
        ),
    )
    new_text = None if d.text.strip() == keeper.text.strip() else d.text
    op = MergeOp(
        keeper.id,
        keeper.raw,
        [(e.id, e.raw) for e in absorbed],
        new_text,
        after,
        {e.id: metas[e.id] for e in [keeper, *absorbed]},
        d.reason,
    )
    if d.check.ok:
        sim[keeper.id] = after
    return MergeProposal(
        keeper.id,
        [e.id for e in absorbed],
        d.text,
        not d.check.ok,
        {entries[a].id: m for a, m in d.missing.items()},
        d.confidence,
        op,
        d.by_model,
        d.reason if d.check.ok else f"{d.reason} ({d.check.reason})",
    )


def _promotions(ws: Workspace, now: datetime) -> list[dict[str, Any]]:
    from memcore.promotion import promote
    from memcore.workspace.markdown import promoted_entry_id

    res = promote.preview(ws, now=now, mode_limit=True)  # what the run would take
    return [
        {"id": promoted_entry_id(c.key), "key": c.key, "snippet": c.snippet, "score": c.score}
        for c in res.candidates
    ]
