"""Decay and forget: pure functions of an entry's own dates, its metadata and an injected ``now``.

Decay is not something a run *does* to an entry; it is what an entry's importance *is* on a
date. The ledger keeps the importance a human set (``memcore memory set``), a promotion gave or a
merge raised (the *base*); the importance that counts on ``now`` is::

    idle      = days from the last access (else the creation) to now
    effective = base                                             if pinned or idle <= decay_days
              = max(0.05, base * 0.8 ** ((idle - decay_days) / decay_days))   otherwise
                (a base already at or below 0.05 stays as it is)

so an entry keeps its importance for ``decay_days`` after its last use and then loses 20% per
further ``decay_days``. Nothing is stored by the decay step: running the cycle every hour, every
day or once a month gives the same importance, and therefore the same forgets and the same
MEMORY.md, on the same date. A new access restores the base.

Forget: its type's retention has passed since creation; or idle past ``forget_days`` and an
effective importance below ``forget_below_importance``; or confidence
below 0.3 with nothing specific in it. Pinned entries neither decay nor go.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from memcore.dream.settings import ConsolidationSettings
from memcore.judge.contradict import details
from memcore.recall.ledger import Meta
from memcore.workspace.clock import parse_iso

DECAY_FACTOR = 0.8
IMPORTANCE_FLOOR = 0.05
LOW_CONFIDENCE = 0.3


def days_between(later: datetime, earlier: datetime | None) -> float:
    if earlier is None:
        return 0.0
    return (later - earlier).total_seconds() / 86400.0


def idle_days(meta: Meta, now: datetime) -> float:
    """Days since the entry was last used (its creation when it never was); never negative."""
    last = parse_iso(meta.last_accessed_at) or parse_iso(meta.created_at)
    return max(0.0, days_between(now, last))


def importance_at(meta: Meta, now: datetime, s: ConsolidationSettings) -> float:
    """The entry's effective importance on ``now`` (see the module docstring): a pure function
    of its base importance, its dates and the settings."""
    base = meta.importance
    if meta.pinned or base <= IMPORTANCE_FLOOR:
        return base
    over = idle_days(meta, now) - s.decay_days
    if over <= 0:
        return base
    factor: float = DECAY_FACTOR ** (over / s.decay_days)
    return max(IMPORTANCE_FLOOR, round(base * factor, 6))


def decayed(meta: Meta, now: datetime, s: ConsolidationSettings) -> Meta | None:
    """The metadata as it stands on ``now`` when decay has lowered its importance, else None
    (for the report; the ledger keeps the base)."""
    eff = importance_at(meta, now, s)
    if eff >= meta.importance:
        return None
    return replace(meta, importance=eff)


@dataclass
class ForgetReason:
    code: str  # idle | retention | low_confidence
    text: str


def forget_reason(
    meta: Meta, text: str, now: datetime, s: ConsolidationSettings
) -> ForgetReason | None:
    """Why the entry should be archived on ``now``, or None. Pinned entries never are.
    ``meta.importance`` is the base; the decayed importance is computed here."""
    if meta.pinned:
        return None
    days = s.retention.get(meta.type)
    age = days_between(now, parse_iso(meta.created_at))
    if days is not None and age > days:
        return ForgetReason("retention", f"{meta.type} is kept {days} days; this one is {int(age)}")
    idle = idle_days(meta, now)
    eff = importance_at(meta, now, s)
    if idle > s.forget_days and eff < s.forget_below_importance:
        return ForgetReason(
            "idle",
            f"not accessed for {int(idle)} days (> {s.forget_days:g}) and importance "
            f"{eff:.2f} < {s.forget_below_importance:g}",
        )
    if meta.confidence < LOW_CONFIDENCE and not details(text):
        return ForgetReason(
            "low_confidence",
            f"confidence {meta.confidence:.2f} < {LOW_CONFIDENCE} and nothing specific in it",
        )
    return None


def age_days(meta: Meta, now: datetime) -> int:
    return int(days_between(now, parse_iso(meta.created_at)))
