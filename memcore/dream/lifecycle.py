"""Decay and forget: pure decisions over entry metadata and an injected ``now``.

Decay: an entry not used for more than ``decay_days`` with importance above 0.05 loses 20% of
it (floor 0.05), at most once per consolidation interval, however often the cycle runs (the
stamp ``decayed_at`` says when it last decayed). Forget: idle past ``forget_days`` and below
``forget_below_importance``; or its type's retention has passed since creation; or confidence
below 0.3 with nothing specific in it. Pinned entries neither decay nor go.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from memcore.dream.settings import ConsolidationSettings
from memcore.judge.contradict import details
from memcore.recall.ledger import Meta
from memcore.workspace.clock import iso_ms, parse_iso

DECAY_FACTOR = 0.8
IMPORTANCE_FLOOR = 0.05
LOW_CONFIDENCE = 0.3


def days_between(later: datetime, earlier: datetime | None) -> float:
    if earlier is None:
        return 0.0
    return (later - earlier).total_seconds() / 86400.0


def decayed(meta: Meta, now: datetime, s: ConsolidationSettings) -> Meta | None:
    """The decayed metadata, or None when the entry does not decay now."""
    if meta.pinned or meta.importance <= IMPORTANCE_FLOOR:
        return None
    idle = days_between(now, parse_iso(meta.last_accessed_at) or parse_iso(meta.created_at))
    if idle <= s.decay_days:
        return None
    last = parse_iso(meta.decayed_at)
    if last is not None and now - last < timedelta(hours=s.interval_hours):
        return None
    new = max(IMPORTANCE_FLOOR, round(meta.importance * DECAY_FACTOR, 6))
    return replace(meta, importance=new, decayed_at=iso_ms(now))


@dataclass
class ForgetReason:
    code: str  # idle | retention | low_confidence
    text: str


def forget_reason(
    meta: Meta, text: str, now: datetime, s: ConsolidationSettings
) -> ForgetReason | None:
    """Why the entry should be archived now, or None. Pinned entries never are."""
    if meta.pinned:
        return None
    idle = days_between(now, parse_iso(meta.last_accessed_at) or parse_iso(meta.created_at))
    if idle > s.forget_days and meta.importance < s.forget_below_importance:
        return ForgetReason(
            "idle",
            f"not accessed for {int(idle)} days (> {s.forget_days:g}) and importance "
            f"{meta.importance:.2f} < {s.forget_below_importance:g}",
        )
    days = s.retention.get(meta.type)
    age = days_between(now, parse_iso(meta.created_at))
    if days is not None and age > days:
        return ForgetReason("retention", f"{meta.type} is kept {days} days; this one is {int(age)}")
    if meta.confidence < LOW_CONFIDENCE and not details(text):
        return ForgetReason(
            "low_confidence",
            f"confidence {meta.confidence:.2f} < {LOW_CONFIDENCE} and nothing specific in it",
        )
    return None


def age_days(meta: Meta, now: datetime) -> int:
    return int(days_between(now, parse_iso(meta.created_at)))
