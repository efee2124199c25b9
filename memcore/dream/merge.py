"""Merge planning: similar pairs block by block, greedy clusters around keepers, merged text.

Pure functions of their inputs. Memory stays bounded: similarities are computed for a block of
rows at a time and only pairs above the threshold are kept (never an n x n matrix). For many
wide vectors, a fixed random projection to 256 dimensions finds the candidates first and the
exact cosine confirms them.

Clustering is greedy against keepers, never transitive: entries are visited in keeper order
(pinned, importance, the more public scope, the earlier creation) and each joins the most
similar keeper it may join — same type, same scope, not pinned, no contradiction with any
member — or becomes a keeper itself. An absorbed entry is never a keeper, so A -> B -> C chains
cannot lose A.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from memcore.judge.contradict import contradiction, unique_content, unique_details
from memcore.judge.neighbours import candidate_pairs, exact_dots

__all__ = ["Item", "MergeGroup", "candidate_pairs", "cluster", "combined_text", "exact_dots"]

SCOPE_RANK = {"global": 0, "project": 1, "session": 2}
MAX_TRIES = 4  # keepers an entry tries to join, most similar first


@dataclass
class Item:
    """What merge planning needs of one entry."""

    id: str
    text: str
    type: str = "unknown"
    scope: str = "global"
    pinned: bool = False
    importance: float = 0.5
    created_at: str = ""


@dataclass
class MergeGroup:
    """One keeper and the entries it absorbs. ``lossy``: an absorbed entry holds details or
    content the keeper lacks, so the merged text combines them and a human (or model) decides."""

    keeper: int
    absorbed: list[int]
    sims: list[float]
    lossy: bool = False
    missing: dict[int, list[str]] = field(default_factory=dict)


def keeper_order(items: Sequence[Item]) -> list[int]:
    """Indexes in keeper order: pinned first (they are never absorbed), then higher importance,
    the more public scope, the earlier created_at, the earlier position."""
    return sorted(
        range(len(items)),
        key=lambda i: (
            not items[i].pinned,
            -round(items[i].importance, 6),
            SCOPE_RANK.get(items[i].scope, 3),
            items[i].created_at or "~",
            i,
        ),
    )


def cluster(
    items: Sequence[Item],
    pairs: Sequence[tuple[int, int, float]],
    threshold: float,
    vecs: np.ndarray | None = None,
) -> tuple[list[MergeGroup], list[tuple[int, int, float, str]]]:
    """Greedy clusters of ``items`` from candidate ``pairs`` at ``threshold``.

    Returns the merge groups (keepers with at least one absorbed entry) and the pairs above the
    threshold that were kept apart because they contradict (for reconcile).
    """
    neigh: dict[int, list[tuple[int, float]]] = {}
    for i, j, s in pairs:
        if s >= threshold:
            neigh.setdefault(i, []).append((j, s))
            neigh.setdefault(j, []).append((i, s))
    order = keeper_order(items)
    rank = {idx: r for r, idx in enumerate(order)}
    keeper_of: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    groups: dict[int, MergeGroup] = {}
    refused: list[tuple[int, int, float, str]] = []
    for idx in order:
        it = items[idx]
        best: tuple[float, int] | None = None
        if not it.pinned:
            tried: set[int] = set()
            for other, sim in sorted(neigh.get(idx, ()), key=lambda p: (-p[1], rank[p[0]])):
                if len(tried) >= MAX_TRIES:
                    break
                if rank[other] > rank[idx]:
                    continue  # only earlier keepers can absorb
                kp = keeper_of[other]
                if kp != other:  # a neighbour already absorbed: try its keeper instead
                    if vecs is None or kp in tried:
                        continue
                    sim = float(vecs[idx] @ vecs[kp])
                    if sim < threshold:
                        continue
                    other = kp
                if other in tried:
                    continue
                tried.add(other)
                k = items[other]
                if k.type != it.type or k.scope != it.scope:
                    continue
                why = None
                group = members.get(other, [other])
                for m in group[:6] if len(group) > 6 else group:  # the keeper and the first five
                    why = contradiction(items[m].text, it.text)
                    if why:
                        break
                if why:
                    refused.append((other, idx, sim, why))
                    continue
                best = (sim, other)
                break
        if best is None:
            keeper_of[idx] = idx
            members[idx] = [idx]
            continue
        sim, k_idx = best
        keeper_of[idx] = k_idx
        members[k_idx].append(idx)
        g = groups.setdefault(k_idx, MergeGroup(keeper=k_idx, absorbed=[], sims=[]))
        g.absorbed.append(idx)
        g.sims.append(sim)
    out = []
    for g in groups.values():
        keeper_text = items[g.keeper].text
        for a in g.absorbed:
            miss = unique_details(items[a].text, keeper_text)
            extra = [w for w in unique_content(items[a].text, keeper_text) if len(w) > 3]
            if miss or len(extra) >= 2:
                g.missing[a] = miss + extra
                g.lossy = True
        out.append(g)
    out.sort(key=lambda g: rank[g.keeper])
    return out, refused


_SENT_SPLIT_RE = re.compile(r"(?<=[.!?;])\s+")


def combined_text(keeper: str, absorbed: Sequence[str]) -> str:
    """Deterministic merged text: the keeper, plus each absorbed sentence that carries a detail
    or content the text so far lacks (nothing unique is dropped)."""
    text = keeper.rstrip()
    for other in absorbed:
        for sent in _SENT_SPLIT_RE.split(other.strip()):
            sent = sent.strip()
            if not sent:
                continue
            if (
                unique_details(sent, text)
                or len([w for w in unique_content(sent, text) if len(w) > 3]) >= 1
            ):
                if not unique_details(text, sent) and not unique_content(text, sent):
                    text = sent  # the sentence says all the text so far says, and more
                    continue
                if text and text[-1] not in ".!?;:。":
                    text += "."
                text += " " + sent
    return text
