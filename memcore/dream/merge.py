"""Merge clusters from ``same`` verdicts: who joins whom, and the merged entry's text.

Pure functions of their inputs. A cluster grows from the judge's ``same`` pairs, most confident
first, and never transitively past a disagreement: two entries join only when no pair of the
joined cluster was judged anything but ``same`` (a ``related`` or ``supersedes`` verdict between
two members keeps their clusters apart), the scopes are equal (the validator refuses anything
else) and the cluster stays small (``MAX_CLUSTER``). ``type`` is no wall: two entries stating
one fact under two types merge (the keeper's type stays).

The text: with a model, the model's (the pair's ``merged_text``, or one written for the
cluster); else, or when the model's text drops a detail, the offline lossless text
(:func:`memcore.judge.merge_text.merge_text`). :func:`memcore.judge.validate.check_merge`
decides: ``apply`` (every detail kept: safe for ``--auto``) or ``review``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memcore.judge.analysis import Analyzer
from memcore.judge.merge_text import choose_keeper, merge_text
from memcore.judge.protocol import EntryView, Judgement, Verdict
from memcore.judge.validate import REJECT, Check, check_merge, missing_details

MAX_CLUSTER = 6

#: writes a merged text for (keeper, others) with a model, or None
ModelText = Callable[[str, Sequence[str]], str | None]


@dataclass
class Cluster:
    """Members (indexes) of one ``same`` cluster, the judge's confidence and reasons."""

    members: list[int]
    confidence: float
    reasons: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # merged texts the judge proposed


@dataclass
class MergeDraft:
    """What a cluster becomes: the keeper, the absorbed entries, the text and its check."""

    keeper: int
    absorbed: list[int]
    text: str
    check: Check
    confidence: float
    reason: str
    by_model: bool = False
    missing: dict[int, list[str]] = field(default_factory=dict)


def clusters(
    views: Sequence[EntryView],
    judged: Sequence[tuple[int, int, Judgement]],
    exclude: set[int] | None = None,
) -> list[Cluster]:
    """Clusters of ``same`` pairs (see the module docstring), most confident first; entries in
    ``exclude`` (waiting for a contradiction to be settled) join none."""
    exclude = exclude or set()
    parent = list(range(len(views)))
    members: dict[int, list[int]] = {}
    apart: set[tuple[int, int]] = set()
    for i, j, jd in judged:
        if jd.verdict is not None and jd.verdict is not Verdict.SAME:
            apart.add((min(i, j), max(i, j)))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    conf: dict[int, float] = {}
    reasons: dict[int, list[str]] = {}
    texts: dict[int, list[str]] = {}
    same = [(i, j, jd) for i, j, jd in judged if jd.verdict is Verdict.SAME]
    same.sort(key=lambda p: (-p[2].confidence, p[0], p[1]))
    for i, j, jd in same:
        if views[i].scope != views[j].scope or i in exclude or j in exclude:
            continue
        ri, rj = root(i), root(j)
        if ri == rj:
            continue
        mi, mj = members.get(ri, [ri]), members.get(rj, [rj])
        if len(mi) + len(mj) > MAX_CLUSTER:
            continue
        if any((min(x, y), max(x, y)) in apart for x in mi for y in mj):
            continue
        if sum(views[m].pinned for m in mi + mj) > 1:
            continue  # two pinned entries never merge: one would go
        parent[rj] = ri
        members[ri] = mi + mj
        members.pop(rj, None)
        conf[ri] = min(conf.get(ri, 1.0), conf.get(rj, 1.0), jd.confidence)
        reasons[ri] = reasons.get(ri, []) + reasons.pop(rj, []) + [jd.reason]
        texts[ri] = (
            texts.get(ri, []) + texts.pop(rj, []) + ([jd.merged_text] if jd.merged_text else [])
        )
    out = [
        Cluster(sorted(m), conf.get(r, 0.0), reasons.get(r, []), texts.get(r, []))
        for r, m in members.items()
        if len(m) > 1
    ]
    out.sort(key=lambda c: (-c.confidence, c.members))
    return out


def joined(keeper: str, others: Sequence[str], analyzer: Analyzer) -> str:
    """The keeper followed by every other text that holds a detail the text so far lacks."""
    text = keeper.strip()
    for other in others:
        if missing_details([other], text, analyzer):
            text = text.rstrip() + ("" if text.endswith((".", "!", "?", "。")) else ".")
            text += " " + other.strip()
    return text


def keeper_of(group: Sequence[EntryView], analyzer: Analyzer) -> EntryView:
    """The member a merge keeps: the pinned one, else the more important, else the one naming
    the most details (:func:`memcore.judge.merge_text.choose_keeper`: then the newest)."""
    top = max(m.importance for m in group if not any(g.pinned for g in group) or m.pinned)
    best = [
        m for m in group if m.importance == top and (m.pinned or not any(g.pinned for g in group))
    ]
    return choose_keeper(best, analyzer)


def draft(
    c: Cluster,
    views: Sequence[EntryView],
    analyzer: Analyzer,
    model_text: ModelText | None = None,
) -> MergeDraft | None:
    """The merge a cluster becomes, checked; None when the validator rejects it outright."""
    group = [views[m] for m in c.members]
    keeper = keeper_of(group, analyzer)
    k = c.members[group.index(keeper)]
    others = [m for m in c.members if m != k]
    other_texts = [views[m].text for m in others]
    proposals: list[tuple[str, bool]] = []
    if model_text is not None:
        written = c.texts[0] if len(c.members) == 2 and c.texts else None
        if written is None:
            written = model_text(keeper.text, other_texts)
        if written:
            proposals.append((" ".join(written.split()), True))
    offline = merge_text(keeper.text, other_texts, analyzer)
    if offline is not None:
        proposals.append((offline, False))
    check = Check(REJECT, "no text")
    text, by_model = keeper.text, False
    for candidate, from_model in proposals:
        check = check_merge(group, candidate, keeper.id, analyzer)
        text, by_model = candidate, from_model
        if check.ok:
            break
    if not proposals:
        check = check_merge(group, None, keeper.id, analyzer)
    if check.action == REJECT:
        return None
    if not check.ok and check_merge(group, keeper.text, keeper.id, analyzer).action != REJECT:
        # No one-statement text keeps every detail: the reviewer is shown (and "apply" writes)
        # the entries joined, which keeps them all; it waits for review, never for --auto.
        text, by_model = joined(keeper.text, other_texts, analyzer), False
    missing = {
        m: lost for m in others if (lost := missing_details([views[m].text], keeper.text, analyzer))
    }
    reason = "same fact: " + "; ".join(dict.fromkeys(c.reasons))[:200]
    return MergeDraft(k, others, text, check, c.confidence, reason, by_model, missing)
