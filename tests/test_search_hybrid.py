"""Hybrid search: typo tolerance, calibrated scores (1.000 only for an exact duplicate), and
the model vectors of memcore[embed] kept incrementally (skipped without the extra).

The notes here are not the evaluation set's (bench/eval/search), so tests never tune on it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore.search.dense import nearest, pieces
from memcore.search.embeddings import extra_installed
from memcore.search.fuzzy import max_edits, osa_distance
from memcore.search.query import open_index, search, update_index
from memcore.workspace.core import Workspace

NOTES = {
    "memory/2026-05-04.md": (
        "# 2026-05-04\n\n## Garden\n\n"
        "- Tomatoes are watered every morning at 07:00 by the drip timer on the balcony tap.\n"
        "- Bought a bag of compost for the raised bed; the worms seem happy.\n"
    ),
    "memory/2026-05-05.md": (
        "# 2026-05-05\n\n## Cycling\n\n"
        "- The road bike's chain was replaced at Velo Schmidt; next service after 3,000 km.\n"
        "- Commute route avoids Hauptstrasse because of the tram works until June.\n"
    ),
    "memory/2026-05-06.md": (
        "# 2026-05-06\n\n## Music\n\n"
        "- Piano lesson moved to Wednesdays 17:30 with Frau Lindqvist, bring the Czerny book.\n"
        "- Tuned the guitar to drop D for the new song.\n"
    ),
}


@pytest.fixture
def hws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "MEMORY.md").write_text("# Long-Term Memory\n\n- Lives in Kiel.\n", encoding="utf-8")
    return Workspace(root)


def test_edit_distance_counts_swaps_as_one_and_stops_early() -> None:
    assert osa_distance("compost", "compost", 1) == 0
    assert osa_distance("compsot", "compost", 1) == 1  # adjacent swap
    assert osa_distance("kompost", "compost", 1) == 1
    assert osa_distance("banana", "compost", 2) == 3  # limit + 1: certainly farther
    assert max_edits("tram") == 0 and max_edits("lesson") == 1 and max_edits("tomatoes") == 2
    assert max_edits("30000") == 0


def test_misspelt_words_still_find_their_note(hws: Workspace) -> None:
    top = search(hws, "tomatos waterd drip timmer", record=False).results[0]
    assert (top["path"], top["startLine"]) == ("memory/2026-05-04.md", 5)
    assert search(hws, "xqzvk wprrt", record=False).results == []


def test_only_an_exact_duplicate_scores_one(hws: Workspace) -> None:
    exact = search(
        hws, "Tuned the guitar to drop D for the new song.", record=False, limit=3
    ).results
    assert exact[0]["score"] == 1.0 and exact[0]["path"] == "memory/2026-05-06.md"
    assert all(h["score"] < 1.0 for h in exact[1:])
    close = search(hws, "piano lesson Wednesdays Lindqvist Czerny", record=False).results
    assert close[0]["startLine"] == 5 and 0.8 <= close[0]["score"] < 1.0


def test_clauses_are_embedded_apart_from_the_whole_chunk() -> None:
    got = pieces("- Chain replaced at Velo Schmidt; next service after 3,000 km.", "Cycling")
    assert got[0] == "Cycling\n- Chain replaced at Velo Schmidt; next service after 3,000 km."
    assert got[1:] == ["Chain replaced at Velo Schmidt", "next service after 3,000 km."]
    assert pieces("- Lives in Kiel.") == ["- Lives in Kiel."]


def test_a_chunk_is_as_near_as_its_whole_text_and_its_best_clause_together() -> None:
    import numpy as np

    q = np.array([1.0, 0.0, 0.0], np.float32)
    rows = [
        [0.6, 0.8, 0.0],  # chunk 7, whole text: cosine 0.6
        [1.0, 0.0, 0.0],  # chunk 7, a clause that is the query: 1.0
        [0.8, 0.6, 0.0],  # chunk 9, one piece only: 0.8
    ]
    matrix = np.array(rows, np.float32)
    ids, starts = np.array([7, 9]), np.array([0, 2])
    near, sims = nearest((ids, starts, matrix, matrix[starts]), q)
    # one short clause alone does not outrank a chunk that is near as a whole
    assert near[7] == pytest.approx(0.8) and near[9] == pytest.approx(0.8)
    assert sims.tolist() == pytest.approx([0.8, 0.8])


# -- the memcore[embed] model ---------------------------------------------------------------

needs_model = pytest.mark.skipif(
    not extra_installed("use-m3"), reason="memcore[embed] extra not installed"
)


@pytest.fixture
def model_ws(hws: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setitem(os.environ, "MEMCORE_EMBEDDER", "use-m3")
    return hws


@pytest.mark.embed
@needs_model
def test_other_language_finds_the_note_with_the_model(model_ws: Workspace) -> None:
    de = search(model_ws, "wann ist der Klavierunterricht", record=False).results
    assert (de[0]["path"], de[0]["startLine"]) == ("memory/2026-05-06.md", 5)
    fr = search(model_ws, "quand est le cours de piano", record=False).results
    assert (fr[0]["path"], fr[0]["startLine"]) == ("memory/2026-05-06.md", 5)
    # the German query shares no word with the note: hashing alone does not find it
    os.environ["MEMCORE_EMBEDDER"] = "hashing"
    plain = search(model_ws, "wann ist der Klavierunterricht", record=False).results
    assert not plain or (plain[0]["path"], plain[0]["startLine"]) != ("memory/2026-05-06.md", 5)


@pytest.mark.embed
@needs_model
def test_a_bare_word_finds_its_note_but_scores_below_recording(model_ws: Workspace) -> None:
    from memcore.search.query import RECORD_MIN_SCORE

    bare = search(model_ws, "tomatoes", record=False).results
    asked = search(model_ws, "when are the tomatoes watered", record=False).results
    tomatoes = ("memory/2026-05-04.md", 5)
    assert (bare[0]["path"], bare[0]["startLine"]) == tomatoes
    assert (asked[0]["path"], asked[0]["startLine"]) == tomatoes
    # a bare word names a topic: its best hit is not a recall; the question's is
    assert bare[0]["score"] < RECORD_MIN_SCORE < asked[0]["score"]


@pytest.mark.embed
@needs_model
def test_model_vectors_are_kept_incrementally(model_ws: Workspace) -> None:
    from memcore.search.dense import sync_dense
    from memcore.search.embeddings import get_embedder

    emb = get_embedder("use-m3")
    conn = open_index(model_ws)
    try:
        update_index(conn, model_ws)
        first = sync_dense(conn, emb)
        n_chunks = conn.execute("SELECT count(*) FROM search_chunks").fetchone()[0]
        assert first >= n_chunks  # every chunk, and the clauses of the long ones
        assert sync_dense(conn, emb) == 0  # nothing changed: no work
        note = model_ws.memory_dir / "2026-05-05.md"
        note.write_text(
            note.read_text("utf-8") + "- Helmet light battery lasts four hours.\n", "utf-8"
        )
        update_index(conn, model_ws)
        assert sync_dense(conn, emb) == 1  # only the new chunk
        note.unlink()
        update_index(conn, model_ws)
        sync_dense(conn, emb)
        orphans = conn.execute(
            "SELECT count(*) FROM search_dense WHERE chunk NOT IN (SELECT id FROM search_chunks)"
        ).fetchone()[0]
        assert orphans == 0
    finally:
        conn.close()
    gone = search(model_ws, "bike chain service", record=False).results
    assert all(h["path"] != "memory/2026-05-05.md" for h in gone)


@pytest.mark.embed
@needs_model
def test_an_edited_last_chunk_gets_the_vectors_of_its_new_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The last chunk indexed has the highest row id: edited in place, its row is deleted and
    # the new text's row must not inherit the old text's model vectors.
    import numpy as np

    from memcore.search.dense import pieces
    from memcore.search.embeddings import get_embedder

    monkeypatch.setitem(os.environ, "MEMCORE_EMBEDDER", "use-m3")
    ws = Workspace(tmp_path / "ws")
    ws.memory_dir.mkdir(parents=True)
    note = ws.memory_dir / "2026-05-07.md"
    note.write_text("# 2026-05-07\n\n- The cat likes tuna.\n- The boiler was serviced.\n", "utf-8")
    search(ws, "cat", record=False)
    conn = open_index(ws)
    try:
        (last,) = conn.execute("SELECT max(id) FROM search_chunks").fetchone()
        note.write_text(
            "# 2026-05-07\n\n- The cat likes tuna.\n- Tax return is due on 31 July, via Elster.\n",
            "utf-8",
        )
        os.utime(note, (1, 1))  # a different mtime, whatever the clock's resolution
        search(ws, "cat", record=False)
        assert last  # the index never gives a chunk an id whose old vectors are still stored
        emb = get_embedder("use-m3")
        for cid, text, context in conn.execute("SELECT id, text, context FROM search_chunks"):
            stored = [
                np.frombuffer(v, np.float32)
                for (v,) in conn.execute(
                    "SELECT vec FROM search_dense WHERE chunk = ? ORDER BY id", (cid,)
                )
            ]
            fresh = emb.embed(pieces(text, context))
            assert len(stored) == len(fresh)
            assert all(float(np.dot(a, b)) > 0.999 for a, b in zip(stored, fresh, strict=True))
    finally:
        conn.close()
    top = search(ws, "Steuererklärung Frist", record=False).results[0]
    assert (top["path"], top["startLine"]) == ("memory/2026-05-07.md", 4)


class _CountingHashing:
    """The hashing backend, counting its embed calls (what a repeated query must not cost)."""

    def __init__(self) -> None:
        from memcore.search.embeddings.hashing import HashingEmbedder

        self._inner = HashingEmbedder()
        self.id = "counting-" + self._inner.id
        self.dim = self._inner.dim
        self.default_merge_threshold = self._inner.default_merge_threshold
        self.calls = 0

    def embed(self, texts: list[str]):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self._inner.embed(texts)


def test_a_repeated_query_reuses_its_vector() -> None:
    import numpy as np

    from memcore.search import dense

    emb = _CountingHashing()
    first = dense.query_vector(emb, "tomatoes drip timer")
    again = dense.query_vector(emb, "tomatoes drip timer")
    assert emb.calls == 1 and again is first
    assert np.allclose(first, emb._inner.embed(["tomatoes drip timer"])[0])
    with pytest.raises(ValueError):
        first[0] = 1.0  # shared between searches: read-only
    dense.query_vector(emb, "piano lesson")
    assert emb.calls == 2
    for i in range(dense.QUERY_CACHE):  # the oldest query falls out of the cache
        dense.query_vector(emb, f"query {i}")
    dense.query_vector(emb, "tomatoes drip timer")
    assert emb.calls == 3 + dense.QUERY_CACHE
