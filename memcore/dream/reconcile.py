"""Reconcile: pairs of entries on one subject that state opposite facts.

Candidates are the similar pairs the merge step found (above the backend's conflict
threshold, within one scope); each entry is compared with its few nearest neighbours only,
so the work stays bounded. The likely winner (listed as A) is the pinned one, else the newer,
else the more confident.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memcore.judge.contradict import contradiction, topic
from memcore.recall.ledger import Meta
from memcore.workspace.entries import Entry

CONFLICT_NEIGHBOURS = 4


@dataclass
class ConflictProposal:
    a: str  # the likely winner (newer, then more confident)
    b: str
    topic: str
    reason: str
    similarity: float
    a_raw: str
    b_raw: str
    a_text: str
    b_text: str


def find_conflicts(
    entries: Sequence[Entry],
    metas: dict[str, Meta],
    pairs: Sequence[tuple[int, int, float]],
    gone: dict[int, int],
    cthr: float,
) -> list[ConflictProposal]:
    """Conflicts among ``entries`` (absorbed ones stand for their keeper via ``gone``)."""
    seen: set[frozenset[int]] = set()
    out: list[ConflictProposal] = []
    checked: dict[int, int] = {}
    for i, j, s in sorted(pairs, key=lambda p: -p[2]):
        if s < cthr:
            continue
        # Each entry is compared with its few nearest neighbours only (bounded work).
        if checked.get(i, 0) >= CONFLICT_NEIGHBOURS and checked.get(j, 0) >= CONFLICT_NEIGHBOURS:
            continue
        checked[i] = checked.get(i, 0) + 1
        checked[j] = checked.get(j, 0) + 1
        i, j = gone.get(i, i), gone.get(j, j)
        key = frozenset((i, j))
        if i == j or key in seen:
            continue
        a, b = entries[i], entries[j]
        ma, mb = metas[a.id], metas[b.id]
        if ma.scope != mb.scope:
            continue
        why = contradiction(a.text, b.text)
        if why is None:
            continue
        seen.add(key)
        # Likely winner first: pinned, then newer, then more confident.
        rank_a = (ma.pinned, ma.created_at, ma.confidence)
        rank_b = (mb.pinned, mb.created_at, mb.confidence)
        if rank_b > rank_a:
            a, b = b, a
        out.append(
            ConflictProposal(
                a.id, b.id, topic(a.text, b.text), why, s, a.raw, b.raw, a.text, b.text
            )
        )
    return out
