"""Pure scoring of recall entries: four signals, a weighted score, the gates, the ranking.

Every function takes ``now`` from its caller; nothing here reads the clock or a file.
The formulas are the ones OpenClaw's promotion uses, so both tools score a store alike.

One gate is memcore's own: ``min_relevance``, the mean hit score an entry needs whatever its
counts. The weighted score alone lets frequency, diversity and recency carry an entry its
searches barely matched: at 10 recalls from 5 queries, a mean relevance of 0.29 reaches
core's 0.75 (0.35 + 0.15 + 0.15 + 0.35 * 0.29). Search scores are calibrated (about the share
of hits at that score that answer the query), so such an entry is one most of its searches
brought up as a side hit: a broad line ("clients this winter: ...") that many queries graze.
The gate keeps promotion for lines that answer their queries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from memcore.recall.entries import is_promoted, unique_user_queries
from memcore.workspace.clock import parse_iso
from memcore.workspace.config import (
    DEFAULT_HALF_LIFE_DAYS,
    DEFAULT_MIN_RELEVANCE,
    DEFAULT_WEIGHTS,
    DreamingSettings,
)
from memcore.workspace.core import is_daily_note_path

SIGNALS = ("frequency", "relevance", "diversity", "recency")
_LN11 = math.log(11)
_DAY_S = 86400.0


def _clamp(x: float) -> float:
    if not math.isfinite(x):
        return 0.0
    return 0.0 if x < 0 else 1.0 if x > 1 else x


def frequency(recall_count: int) -> float:
    return _clamp(math.log1p(max(0, recall_count)) / _LN11)


def relevance(total_score: float, recall_count: int) -> float:
    return _clamp(total_score / max(1, recall_count))


def diversity(unique_queries: int) -> float:
    return _clamp(unique_queries / 5)


def recency(age_days: float, half_life_days: float = DEFAULT_HALF_LIFE_DAYS) -> float:
    if not math.isfinite(age_days) or age_days < 0 or half_life_days <= 0:
        return 1.0
    return _clamp(math.exp(-(math.log(2) / half_life_days) * age_days))


def normalize_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    """Merge over the defaults, clamp each at 0, divide by the sum (defaults if the sum is 0)."""
    merged = dict(DEFAULT_WEIGHTS)
    for k, v in (weights or {}).items():
        if k in merged and isinstance(v, int | float) and math.isfinite(v):
            merged[k] = max(0.0, float(v))
    total = sum(merged.values())
    if total <= 0:
        merged, total = dict(DEFAULT_WEIGHTS), sum(DEFAULT_WEIGHTS.values())
    return {k: v / total for k, v in merged.items()}


@dataclass(frozen=True)
class Thresholds:
    """The gates and scoring knobs of one ranking."""

    min_score: float = 0.75
    min_recall_count: int = 3
    min_unique_queries: int = 2
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    min_relevance: float = DEFAULT_MIN_RELEVANCE

    @classmethod
    def from_settings(cls, s: DreamingSettings, **overrides: Any) -> Thresholds:
        """Thresholds of the settings; a non-None override wins (CLI flags)."""
        base = cls(
            min_score=s.min_score,
            min_recall_count=s.min_recall_count,
            min_unique_queries=s.min_unique_queries,
            half_life_days=s.recency_half_life_days,
            weights=s.weights,
            min_relevance=s.min_relevance,
        )
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})

    def sanitized(self) -> Thresholds:
        """OpenClaw's sanitisation: out-of-range values fall back to the defaults."""
        ms = self.min_score
        ms = ms if isinstance(ms, int | float) and math.isfinite(ms) and 0 <= ms <= 1 else 0.75
        rc = _floor_or(self.min_recall_count, 3)
        uq = _floor_or(self.min_unique_queries, 2)
        hl = self.half_life_days
        hl = (
            hl
            if isinstance(hl, int | float) and math.isfinite(hl) and hl > 0
            else DEFAULT_HALF_LIFE_DAYS
        )
        mr = self.min_relevance
        mr = (
            mr
            if isinstance(mr, int | float) and math.isfinite(mr) and 0 <= mr <= 1
            else DEFAULT_MIN_RELEVANCE
        )
        return Thresholds(float(ms), rc, uq, float(hl), normalize_weights(self.weights), float(mr))


def _floor_or(value: Any, default: int) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        return default
    return math.floor(value)


@dataclass
class Candidate:
    """A scored recall entry (the fields of OpenClaw's candidate object)."""

    key: str
    path: str
    start_line: int
    end_line: int
    snippet: str
    recall_count: int
    avg_score: float
    max_score: float
    unique_queries: int
    first_recalled_at: str
    last_recalled_at: str
    age_days: float
    score: float
    raw_score: float
    components: dict[str, float]
    promoted_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "source": "memory",
            "snippet": self.snippet,
            "recallCount": self.recall_count,
            "avgScore": round(self.avg_score, 6),
            "maxScore": round(self.max_score, 6),
            "uniqueQueries": self.unique_queries,
            "firstRecalledAt": self.first_recalled_at,
            "lastRecalledAt": self.last_recalled_at,
            "ageDays": round(self.age_days, 4),
            "score": round(self.score, 6),
            "components": {k: round(v, 6) for k, v in self.components.items()},
        }
        if self.promoted_at:
            out["promotedAt"] = self.promoted_at
        return out


def unique_queries(entry: Mapping[str, Any]) -> int:
    """Distinct queries of an entry that count toward diversity: ``uniqueQueries`` when
    precomputed, else its ``userQueryHashes`` (interactive searches; see
    entries.unique_user_queries), else its ``queryHashes`` (entries OpenClaw wrote)."""
    if "uniqueQueries" in entry:
        return int(entry["uniqueQueries"])
    return unique_user_queries(entry)


def score_entry(entry: Mapping[str, Any], now: datetime, th: Thresholds) -> Candidate:
    """Components and score of one (normalised) store entry; ``th`` must be sanitised."""
    count = int(entry.get("recallCount") or 0)
    total = float(entry.get("totalScore") or 0.0)
    uq = unique_queries(entry)
    last = parse_iso(entry.get("lastRecalledAt"))
    age = max(0.0, (now - last).total_seconds() / _DAY_S) if last is not None else 0.0
    comps = {
        "frequency": frequency(count),
        "relevance": relevance(total, count),
        "diversity": diversity(uq),
        "recency": recency(age, th.half_life_days),
    }
    w = th.weights
    raw = sum(w[k] * comps[k] for k in SIGNALS)
    return Candidate(
        key=entry["key"],
        path=entry["path"],
        start_line=int(entry["startLine"]),
        end_line=int(entry["endLine"]),
        snippet=entry.get("snippet") or "",
        recall_count=count,
        avg_score=comps["relevance"],
        max_score=float(entry.get("maxScore") or 0.0),
        unique_queries=uq,
        first_recalled_at=entry.get("firstRecalledAt") or "",
        last_recalled_at=entry.get("lastRecalledAt") or "",
        age_days=age,
        score=_clamp(raw),
        raw_score=raw,
        components=comps,
        promoted_at=entry["promotedAt"] if is_promoted(entry) else None,
    )


@dataclass(frozen=True)
class GateCheck:
    name: str
    passed: bool
    actual: float
    required: float

    @property
    def margin(self) -> float:
        """How far above (positive) or below (negative) the requirement."""
        return self.actual - self.required


def gate_checks(c: Candidate, th: Thresholds) -> list[GateCheck]:
    """Every gate in OpenClaw's order: recall count, unique queries, then memcore's mean
    relevance, then the score."""
    return [
        GateCheck(
            "recallCount",
            c.recall_count >= th.min_recall_count and c.recall_count > 0,
            c.recall_count,
            th.min_recall_count,
        ),
        GateCheck(
            "uniqueQueries",
            c.unique_queries >= th.min_unique_queries,
            c.unique_queries,
            th.min_unique_queries,
        ),
        GateCheck(
            "relevance",
            c.avg_score >= th.min_relevance,
            round(c.avg_score, 6),
            th.min_relevance,
        ),
        GateCheck("score", c.raw_score >= th.min_score, round(c.raw_score, 6), th.min_score),
    ]


def first_failed_gate(c: Candidate, th: Thresholds) -> str | None:
    for g in gate_checks(c, th):
        if not g.passed:
            return g.name
    return None


def is_eligible(entry: Mapping[str, Any], include_promoted: bool = False) -> bool:
    return (
        entry.get("source") == "memory"
        and is_daily_note_path(str(entry.get("path", "")))
        and (include_promoted or not is_promoted(entry))
    )


def rank(
    entries: Iterable[Mapping[str, Any]],
    now: datetime,
    th: Thresholds,
    *,
    limit: int | None = None,
    include_promoted: bool = False,
) -> list[Candidate]:
    """Candidates passing every gate, sorted by score desc, recalls desc, path asc."""
    th = th.sanitized()
    out: list[Candidate] = []
    for e in entries:
        if not is_eligible(e, include_promoted):
            continue
        count = e.get("recallCount") or 0
        if count <= 0 or count < th.min_recall_count:
            continue
        if unique_queries(e) < th.min_unique_queries:
            continue
        c = score_entry(e, now, th)
        if c.avg_score < th.min_relevance or c.raw_score < th.min_score:
            continue
        out.append(c)
    out.sort(key=lambda c: (-c.score, -c.recall_count, c.path))
    if limit is not None:
        out = out[: max(0, int(limit))]
    return out


def passes_gates(entry: Mapping[str, Any], now: datetime, th: Thresholds) -> bool:
    """Whether one unpromoted entry would be a candidate now (used to protect it from the cap)."""
    return bool(rank([entry], now, th))


def cap_protection(
    settings: DreamingSettings, now: datetime
) -> Callable[[Mapping[str, Any]], bool]:
    """What a recording's entry cap never drops: an entry that passes every gate of
    ``settings`` now (``passes_gates`` with the sanitised thresholds)."""
    th = Thresholds.from_settings(settings).sanitized()
    return lambda entry: passes_gates(entry, now, th)


def min_relevance_needed(
    th: Thresholds, recalls: int, unique_queries: int, age_days: float = 0.0
) -> float:
    """Mean relevance a candidate needs to reach min_score at these counts and the
    min_relevance gate (may exceed 1)."""
    th = th.sanitized()
    w = th.weights
    rest = (
        w["frequency"] * frequency(recalls)
        + w["diversity"] * diversity(unique_queries)
        + w["recency"] * recency(age_days, th.half_life_days)
    )
    if w["relevance"] <= 0:
        return th.min_relevance if rest >= th.min_score else math.inf
    return max(th.min_relevance, (th.min_score - rest) / w["relevance"])


def feasibility(th: Thresholds) -> dict[str, Any]:
    """Can the gates be met at all? At the minimum counts, and what counts would make it."""
    th = th.sanitized()
    rc, uq = max(1, th.min_recall_count), th.min_unique_queries
    needed = min_relevance_needed(th, rc, uq)
    result: dict[str, Any] = {
        "feasible": needed <= 1.0,
        "minRelevanceAtMinimumCounts": round(needed, 3),
        "minRecallCount": rc,
        "minUniqueQueries": uq,
    }
    if needed > 1.0:
        for r in range(rc, 40):
            for q in range(uq, min(r, 32) + 1):
                if min_relevance_needed(th, r, q) <= 0.95:
                    result["reachableAt"] = {
                        "recallCount": r,
                        "uniqueQueries": q,
                        "minRelevance": round(min_relevance_needed(th, r, q), 3),
                    }
                    return result
    return result
