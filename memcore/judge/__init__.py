"""Judgement: which entries of a memory state the same fact, which replace or contradict one
another, and which only look alike.

The pipeline a consolidation run calls (all pure functions of their inputs, no file writes;
``memcore.dream`` applies the outcome as one journaled run)::

    from memcore.judge.analysis import Analyzer
    from memcore.judge.candidates import candidates
    from memcore.judge.merge_text import choose_keeper
    from memcore.judge.offline import OfflineJudge
    from memcore.judge.protocol import EntryView, Verdict, judge_cached
    from memcore.judge.validate import check_merge, check_pair

    views = [EntryView(e.id, e.text, m.type, m.scope, m.created_at, m.pinned, m.importance)
             for e, m in entries_with_meta]                # Entry + ledger Meta
    analyzer = Analyzer.for_texts(v.text for v in views)   # aliases and names of this memory
    vecs = embed_cached(embedder, [v.text for v in views], cache)   # memcore.search
    cands = candidates(views, vecs, analyzer)              # same-scope pairs, recall first
    judge = OfflineJudge(embedder, analyzer)               # or ModelJudge(make_llm(cfg))
    judge.remember([v.text for v in views], vecs)          # reuse the vectors (offline only)
    pairs = [(views[c.i], views[c.j]) for c in cands]
    judgements = judge_cached(judge, pairs, conn)          # cached by (pair hash, judge id)
    for (a, b), j in zip(pairs, judgements):
        check = check_pair(j, a, b, analyzer)              # apply / review / reject
        ...

* ``same``: group the pairs into clusters (never across scopes; the validator refuses it),
  ``keeper = choose_keeper(members)``, ``text = j.merged_text or merge_text(keeper.text,
  [others...])``; ``check_merge(members, text, keeper.id)`` says ``apply`` (safe for
  ``--auto``: every detail kept) or ``review`` (no lossless text, or two pinned members).
* ``supersedes``: ``j.newer`` stays, the other is archived with a "superseded by" lineage;
  ``check_pair`` says ``review`` when the older one is pinned (both stay).
* ``conflict``: always ``review`` ("newer wins unless the older is pinned"; ``j.newer`` is
  set when dates tell).
* ``related`` / ``unrelated``: nothing changes.
* A judgement with ``verdict`` None was skipped (model timeout, garbage, missing item): its
  ``reason`` says why; it is not cached, so the next run asks again.

``Analysis.to_json()`` is the per-entry analysis to show a reviewer or an agent deciding
over MCP; agent decisions go through the same ``check_pair`` / ``check_merge``.

Older modules here: ``contradict`` (the surface rules the threshold-based merge planning of
``memcore.dream.merge`` still uses), ``llm`` (the model protocol and the OpenAI-compatible
adapter), ``model_merge`` and ``extractive``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.judge.analysis import Analysis, Analyzer, analyse
    from memcore.judge.candidates import Candidate
    from memcore.judge.contradict import (
        contradiction,
        details,
        topic,
        unique_content,
        unique_details,
    )
    from memcore.judge.extractive import answer
    from memcore.judge.llm import (
        LLM,
        Completion,
        ExtractiveLLM,
        OpenAICompatibleLLM,
        Usage,
        llm_settings,
        make_llm,
    )
    from memcore.judge.merge_text import choose_keeper
    from memcore.judge.model import ModelJudge
    from memcore.judge.model_merge import configured_model, model_text
    from memcore.judge.neighbours import topk_neighbours
    from memcore.judge.offline import OfflineJudge
    from memcore.judge.protocol import (
        EntryView,
        Judge,
        Judgement,
        Verdict,
        VerdictCache,
        judge_cached,
        pair_key,
    )
    from memcore.judge.validate import Check, check_merge, check_pair, missing_details

__all__ = [
    "LLM",
    "Analysis",
    "Analyzer",
    "Candidate",
    "Check",
    "Completion",
    "EntryView",
    "ExtractiveLLM",
    "Judge",
    "Judgement",
    "ModelJudge",
    "OfflineJudge",
    "OpenAICompatibleLLM",
    "Usage",
    "Verdict",
    "VerdictCache",
    "analyse",
    "answer",
    "check_merge",
    "check_pair",
    "choose_keeper",
    "configured_model",
    "contradiction",
    "details",
    "judge_cached",
    "llm_settings",
    "make_llm",
    "missing_details",
    "model_text",
    "pair_key",
    "topic",
    "topk_neighbours",
    "unique_content",
    "unique_details",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "analysis": ("Analysis", "Analyzer", "analyse"),
        "candidates": ("Candidate",),
        "contradict": ("contradiction", "details", "topic", "unique_content", "unique_details"),
        "extractive": ("answer",),
        "llm": (
            "LLM",
            "Completion",
            "ExtractiveLLM",
            "OpenAICompatibleLLM",
            "Usage",
            "llm_settings",
            "make_llm",
        ),
        "merge_text": ("choose_keeper",),
        "model": ("ModelJudge",),
        "model_merge": ("configured_model", "model_text"),
        "neighbours": ("topk_neighbours",),
        "offline": ("OfflineJudge",),
        "protocol": (
            "EntryView",
            "Judge",
            "Judgement",
            "Verdict",
            "VerdictCache",
            "judge_cached",
            "pair_key",
        ),
        "validate": ("Check", "check_merge", "check_pair", "missing_details"),
    },
)
