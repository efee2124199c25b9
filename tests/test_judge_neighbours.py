"""Top-k neighbours: the fast selection gives exactly what a plain full selection gives,
ties included (the entries a dream pairs must not depend on how the search is done)."""

from __future__ import annotations

import numpy as np

from memcore.judge import neighbours as nb


def _dense_sketch(vecs: np.ndarray) -> np.ndarray:
    """The count sketch as a dense fold (how it was first written)."""
    n, dim = vecs.shape
    rng = np.random.default_rng(20261201)
    width = -(-dim // 256) * 256
    perm = rng.permutation(width)
    signs = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=width)
    part = np.zeros((n, width), dtype=np.float32)
    part[:, :dim] = vecs
    return (part[:, perm] * signs).reshape(n, width // 256, 256).sum(axis=1)


def _reference(vecs: np.ndarray, k: int) -> set[tuple[int, int, float]]:
    """Every row ranked in full with np.argpartition, then the exact cosine re-rank."""
    n = len(vecs)
    wide = vecs.shape[1] > 512 and n > 4 * k
    coarse = _dense_sketch(vecs) if wide else vecs
    kc = min(3 * k if wide else k, n - 1)
    tops = []
    for s in range(0, n, 512):
        block = coarse[s : s + 512] @ coarse.T
        b = len(block)
        block[np.arange(b), np.arange(b) + s] = -np.inf
        tops.append(np.argpartition(-block, kc - 1, axis=1)[:, :kc])
    ii = np.repeat(np.arange(n), kc)
    jj = np.concatenate(tops).reshape(-1)
    sims = nb.exact_dots(vecs, ii, jj)
    if wide:
        order = np.lexsort((-sims, ii))
        ii, jj, sims = ii[order], jj[order], sims[order]
        keep = (np.arange(len(ii)) - np.repeat(np.arange(0, len(ii), kc), kc)) < k
        ii, jj, sims = ii[keep], jj[keep], sims[keep]
    return {
        (int(min(i, j)), int(max(i, j)), float(s)) for i, j, s in zip(ii, jj, sims, strict=True)
    }


def _sparse_rows(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vecs = np.zeros((n, dim), dtype=np.float32)
    for i in range(n):
        cols = rng.choice(dim, size=12, replace=False)
        vecs[i, cols] = rng.random(12, dtype=np.float32)
    for i in range(0, n - 2, 7):  # exact duplicates: equal similarities everywhere
        vecs[i + 1] = vecs[i]
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs


def test_sketch_is_the_dense_fold_bit_for_bit() -> None:
    vecs = _sparse_rows(300, 4096, 1)
    assert np.array_equal(nb._sketch(vecs), _dense_sketch(vecs))
    dots = nb._Dots(vecs)  # the non-zeros it found, passed on
    assert np.array_equal(nb._sketch(vecs, (dots.rows, dots.cols, dots.vals)), _dense_sketch(vecs))


def test_best_columns_ranks_by_value_then_column() -> None:
    rng = np.random.default_rng(2)
    block = rng.integers(0, 50, size=(40, 3000)).astype(np.float32)  # many equal values
    crowded = rng.random((30, 3200)).astype(np.float32)  # no columns after the groups
    crowded[:, ::100] += 2.0  # every best column in one group (column % 100 == 0)
    crowded[:5, 3100] = -np.inf
    for blk in (block, crowded):
        got = nb._best_columns(blk, 16)
        for row, cols in zip(blk, got, strict=True):
            want = sorted(range(len(row)), key=lambda c: (-row[c], c))[:16]
            assert cols.tolist() == want


def test_topk_equals_the_full_selection_with_ties() -> None:
    for vecs in (_sparse_rows(2100, 4096, 3), _sparse_rows(900, 48, 4)):
        got = set(nb.topk_neighbours(vecs, 5))
        assert got == _reference(vecs, 5)
        assert len(got) >= len(vecs)
