"""The index build in batches: the same vectors, rows and document frequencies as chunk by
chunk, and a new chunk never takes the id of a deleted chunk that still has model vectors."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from memcore.search.chunks import Chunk
from memcore.search.embeddings.hashing import DIM, raw_features, raw_features_many
from memcore.search.index import INSERT_BATCH, load_df, open_index, update_index
from memcore.workspace.core import Workspace

TEXTS = [
    "The staging database moved to db2 on Tuesday.",
    "",
    "the a of and",
    "Ünïcödé straße naïve café, snake_case_name",
    "東京の会議は毎週月曜日に開かれる",
    "deploy deploy deploy rollback",
    "x" * 300,
]


def test_a_batch_gives_each_text_its_own_vector() -> None:
    many = raw_features_many(TEXTS * 3)
    for text, (idx, val) in zip(TEXTS * 3, many, strict=True):
        one_idx, one_val = raw_features(text)
        assert np.array_equal(idx, one_idx) and np.array_equal(val, one_val), text
        assert idx.dtype == np.uint16 and val.dtype == np.float32


def test_batched_build_matches_the_chunks_and_their_frequencies(ws: Workspace) -> None:
    for day in range(1, 29):
        lines = [f"- note {day} line {i}: deploy {i % 7} rollback {day % 5}" for i in range(200)]
        (ws.memory_dir / f"2026-02-{day:02d}.md").write_text("\n".join(lines) + "\n")
    conn = open_index(ws)
    report = update_index(conn, ws)
    assert report.chunks == 28 * 200 > INSERT_BATCH, "more than one batch"
    rows = conn.execute("SELECT id, text, context, vidx, vval FROM search_chunks").fetchall()
    df = np.zeros(DIM, np.int64)
    for cid, text, context, vidx, vval in rows:
        idx, val = raw_features(Chunk(0, 0, text, context).body)
        assert vidx == idx.tobytes() and vval == val.tobytes(), cid
        df[idx.astype(np.intp)] += 1
        fts = conn.execute("SELECT text FROM search_fts WHERE rowid = ?", (cid,)).fetchone()
        assert fts is not None
    stored_df, n = load_df(conn)
    assert n == len(rows) and np.array_equal(stored_df, df)
    hits = conn.execute("SELECT count(*) FROM search_fts WHERE search_fts MATCH 'rollback'")
    assert hits.fetchone()[0] == len(rows)


def test_new_chunks_skip_ids_that_still_have_model_vectors(ws: Workspace) -> None:
    note = ws.memory_dir / "2026-03-01.md"
    note.write_text("- first fact\n\n- second fact\n")
    conn = open_index(ws)
    update_index(conn, ws)
    (top,) = conn.execute("SELECT max(id) FROM search_chunks").fetchone()
    conn.execute("CREATE TABLE search_dense (id INTEGER PRIMARY KEY, chunk INTEGER, vec BLOB)")
    conn.execute("INSERT INTO search_dense (chunk, vec) VALUES (?, x'00')", (top,))
    conn.commit()
    note.write_text("- first fact\n\n- a third fact\n")  # the chunk with the top id goes
    update_index(conn, ws)
    ids = [r[0] for r in conn.execute("SELECT id FROM search_chunks ORDER BY id")]
    assert top not in ids and max(ids) > top


def _index_rows(ws: Workspace) -> tuple[set[tuple[object, ...]], set[tuple[object, ...]], object]:
    conn = open_index(ws)
    try:
        update_index(conn, ws)
        chunks = set(
            map(
                tuple,
                conn.execute(
                    "SELECT path, start_line, end_line, text, context, vidx, vval"
                    " FROM search_chunks"
                ),
            )
        )
        files = set(
            map(tuple, conn.execute("SELECT path, size, sha1, chunks, error FROM search_files"))
        )
        words = {
            w: conn.execute(
                "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?", (w,)
            ).fetchone()[0]
            for w in ("deploy", "rollback", "edited", "big", "東京")
        }
        df, n = load_df(conn)
        return chunks, files, (words, df.tobytes(), n)
    finally:
        conn.close()


def test_an_updated_index_is_the_index_built_from_scratch(ws: Workspace, tmp_path: Path) -> None:
    """New files (hashed on the helper thread, a file spanning batches) and edited ones
    (re-indexed in place) end in the rows, FTS entries and frequencies of a fresh build."""

    def note(name: str, n: int, word: str) -> None:
        lines = [f"- {word} {name} line {i}: deploy {i % 7} rollback {i % 5}" for i in range(n)]
        (ws.memory_dir / name).write_text("# Notes\n\n" + "\n".join(lines) + "\n")

    for day in range(1, 9):
        note(f"2026-04-{day:02d}.md", 300, "old")
    _index_rows(ws)
    note("2026-04-02.md", 320, "edited")  # an indexed file changes
    (ws.memory_dir / "2026-04-03.md").unlink()
    note("2026-05-01.md", 2 * INSERT_BATCH + 10, "big")  # a new file over two batches
    note("2026-05-02.md", 40, "東京")
    ws.memory_md.write_text("# Long-Term Memory\n\n- deploy on Tuesdays\n")
    updated = _index_rows(ws)
    fresh_root = tmp_path / "fresh"
    shutil.copytree(ws.root, fresh_root, ignore=shutil.ignore_patterns(".dreams"))
    assert updated == _index_rows(Workspace(fresh_root))
    assert len(updated[0]) > 2 * INSERT_BATCH
