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

SCOPE_RANK = {"global": 0, "project": 1, "session": 2}
_PROJECT_DIM = 256
_PROJECT_MARGIN = 0.15
_BLOCK = 512
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


def candidate_pairs(
    vecs: np.ndarray, threshold: float, k: int = 16
) -> list[tuple[int, int, float]]:
    """Pairs (i < j) with cosine >= ``threshold``, at most the ``k`` most similar per entry;
    rows must be L2-normalised. Memory stays O(block x n), never n x n."""
    n = int(vecs.shape[0])
    if n < 2:
        return []
    vecs = np.ascontiguousarray(vecs, dtype=np.float32)
    dim = int(vecs.shape[1])
    if dim > 2 * _PROJECT_DIM and n > 2000:
        # Coarse candidates in a fixed random projection, confirmed with the exact cosine.
        rng = np.random.default_rng(20261130)
        proj = rng.standard_normal((dim, _PROJECT_DIM)).astype(np.float32) / np.sqrt(_PROJECT_DIM)
        small = np.empty((n, _PROJECT_DIM), dtype=np.float32)
        for s in range(0, n, 4096):
            small[s : s + 4096] = vecs[s : s + 4096] @ proj
        coarse = _topk_pairs(small, threshold - _PROJECT_MARGIN, 2 * k, upper=True)
        if not coarse:
            return []
        ii = np.fromiter((p[0] for p in coarse), dtype=np.int64, count=len(coarse))
        jj = np.fromiter((p[1] for p in coarse), dtype=np.int64, count=len(coarse))
        sims = exact_dots(vecs, ii, jj)
        keep = sims >= threshold
        return list(zip(ii[keep].tolist(), jj[keep].tolist(), sims[keep].tolist(), strict=True))
    return _topk_pairs(vecs, threshold, k)


def exact_dots(vecs: np.ndarray, ii: np.ndarray, jj: np.ndarray) -> np.ndarray:
    """Exact dot products of the row pairs (ii[p], jj[p]).

    Hashed vectors are sparse (a few hundred of 4096 dimensions), so the products are taken
    over the non-zeros of the ``jj`` rows against a contiguous block of ``ii`` rows: the cost
    is O(pairs x non-zeros), not O(pairs x dimensions). Dense vectors use a plain gather.
    """
    n = int(vecs.shape[0])
    out = np.empty(len(ii), dtype=np.float32)
    counts = np.count_nonzero(vecs, axis=1)
    if counts.mean() > 0.25 * vecs.shape[1]:
        for s in range(0, len(ii), 4096):
            out[s : s + 4096] = np.einsum(
                "ij,ij->i", vecs[ii[s : s + 4096]], vecs[jj[s : s + 4096]]
            )
        return out
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    _rows, cols = np.nonzero(vecs)
    vals = vecs[_rows, cols]
    cols = cols.astype(np.int32)
    del _rows
    order = np.argsort(ii, kind="stable")
    si, sj = ii[order], jj[order]
    res = np.zeros(len(ii), dtype=np.float32)
    for s in range(0, n, _BLOCK):
        lo, hi = np.searchsorted(si, [s, s + _BLOCK])
        if lo == hi:
            continue
        bi, bj = si[lo:hi] - s, sj[lo:hi]
        lens = counts[bj]
        total = int(lens.sum())
        if total == 0:
            continue
        pair = np.repeat(np.arange(hi - lo), lens)
        pos = (
            np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens) + np.repeat(indptr[bj], lens)
        )
        prod = vecs[s : s + _BLOCK][bi[pair], cols[pos]] * vals[pos]
        res[lo:hi] = np.bincount(pair, weights=prod, minlength=hi - lo)
    out[order] = res
    return out


def _topk_pairs(
    vecs: np.ndarray, threshold: float, k: int, upper: bool = False
) -> list[tuple[int, int, float]]:
    """Each row's ``k`` nearest other rows above ``threshold``, as deduplicated (i < j) pairs.

    ``upper``: compare each row with the rows after it only (half the work; used for the
    coarse candidates, where a row's earlier neighbours already listed it)."""
    n = int(vecs.shape[0])
    kk = min(k, n - 1)
    parts_i: list[np.ndarray] = []
    parts_j: list[np.ndarray] = []
    parts_v: list[np.ndarray] = []
    vt = np.ascontiguousarray(vecs.T)
    for s in range(0, n, _BLOCK):
        c0 = s if upper else 0
        block = vecs[s : s + _BLOCK] @ vt[:, c0:]  # (rows, n - c0)
        b = block.shape[0]
        if upper:  # the square part: drop the diagonal and everything below it
            square = block[:, :b]
            square[np.tril_indices(b)] = -np.inf
        else:
            block[np.arange(b), np.arange(b) + s] = -np.inf  # not oneself
        rr, cc = np.nonzero(block >= threshold)  # rows come out sorted
        if rr.size == 0:
            continue
        vv = block[rr, cc]
        per_row = np.bincount(rr, minlength=b)
        if per_row.max() > kk:
            # Rows with more than k hits keep their k most similar: sort by (row, -similarity).
            order = np.lexsort((-vv, rr))
            rr, cc, vv = rr[order], cc[order], vv[order]
            starts = np.concatenate(([0], np.cumsum(per_row)[:-1]))
            keep = (np.arange(len(rr)) - starts[rr]) < kk
            rr, cc, vv = rr[keep], cc[keep], vv[keep]
        parts_i.append(rr + s)
        parts_j.append(cc + c0)
        parts_v.append(vv)
    if not parts_i:
        return []
    ii = np.concatenate(parts_i).astype(np.int64)
    jj = np.concatenate(parts_j).astype(np.int64)
    vv = np.concatenate(parts_v).astype(np.float32)
    lo, hi = np.minimum(ii, jj), np.maximum(ii, jj)
    _, first = np.unique(lo * n + hi, return_index=True)
    return list(zip(lo[first].tolist(), hi[first].tolist(), vv[first].tolist(), strict=True))


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
