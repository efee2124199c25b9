"""Candidate pairs for the judge: recall first, bounded cost.

    pairs = candidates(views, vecs, analyzer, k=5)   # list[Candidate], i < j, same scope only

Two sources, merged:

* **nearest neighbours**: every entry's ``k`` most similar entries by embedding (top-k, no
  threshold), computed block by block inside each scope (:func:`topk_neighbours`), so
  memory stays O(block x n);
* **rare shared tokens**: an inverted index of what identifies a fact across wordings and
  languages (numbers with their unit, versions, paths, URLs, identifiers, proper names,
  resolved aliases). A token carried by more than ``max_df`` entries of a scope says
  nothing and is dropped; each entry keeps its ``per_entry`` best token partners (scored by
  the summed inverse document frequency of what they share).

Scope is a hard wall: only entries with one identical scope string are ever paired (a
project memory is never folded into a global one, nor a session memory into a project
one). ``type`` plays no part here: two entries stating one fact under two types are
candidates like any others.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memcore.judge.analysis import Analysis, Analyzer
from memcore.judge.neighbours import topk_neighbours
from memcore.judge.protocol import EntryView

DEFAULT_K = 5
DEFAULT_PER_ENTRY = 3


@dataclass(frozen=True)
class Candidate:
    """One candidate pair (``i < j`` index into the entries) and why it was proposed."""

    i: int
    j: int
    sim: float  # cosine of the two entries
    source: str  # "knn", "token" or "knn+token"


def rare_tokens(an: Analysis) -> set[str]:
    """The tokens of an entry that can tie it to a restatement: its values (numbers with units,
    versions, times, paths, URLs, identifiers, code, names) and its multi-word aliases."""
    out: set[str] = set()
    for v in an.values:
        if v.kind == "num" and "|" not in v.norm and "." not in v.norm and len(v.norm) < 3:
            continue  # a bare small number ("2", "10") ties nothing together
        out.add(f"{v.kind}:{v.norm}")
    out.update(t for t in an.tokens if "_" in t and not t.startswith("<"))
    return out


def _token_pairs(
    toks: Sequence[set[str]], members: Sequence[int], max_df: int, per_entry: int
) -> dict[tuple[int, int], float]:
    """Pairs within one scope group that share a rare token, best ``per_entry`` per entry."""
    index: dict[str, list[int]] = defaultdict(list)
    for m in members:
        for t in toks[m]:
            index[t].append(m)
    n = max(1, len(members))
    score: dict[tuple[int, int], float] = defaultdict(float)
    for posting in index.values():
        df = len(posting)
        if df < 2 or df > max_df:
            continue
        w = math.log(1 + n / df)
        for x in range(df):
            for y in range(x + 1, df):
                i, j = posting[x], posting[y]
                score[(i, j) if i < j else (j, i)] += w
    best: dict[int, list[tuple[float, tuple[int, int]]]] = defaultdict(list)
    for pair, s in score.items():
        best[pair[0]].append((s, pair))
        best[pair[1]].append((s, pair))
    keep: dict[tuple[int, int], float] = {}
    for lst in best.values():
        lst.sort(key=lambda p: (-p[0], p[1]))
        for s, pair in lst[:per_entry]:
            keep[pair] = s
    return keep


def candidates(
    entries: Sequence[EntryView],
    vecs: np.ndarray,
    analyzer: Analyzer | None = None,
    *,
    k: int = DEFAULT_K,
    per_entry: int = DEFAULT_PER_ENTRY,
    max_df: int | None = None,
) -> list[Candidate]:
    """Candidate pairs of ``entries`` (``vecs``: their L2-normalised embeddings, one row
    each), sorted by (i, j). Only identical scopes pair; see the module docstring."""
    n = len(entries)
    if n != int(vecs.shape[0]):
        raise ValueError(f"{n} entries but {int(vecs.shape[0])} vectors")
    analyzer = analyzer or Analyzer()
    groups: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(entries):
        groups[e.scope].append(i)
    texts = [e.text for e in entries]
    analysed = analyzer.analyse_soon(texts)  # in worker processes while numpy searches here
    found: dict[tuple[int, int], Candidate] = {}
    try:
        for members in groups.values():
            if len(members) < 2:
                continue
            idx = np.asarray(members, dtype=np.int64)
            group = vecs if len(members) == n else vecs[idx]  # one scope: no copy of every row
            for a, b, s in topk_neighbours(group, k):
                i, j = sorted((members[a], members[b]))
                found[(i, j)] = Candidate(i, j, float(s), "knn")
    finally:
        analysed()
    toks = [rare_tokens(an) for an in analyzer.analyse_many(texts)]
    for members in groups.values():
        if len(members) < 2:
            continue
        cap = max_df if max_df is not None else max(4, round(0.01 * len(members)))
        for (i, j), _score in _token_pairs(toks, members, cap, per_entry).items():
            hit = found.get((i, j))
            if hit is not None:
                found[(i, j)] = Candidate(i, j, hit.sim, "knn+token")
            else:
                found[(i, j)] = Candidate(i, j, float(vecs[i] @ vecs[j]), "token")
    return [found[p] for p in sorted(found)]
