"""The candidate cache in a real memcore.sqlite: an unchanged memory gets back exactly the
pairs a search gives; any change to a text, a scope or the analyzer searches again."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from memcore.judge.analysis import Analyzer
from memcore.judge.candidate_cache import CandidateCache, candidates_key
from memcore.judge.candidates import candidates
from memcore.judge.protocol import EntryView
from memcore.search.embeddings import cache_id, get_embedder
from memcore.workspace import db


def _views() -> list[EntryView]:
    texts = [
        f"Service {i % 40} listens on port {8000 + i % 13} in eu-west-{i % 3}." for i in range(200)
    ]
    return [
        EntryView(f"e{i}", t, scope="global" if i % 5 else "project") for i, t in enumerate(texts)
    ]


def test_an_unchanged_memory_gets_the_same_pairs_back(tmp_path: Path) -> None:
    views = _views()
    texts = [v.text for v in views]
    analyzer = Analyzer.for_texts(texts)
    emb = get_embedder("hashing").fit(texts)  # type: ignore[attr-defined]
    vecs = np.asarray(emb.embed(texts))
    found = candidates(views, vecs, analyzer)
    assert {c.source for c in found} >= {"knn", "token"}
    conn = db.connect(tmp_path / "memcore.sqlite")
    key = candidates_key(views, cache_id(emb), analyzer)
    CandidateCache(conn).put(key, found)
    assert CandidateCache(conn).get(key) == found

    moved = list(views)
    moved[3] = replace(moved[3], scope="project")
    edited = list(views)
    edited[7] = replace(edited[7], text=edited[7].text + " Really.")
    for other in (moved, edited):
        assert candidates_key(other, cache_id(emb), analyzer) != key
    assert candidates_key(views, "other-backend", analyzer) != key
    grown = Analyzer.for_texts([*texts, "Kubernetes (K8S) runs Zephyr."])
    assert candidates_key(views, cache_id(emb), grown) != key
    assert CandidateCache(conn).get(candidates_key(edited, cache_id(emb), analyzer)) is None


def test_only_the_latest_set_is_kept(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "memcore.sqlite")
    cache = CandidateCache(conn)
    cache.put("a", [])
    cache.put("b", [])
    assert cache.get("a") is None and cache.get("b") == []
    assert conn.execute("SELECT COUNT(*) FROM judge_candidates").fetchone()[0] == 1
