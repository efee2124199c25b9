"""The search's second model (MiniLM beside use-m3): asked for English sentences only, its
chunk vectors kept incrementally, its own calibration, and a switch to turn it off (the model
tests are skipped without the memcore[embed] extra)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcore.search.companion import ENV, asks_in_english, companion_for, paired_id
from memcore.search.embeddings import extra_installed
from memcore.search.fusion import CALIBRATIONS, calibration_for
from memcore.search.query import open_index, query_index, update_index
from memcore.workspace.core import Workspace

NOTES = {
    "memory/2026-07-01.md": (
        "# 2026-07-01\n\n## Photos\n\n"
        "- Holiday photos are copied from the phone to the NAS share /volume1/pictures every"
        " Sunday by the sync job.\n"
        "- The camera battery charger is in the blue drawer.\n"
    ),
    "memory/2026-07-02.md": (
        "# 2026-07-02\n\n## Car\n\n"
        "- The car's winter tyres are stored at Reifen Koch until October; ticket 4471.\n"
        "- Washer fluid refilled.\n"
    ),
}

needs_pair = pytest.mark.skipif(
    not (extra_installed("use-m3") and extra_installed("minilm")),
    reason="memcore[embed] extra not installed",
)


@pytest.fixture
def pair_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    root = tmp_path / "ws"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "MEMORY.md").write_text("# Long-Term Memory\n\n- Lives in Kiel.\n", encoding="utf-8")
    monkeypatch.setitem(os.environ, "MEMCORE_EMBEDDER", "use-m3")
    monkeypatch.delenv(ENV, raising=False)
    return Workspace(root)


def test_only_english_sentences_are_asked_of_the_second_model() -> None:
    assert asks_in_english("where do my holiday pictures end up")
    assert asks_in_english("When is the piano lesson?")
    assert not asks_in_english("winter tyres ticket")  # a bare keyword query
    assert not asks_in_english("wo sind die Urlaubsfotos")  # German: no English function word
    assert not asks_in_english("冬タイヤはどこ")  # another script
    assert not asks_in_english("où sont les photos de vacances")


def test_a_function_word_shared_with_another_language_does_not_make_a_query_english() -> None:
    # "was", "a", "in", "me" are function words in English and in German, French or Spanish:
    # a language with more function words in the query than English wins
    assert not asks_in_english("Was hat der Arzt gesagt?")
    assert not asks_in_english("à quelle heure part le train ? il a du retard")
    assert not asks_in_english("¿A dónde va el autobús?")
    assert not asks_in_english("Wann fahren wir in den Urlaub?")
    assert not asks_in_english("qui me remplace samedi ?")
    # English with a foreign name or word in it stays English; punctuation is not a script
    assert asks_in_english("is there a lift in the building on rue de la Paix")
    assert asks_in_english("What was my finishing time for Lyon–Paris?")
    assert asks_in_english("do I need a visa for Brazil")
    assert asks_in_english("never store money as floats")  # a tie ("as") is English


def test_a_pair_of_models_has_its_own_calibration() -> None:
    pair = calibration_for("use-m3-512+minilm-l6-int8")
    assert pair is CALIBRATIONS["use-m3+minilm"] and pair.second_rank != 0
    assert calibration_for("use-m3-512") is CALIBRATIONS["use-m3"]
    assert calibration_for("minilm-l6-int8") is CALIBRATIONS["minilm"]
    # a pair without a fit of its own falls back to its first model's
    assert calibration_for("minilm-l6-int8+use-m3-512") is CALIBRATIONS["minilm"]
    assert calibration_for("hashing-v1-4096") is CALIBRATIONS["hashing"]


def test_no_second_model_for_hashing_or_when_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from memcore.search.embeddings.hashing import HashingEmbedder

    assert companion_for(HashingEmbedder()) is None
    assert companion_for(None) is None and paired_id(None) == "hashing"
    monkeypatch.setitem(os.environ, ENV, "none")

    class _UseM3Id:  # only the id decides the pairing
        id = "use-m3-512"
        dim = 512
        default_merge_threshold = 0.8

    assert companion_for(_UseM3Id()) is None  # type: ignore[arg-type]
    assert paired_id(_UseM3Id()) == "use-m3-512"  # type: ignore[arg-type]


def _hits(ws: Workspace, query: str) -> list[dict]:
    from memcore.search.dense import sync_dense
    from memcore.search.query import search_embedder

    emb = search_embedder(ws)
    conn = open_index(ws)
    try:
        update_index(conn, ws)
        sync_dense(conn, emb)
        return query_index(conn, query, 5, explain=True, embedder=emb)
    finally:
        conn.close()


@pytest.mark.embed
@needs_pair
def test_an_english_question_is_ranked_by_both_models(
    pair_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    photos = ("memory/2026-07-01.md", 5)
    hits = _hits(pair_ws, "where do my holiday pictures end up")
    assert (hits[0]["path"], hits[0]["startLine"]) == photos
    assert all("second" in h for h in hits)
    # not an English sentence: ranked and scored by the first model alone
    de = _hits(pair_ws, "wo landen meine Urlaubsfotos")
    assert (de[0]["path"], de[0]["startLine"]) == photos
    assert not any("second" in h for h in de)
    monkeypatch.setitem(os.environ, ENV, "none")
    alone = _hits(pair_ws, "where do my holiday pictures end up")
    assert (alone[0]["path"], alone[0]["startLine"]) == photos
    assert not any("second" in h for h in alone)


@pytest.mark.embed
@needs_pair
def test_second_model_vectors_are_kept_incrementally(pair_ws: Workspace) -> None:
    from memcore.search.companion import sync_companion
    from memcore.search.dense import sync_dense
    from memcore.search.embeddings import get_embedder

    first, second = get_embedder("use-m3"), get_embedder("minilm")
    conn = open_index(pair_ws)
    try:
        update_index(conn, pair_ws)
        sync_dense(conn, first)  # brings the second model's vectors along
        n_chunks = conn.execute("SELECT count(*) FROM search_chunks").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM search_companion").fetchone()[0] == n_chunks
        assert sync_companion(conn, second) == 0  # nothing changed: no work
        note = pair_ws.memory_dir / "2026-07-02.md"
        note.write_text(note.read_text("utf-8") + "- Oil change due at 90,000 km.\n", "utf-8")
        update_index(conn, pair_ws)
        assert sync_companion(conn, second) == 1  # only the new chunk
        note.unlink()
        update_index(conn, pair_ws)
        sync_dense(conn, first)
        left = conn.execute(
            "SELECT count(*) FROM search_companion"
            " WHERE chunk NOT IN (SELECT id FROM search_chunks)"
        ).fetchone()[0]
        assert left == 0
        rows = conn.execute(
            "SELECT c.text, c.context, s.vec FROM search_companion s"
            " JOIN search_chunks c ON c.id = s.chunk"
        ).fetchall()
    finally:
        conn.close()
    import numpy as np

    from memcore.search.chunks import Chunk

    for text, context, blob in rows:  # each stored vector is its own chunk's
        want = second.embed([Chunk(0, 0, text, context).body])[0]
        got = np.frombuffer(blob, dtype=np.float32)
        assert float(got @ want) > 0.95, text


@pytest.mark.embed
@needs_pair
def test_minilm_on_two_threads_gives_the_vectors_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from memcore.search.embeddings import get_embedder, onnx

    emb = get_embedder("minilm")
    texts = [f"note {i}: the backup of folder {i % 7} runs at {i % 24}:00" for i in range(70)]
    assert len(texts) >= onnx.MIN_PARALLEL
    together = emb.embed(texts)  # the same batches, on the worker threads
    monkeypatch.setattr(onnx, "MIN_PARALLEL", len(texts) + 1)
    alone = emb.embed(texts)  # one after the other in this thread
    assert together.shape == (70, 384)
    assert np.array_equal(together, alone)


@pytest.mark.embed
@needs_pair
def test_a_chunk_id_used_again_never_inherits_a_second_model_vector(
    pair_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the second model off for a while, chunks come and go; once it is back, no new
    chunk may take the id (and so the stored MiniLM vector) of one deleted meanwhile."""
    import numpy as np

    from memcore.search.chunks import Chunk
    from memcore.search.dense import sync_dense
    from memcore.search.embeddings import get_embedder

    first, second = get_embedder("use-m3"), get_embedder("minilm")
    note = pair_ws.memory_dir / "2026-07-02.md"
    conn = open_index(pair_ws)
    try:
        update_index(conn, pair_ws)
        sync_dense(conn, first)
        monkeypatch.setitem(os.environ, ENV, "none")
        note.write_text(note.read_text("utf-8").replace("- Washer fluid refilled.\n", ""), "utf-8")
        update_index(conn, pair_ws)
        sync_dense(conn, first)  # use-m3 drops the deleted chunk's vectors; MiniLM's stay
        note.write_text(note.read_text("utf-8") + "- The spare key is with the neighbour.\n")
        update_index(conn, pair_ws)
        monkeypatch.setitem(os.environ, ENV, "auto")
        sync_dense(conn, first)
        rows = conn.execute(
            "SELECT c.text, c.context, s.vec FROM search_companion s"
            " JOIN search_chunks c ON c.id = s.chunk"
        ).fetchall()
    finally:
        conn.close()
    assert any("spare key" in text for text, _, _ in rows)
    for text, context, blob in rows:
        want = second.embed([Chunk(0, 0, text, context).body])[0]
        assert float(np.frombuffer(blob, dtype=np.float32) @ want) > 0.95, text


def test_a_chunks_place_by_the_second_model_is_its_place_in_a_stable_sort() -> None:
    import numpy as np

    from memcore.search.companion import Opinion

    ids = np.array([3, 5, 8, 13, 21, 34], dtype=np.int64)
    sims = np.array([0.2, 0.9, 0.5, 0.9, 0.5, 0.1], dtype=np.float32)  # two ties
    view = Opinion(ids, sims, top=3)
    # 0.9 (id 5) before 0.9 (id 13), then the first 0.5 (id 8): ties in position order
    assert view.nearest == [5, 13, 8]
    order = np.argsort(-sims, kind="stable")
    want = {int(ids[i]): place for place, i in enumerate(order, 1)}
    cos, places = view.of_many([13, 21, 8, 3, 99, 5])
    assert places == [want[13], want[21], want[8], want[3], 0, want[5]] == [2, 4, 3, 5, 0, 1]
    assert cos[4] == 0.0 and cos[0] == pytest.approx(0.9)
    assert view.of(34) == (pytest.approx(0.1), 6)


@pytest.mark.embed
@needs_pair
def test_the_second_models_query_vector_is_computed_beside_the_search(
    pair_ws: Workspace,
) -> None:
    import threading

    from memcore.search import dense
    from memcore.search.connections import IndexPool
    from memcore.search.query import search

    query = "where do my holiday pictures end up"
    pool = IndexPool()
    try:
        search(pair_ws, query, record=False, pool=pool)  # indexes, keeps the query's vectors
        kept = search(pair_ws, query, record=False, pool=pool).results  # nothing started
        dense._queries.clear()  # the second model's vector is now computed on a thread
        fresh = search(pair_ws, query, record=False, pool=pool).results
    finally:
        pool.close()
    assert fresh == kept and fresh[0]["path"] == "memory/2026-07-01.md"
    assert not [t for t in threading.enumerate() if t.name == "minilm-query"]  # joined
