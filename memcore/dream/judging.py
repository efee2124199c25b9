"""Which judge decides a dream run, and how its verdicts are asked for.

``[consolidation] judge``:

* ``"offline"``: :class:`memcore.judge.offline.OfflineJudge` (no model, no network,
  deterministic), with the run's embedder as a signal;
* ``"model"``: :class:`memcore.judge.model.ModelJudge` over the ``[llm]`` endpoint; the offline
  judge screens the candidates first and only pairs it does not find ``unrelated`` reach the
  model (a bounded number of calls). A pair the model skips (timeout, garbage, left out) is
  reported with its reason, changes nothing and is asked again next run;
* unset: ``model`` when ``[llm]`` names a model endpoint, else ``offline``.

Verdicts go through :func:`memcore.judge.protocol.judge_cached` (memcore.sqlite), so a second
run with nothing new makes no model call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memcore.dream.settings import ConsolidationSettings
from memcore.errors import ConfigError
from memcore.judge.analysis import Analyzer
from memcore.judge.offline import OfflineJudge
from memcore.judge.protocol import EntryView, Judge, Judgement, Pair, Verdict, judge_cached
from memcore.recall.ledger import Meta
from memcore.workspace.config import load_config
from memcore.workspace.core import Workspace
from memcore.workspace.entries import Entry


def view(e: Entry, m: Meta) -> EntryView:
    """What a judge sees of one entry."""
    return EntryView(e.id, e.text, m.type, m.scope, m.created_at, m.pinned, m.importance)


@dataclass
class RunJudge:
    """The judge of one run: ``run`` returns one judgement per pair (cached when a connection
    is given); ``merge_text`` writes a merged text with the model (None offline)."""

    offline: OfflineJudge
    model: Judge | None = None
    llm: Any = None

    @property
    def judge_id(self) -> str:
        return self.model.judge_id if self.model is not None else self.offline.judge_id

    @property
    def model_name(self) -> str | None:
        return getattr(self.llm, "name", None) if self.llm is not None else None

    def run(self, pairs: Sequence[Pair], conn: sqlite3.Connection | None) -> list[Judgement]:
        first = judge_cached(self.offline, pairs, conn)
        if self.model is None:
            return first
        ask = [i for i, j in enumerate(first) if j.verdict is not Verdict.UNRELATED]
        out = list(first)
        if ask:
            for i, j in zip(
                ask, judge_cached(self.model, [pairs[i] for i in ask], conn), strict=True
            ):
                out[i] = j
        return out

    def merge_text(self, keeper: str, others: Sequence[str]) -> str | None:
        if self.llm is None:
            return None
        from memcore.judge.model_merge import model_text

        return model_text(self.llm, keeper, others)

    @property
    def has_model(self) -> bool:
        return self.llm is not None


def make_judge(
    ws: Workspace,
    settings: ConsolidationSettings,
    embedder: Any,
    analyzer: Analyzer,
    texts: Sequence[str],
    vecs: Any,
) -> RunJudge:
    """The configured judge (see the module docstring); ConfigError when ``judge = "model"``
    and ``[llm]`` names no model."""
    offline = OfflineJudge(embedder, analyzer)
    offline.remember(list(texts), vecs)
    choice = settings.judge
    if choice == "offline":
        return RunJudge(offline)
    from memcore.judge.llm import llm_settings, make_llm
    from memcore.judge.model import ModelJudge

    cfg = load_config(ws)
    configured = llm_settings(cfg).provider != "extractive"
    if not configured:
        if choice == "model":
            raise ConfigError(
                f"{cfg.where('consolidation', 'judge')} = 'model' needs a model: set [llm] "
                "base_url and model (or judge = 'offline')"
            )
        return RunJudge(offline)
    llm = make_llm(cfg)
    return RunJudge(offline, ModelJudge(llm, analyzer=analyzer), llm)
