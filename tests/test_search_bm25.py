"""The search's bm25 of a query, put together from each term's part (kept per index version),
equals FTS5's bm25 of the OR query to the last bit, before and after the notes change."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memcore.search.query import (
    _fts_phrase,
    _index_figures,
    _or_bm25,
    open_index,
    query_terms,
    update_index,
)
from memcore.workspace.core import Workspace

NOTES = {
    "memory/2026-03-02.md": (
        "# 2026-03-02\n\n## Boat\n\n"
        "- The boat's outboard motor was serviced at Hafen Nord; new spark plugs, 140 EUR.\n"
        "- Boat insurance renewal is due in April; the broker is Lindholm.\n"
        "- Bought a second fender for the boat.\n"
    ),
    "memory/2026-03-03.md": (
        "# 2026-03-03\n\n## House\n\n"
        "- The boiler service is booked for Thursday; the motor of the pump hums.\n"
        "- Spark plugs for the lawn mower are in the garage drawer.\n"
    ),
    "MEMORY.md": "# Long-Term Memory\n\n- The boat is moored at Hafen Nord, berth 12.\n",
}


def _fts5(conn: sqlite3.Connection, terms: list[str]) -> dict[int, float]:
    match = " OR ".join(_fts_phrase(t) for t in terms)
    return dict(
        conn.execute(
            "SELECT rowid, -bm25(search_fts, 1.0, 0.3) FROM search_fts WHERE search_fts MATCH ?",
            (match,),
        ).fetchall()
    )


def _ours(conn: sqlite3.Connection, terms: list[str]) -> dict[int, float]:
    ids, scores = _or_bm25(conn, _index_figures(conn), terms)
    assert list(ids) == sorted(ids)
    return dict(zip(ids.tolist(), scores.tolist(), strict=True))


def test_the_terms_parts_add_up_to_fts5s_bm25_of_the_or_query(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    ws = Workspace(root)
    conn = open_index(ws)
    try:
        update_index(conn, ws)
        asked = [
            "boat motor spark plugs",
            "motor boat",  # the same terms in another order: added in that order
            "Hafen Nord berth",
            "boat",
        ]
        for q in asked:
            terms = query_terms(q)
            assert _ours(conn, terms) == _fts5(conn, terms), q
        # a term asked twice (a corrected spelling that is also in the query) counts twice
        assert _ours(conn, ["boat", "motor", "boat"]) == _fts5(conn, ["boat", "motor", "boat"])
        before = _ours(conn, ["boat", "motor"])

        # the notes change: the kept parts of the old version are not used
        note = root / "memory/2026-03-03.md"
        note.write_text(
            note.read_text(encoding="utf-8") + "- The boat trailer needs a new motor mount.\n",
            encoding="utf-8",
        )
        update_index(conn, ws)
        after = _ours(conn, ["boat", "motor"])
        assert after == _fts5(conn, ["boat", "motor"])
        assert after != before
        for q in asked:
            terms = query_terms(q)
            assert _ours(conn, terms) == _fts5(conn, terms), q
    finally:
        conn.close()
