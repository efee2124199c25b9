"""Nearest neighbours of embedding rows, block by block: memory stays O(block x n).

Two entry points:

* :func:`topk_neighbours`: every row's ``k`` most similar rows, no threshold (candidate
  generation for the judge: recall first, the judge decides);
* :func:`candidate_pairs`: pairs above a cosine threshold, at most ``k`` per row (the
  threshold-based merge planning of ``memcore dream``).

Rows must be L2-normalised. For many wide vectors, a fixed random projection to 256
dimensions finds the candidates first and the exact cosine (:func:`exact_dots`, sparse-aware
for hashed vectors) ranks them. Never an n x n matrix.
"""

from __future__ import annotations

import numpy as np

_PROJECT_DIM = 256
_PROJECT_MARGIN = 0.15
_BLOCK = 512


def _project(vecs: np.ndarray) -> np.ndarray:
    """A fixed random projection of the rows to 256 dimensions (seeded: deterministic)."""
    n, dim = vecs.shape
    rng = np.random.default_rng(20261130)
    proj = rng.standard_normal((dim, _PROJECT_DIM)).astype(np.float32) / np.sqrt(_PROJECT_DIM)
    small = np.empty((n, _PROJECT_DIM), dtype=np.float32)
    for s in range(0, n, 4096):
        small[s : s + 4096] = vecs[s : s + 4096] @ proj
    return small


def _sketch(vecs: np.ndarray) -> np.ndarray:
    """A fixed signed folding of the columns onto 256 (a count sketch): every input dimension
    adds, with a seeded sign, to one output dimension. Dot products are kept in expectation;
    it costs one pass over the matrix, not a product with a 4096 x 256 matrix."""
    n, dim = vecs.shape
    rng = np.random.default_rng(20261201)
    width = -(-dim // _PROJECT_DIM) * _PROJECT_DIM
    perm = rng.permutation(width)
    signs = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=width)
    out = np.empty((n, _PROJECT_DIM), dtype=np.float32)
    for s in range(0, n, 4096):
        part = np.zeros((min(4096, n - s), width), dtype=np.float32)
        part[:, :dim] = vecs[s : s + 4096]
        folded = (part[:, perm] * signs).reshape(len(part), width // _PROJECT_DIM, _PROJECT_DIM)
        out[s : s + len(part)] = folded.sum(axis=1)
    return out


def topk_neighbours(vecs: np.ndarray, k: int) -> list[tuple[int, int, float]]:
    """Each row's ``k`` most similar other rows (no threshold), as deduplicated (i < j, cosine)
    pairs sorted by (i, j). Wide vectors of many rows: 2k coarse neighbours in the projection,
    re-ranked with the exact cosine."""
    n = int(vecs.shape[0])
    if n < 2 or k < 1:
        return []
    vecs = np.ascontiguousarray(vecs, dtype=np.float32)
    kk = min(k, n - 1)
    coarse = vecs
    wide = vecs.shape[1] > 2 * _PROJECT_DIM and n > 4 * k
    if wide:
        coarse = _sketch(vecs)
    kc = min(3 * kk if wide else kk, n - 1)
    vt = np.ascontiguousarray(coarse.T)
    rows_i: list[np.ndarray] = []
    rows_j: list[np.ndarray] = []
    for s in range(0, n, _BLOCK):
        block = coarse[s : s + _BLOCK] @ vt  # (rows, n)
        b = block.shape[0]
        block[np.arange(b), np.arange(b) + s] = -np.inf  # not oneself
        top = np.argpartition(-block, kc - 1, axis=1)[:, :kc]
        rows_i.append(np.repeat(np.arange(s, s + b), kc))
        rows_j.append(top.reshape(-1))
    ii = np.concatenate(rows_i).astype(np.int64)
    jj = np.concatenate(rows_j).astype(np.int64)
    sims = exact_dots(vecs, ii, jj)
    if wide:  # keep each row's k best by the exact cosine
        order = np.lexsort((-sims, ii))
        ii, jj, sims = ii[order], jj[order], sims[order]
        rank = np.arange(len(ii)) - np.repeat(np.arange(0, len(ii), kc), kc)
        keep = rank < kk
        ii, jj, sims = ii[keep], jj[keep], sims[keep]
    lo, hi = np.minimum(ii, jj), np.maximum(ii, jj)
    _, first = np.unique(lo * n + hi, return_index=True)
    return list(zip(lo[first].tolist(), hi[first].tolist(), sims[first].tolist(), strict=True))


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
        small = _project(vecs)
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
