"""Host-side checks of every judge's proposal (offline, model, or the agent over MCP).

Nothing a judge proposes is applied before it passes here:

* **scope wall**: entries of different scopes are never merged and never supersede one
  another (a project memory is not a global one);
* **details kept**: a merged text keeps every detail of every member (numbers with units,
  versions, names, paths, URLs, identifiers, code, times); a merge that drops one is
  rejected and the cluster waits for review;
* **pinned entries are never removed**: a merge may keep a pinned entry as its keeper but
  never absorb one; a ``supersedes`` whose older entry is pinned is not applied: both stay
  and the pair goes to the review queue.

The outcome is a :class:`Check`: ``apply`` (safe without a human), ``review`` (queue it,
with ``reason``) or ``reject`` (the proposal is wrong: drop it, with ``reason``)::

    check = check_pair(judgement, a, b)          # a verdict on one pair
    check = check_merge(members, text, keeper)   # a merged text for a same cluster
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memcore.judge.analysis import Analysis, Analyzer, Value
from memcore.judge.protocol import EntryView, Judgement, Verdict

APPLY, REVIEW, REJECT = "apply", "review", "reject"

_DEFAULT = Analyzer()


@dataclass(frozen=True)
class Check:
    """What to do with a proposal: ``action`` is apply, review or reject."""

    action: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.action == APPLY


def _squash(s: str) -> str:
    return "".join(ch for ch in s.casefold() if ch.isalnum() or ch in "./:@#$%°<>*+=_-")


def _kept(v: Value, merged: Analysis, squashed: str) -> bool:
    if any(w.kind == v.kind and w.norm == v.norm for w in merged.values):
        return True
    raw = _squash(v.raw)
    return bool(raw) and raw in squashed


def missing_details(
    sources: Sequence[str], merged: str, analyzer: Analyzer | None = None
) -> list[str]:
    """The details (as written) of any of ``sources`` that ``merged`` no longer holds."""
    an = analyzer or _DEFAULT
    m = an.analyse(merged)
    sq = _squash(merged)
    out: list[str] = []
    for src in sources:
        for v in an.analyse(src).values:
            if not _kept(v, m, sq) and v.raw not in out:
                out.append(v.raw)
    return out


def check_merge(
    members: Sequence[EntryView],
    text: str | None,
    keeper: str | None = None,
    analyzer: Analyzer | None = None,
) -> Check:
    """A merge of ``members`` into one entry with ``text``, kept under id ``keeper`` (the
    others are removed)."""
    if len(members) < 2:
        return Check(REJECT, "a merge needs two entries or more")
    if len({m.scope for m in members}) > 1:
        return Check(REJECT, "members of different scopes are never merged")
    ids = [m.id for m in members]
    if keeper is not None and keeper not in ids:
        return Check(REJECT, f"keeper {keeper!r} is not a member of the merge")
    pinned = [m.id for m in members if m.pinned]
    if len(pinned) > 1:
        return Check(REVIEW, "more than one member is pinned: a merge would remove one")
    if pinned and keeper is not None and keeper != pinned[0]:
        return Check(REJECT, f"the pinned entry {pinned[0]} would be removed")
    if text is None or not text.strip():
        return Check(REVIEW, "no merged text could be written without losing a detail")
    lost = missing_details([m.text for m in members], text, analyzer)
    if lost:
        return Check(REVIEW, "the merged text drops " + ", ".join(lost[:5]))
    return Check(APPLY)


def check_pair(
    judgement: Judgement, a: EntryView, b: EntryView, analyzer: Analyzer | None = None
) -> Check:
    """One judge's verdict on the pair (a, b): apply it, queue it for review, or reject it."""
    v = judgement.verdict
    if v is None:
        return Check(REJECT, judgement.reason or "skipped")
    if a.scope != b.scope and v in (Verdict.SAME, Verdict.SUPERSEDES, Verdict.CONFLICT):
        return Check(REJECT, f"{v.value} across scopes ({a.scope} / {b.scope}) is never applied")
    if v is Verdict.SAME:
        keeper = next((e.id for e in (a, b) if e.pinned), None)
        text = judgement.merged_text
        if text is None:
            return Check(REVIEW, "same, but no merged text was proposed")
        return check_merge([a, b], text, keeper, analyzer)
    if v is Verdict.SUPERSEDES:
        if judgement.newer not in (a.id, b.id):
            return Check(REJECT, "supersedes without naming which entry is newer")
        older = a if judgement.newer == b.id else b
        if older.pinned:
            return Check(REVIEW, f"the superseded entry {older.id} is pinned: both stay")
        return Check(APPLY)
    if v is Verdict.CONFLICT:
        return Check(REVIEW, "conflict: newer wins unless the older is pinned")
    return Check(APPLY)  # related / unrelated: nothing changes
