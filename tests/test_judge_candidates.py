"""Candidate generation: top-k neighbours inside a scope plus rare shared tokens."""

from __future__ import annotations

import numpy as np

from memcore.judge.analysis import Analyzer
from memcore.judge.candidates import candidates, rare_tokens
from memcore.judge.neighbours import topk_neighbours
from memcore.judge.protocol import EntryView
from memcore.search.embeddings.hashing import HashingEmbedder


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_topk_neighbours_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    vecs = _unit(rng.standard_normal((300, 32)))
    got = {(i, j) for i, j, _ in topk_neighbours(vecs, 3)}
    sims = vecs @ vecs.T
    np.fill_diagonal(sims, -np.inf)
    want = set()
    for i in range(300):
        for j in np.argsort(-sims[i])[:3]:
            want.add((min(i, int(j)), max(i, int(j))))
    assert got == want


def test_topk_neighbours_of_many_wide_rows_goes_through_the_projection() -> None:
    rng = np.random.default_rng(3)
    base = rng.standard_normal((1100, 600))
    # every row has a near twin: row i and row i + 1100
    vecs = _unit(np.vstack([base, base + 0.05 * rng.standard_normal(base.shape)]))
    pairs = {(i, j) for i, j, _ in topk_neighbours(vecs, 2)}
    twins = sum((i, i + 1100) in pairs for i in range(1100))
    assert twins >= 1090  # the coarse projection keeps the true nearest neighbour


def view(i: int, text: str, scope: str = "project:x") -> EntryView:
    return EntryView(str(i), text, scope=scope, created_at="2026-01-01")


def test_scope_is_a_wall_and_rare_tokens_find_translations() -> None:
    texts = [
        ("Kestrel's nightly export goes to the bucket kestrel-exports-eu.", "project:k"),
        ("L'export nocturne de Kestrel va dans le bucket kestrel-exports-eu.", "project:k"),
        ("Kestrel's nightly export goes to the bucket kestrel-exports-eu.", "global"),
        *[
            (f"Kestrel note number {i} about the {w} service.", "project:k")
            for i, w in enumerate(["billing", "search", "audit", "mail", "queue", "cache"] * 3)
        ],
    ]
    views = [view(i, t, s) for i, (t, s) in enumerate(texts)]
    emb = HashingEmbedder().fit([t for t, _ in texts])
    vecs = emb.embed([t for t, _ in texts])
    an = Analyzer.for_texts([t for t, _ in texts])
    assert "ident:kestrel-exports-eu" in rare_tokens(an.analyse(texts[1][0]))
    # k=1: the nearest neighbour alone may miss the translation; the shared bucket name finds it
    cands = candidates(views, vecs, an, k=1, per_entry=2)
    pairs = {(c.i, c.j): c for c in cands}
    assert (0, 1) in pairs and "token" in pairs[(0, 1)].source
    assert all(views[c.i].scope == views[c.j].scope for c in cands)
    assert not any(2 in (c.i, c.j) for c in cands)  # the only global entry has no partner
    assert len(cands) <= 3 * len(views)


def test_a_token_in_too_many_entries_proposes_nothing() -> None:
    texts = [f"Entry {i} mentions acme-core and topic {i * 7919}." for i in range(12)]
    views = [view(i, t) for i, t in enumerate(texts)]
    vecs = np.eye(12, dtype=np.float32)  # no embedding signal at all
    cands = candidates(views, vecs, Analyzer(), k=1, per_entry=5, max_df=5)
    assert all(c.source == "knn" for c in cands)  # acme-core (df 12 > 5) pairs nothing
