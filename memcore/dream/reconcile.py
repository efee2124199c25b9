"""Reconcile: what the judge's ``supersedes`` and ``conflict`` verdicts become.

* ``supersedes`` (checked by :func:`memcore.judge.validate.check_pair`): the newer entry stays
  and the older one is archived with the lineage ``superseded by <id>`` (in the archive and the
  journal). Its own details are not moved into the newer entry: offline, memcore cannot tell
  whether they are still true. Unattended runs apply only the clearest supersessions (judge
  confidence >= ``AUTO_SUPERSEDE``: the newer entry names the old value, "moved from X to
  Y"); the others wait for review, suggesting the newer one. When the older entry is pinned,
  both stay and the pair waits for review, suggesting to keep both.
* ``conflict``: waits for review with the suggestion "newer wins unless the older is pinned"
  (the pinned one is never suggested for removal; with both pinned: keep both).
* A conflict of two entries from one date has no newer side: it suggests keeping both until
  the user knows which is current (archiving either could remove the true one).
* Uncertain items (judge confidence below ``SUGGEST_MIN``: a one-word swap, a negation, change
  wording that names no old value) suggest keeping both, and say why: accepting every
  suggestion never archives a fact that may still be true.

Reconcile runs before the merges: an entry it uses is not merged in the same run (the merge
waits until the pair is settled), and each entry takes part in one proposal at most, most
confident first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memcore.dream.apply import RemoveOp
from memcore.judge.analysis import Analyzer
from memcore.judge.contradict import topic
from memcore.judge.protocol import EntryView, Judgement, Verdict
from memcore.judge.validate import APPLY, REVIEW, check_pair
from memcore.recall.ledger import Meta
from memcore.workspace.entries import Entry

SUGGEST_NEWER = "newer wins unless the older is pinned"
SUGGEST_BOTH = (
    "not sure they contradict (the evidence is wording, not one value replaced by another): "
    "keep both unless you know one is out of date"
)
SUGGEST_UNDATED = (
    "both written the same day, so nothing tells which is current: keep both until you know"
)
#: Judge confidence from which a supersession is applied without review.
AUTO_SUPERSEDE = 0.85
#: Below this confidence a review item suggests keeping both entries: answering "yes" to an
#: uncertain suggestion must never archive a fact that is still true.
SUGGEST_MIN = 0.7


@dataclass
class ConflictProposal:
    """A pair waiting for review. ``a`` is the suggested winner (``suggested`` "a"), or, when
    no entry may go (a pinned older entry), ``suggested`` is "both"."""

    a: str
    b: str
    topic: str
    reason: str
    similarity: float
    a_raw: str
    b_raw: str
    a_text: str
    b_text: str
    verdict: str = "conflict"
    confidence: float = 0.0
    suggested: str = "a"


@dataclass
class SupersedeProposal:
    """The newer entry stays; the older one is archived (``op``)."""

    newer: str
    older: str
    reason: str
    confidence: float
    op: RemoveOp


def _newer_of(j: Judgement, a: EntryView, b: EntryView) -> tuple[EntryView, EntryView]:
    """(newer, older): the judge's word, else the later date, else file order."""
    if j.newer == a.id:
        return a, b
    if j.newer == b.id:
        return b, a
    return (b, a) if b.created_at[:10] >= a.created_at[:10] else (a, b)


def reconcile(
    judged: Sequence[tuple[int, int, Judgement]],
    views: Sequence[EntryView],
    entries: Sequence[Entry],
    metas: dict[str, Meta],
    sims: dict[tuple[int, int], float],
    busy: set[int],
    analyzer: Analyzer,
) -> tuple[list[SupersedeProposal], list[ConflictProposal]]:
    """Supersessions to apply and pairs to review, from the contradiction verdicts; entries in
    ``busy`` are skipped, and ``busy`` gains every entry used here."""
    todo = [
        (i, j, jd) for i, j, jd in judged if jd.verdict in (Verdict.SUPERSEDES, Verdict.CONFLICT)
    ]
    todo.sort(key=lambda p: (-p[2].confidence, p[0], p[1]))
    sups: list[SupersedeProposal] = []
    conflicts: list[ConflictProposal] = []
    for i, j, jd in todo:
        if i in busy or j in busy:
            continue
        a, b = views[i], views[j]
        check = check_pair(jd, a, b, analyzer)
        if check.action not in (APPLY, REVIEW):
            continue
        newer, older = _newer_of(jd, a, b)
        ni, oi = (i, j) if newer is a else (j, i)
        if (
            jd.verdict is Verdict.SUPERSEDES
            and check.action == APPLY
            and jd.confidence >= AUTO_SUPERSEDE
        ):
            e = entries[oi]
            why = f"superseded by {newer.id}: {jd.reason}"
            sups.append(
                SupersedeProposal(
                    newer.id,
                    older.id,
                    jd.reason,
                    jd.confidence,
                    RemoveOp("reconcile", older.id, e.raw, why, metas.get(older.id)),
                )
            )
            busy.update((i, j))
            continue
        # review: the suggested winner first
        win, lose = (ni, oi)
        suggested = "a"
        unsure = jd.confidence < SUGGEST_MIN
        undated = jd.verdict is Verdict.CONFLICT and jd.newer is None
        if (older.pinned and newer.pinned) or unsure or undated:
            suggested = "both"
        elif older.pinned:
            win, lose = (oi, ni)
            suggested = "both" if jd.verdict is Verdict.SUPERSEDES else "a"
        ew, el = entries[win], entries[lose]
        if jd.verdict is Verdict.CONFLICT:
            advice = SUGGEST_BOTH if unsure else SUGGEST_UNDATED if undated else SUGGEST_NEWER
            reason = f"{jd.reason}; {advice}"
        else:
            reason = jd.reason if check.action == APPLY else f"{jd.reason} ({check.reason})"
            if unsure:
                reason = f"{reason}; {SUGGEST_BOTH}"
        conflicts.append(
            ConflictProposal(
                ew.id,
                el.id,
                topic(ew.text, el.text),
                reason,
                sims.get((min(i, j), max(i, j)), 0.0),
                ew.raw,
                el.raw,
                ew.text,
                el.text,
                jd.verdict.value if jd.verdict else "conflict",
                jd.confidence,
                suggested,
            )
        )
        busy.update((i, j))
    return sups, conflicts
