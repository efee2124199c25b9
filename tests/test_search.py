"""Memory search: chunking, incremental index, calibrated scores, recording that never fails."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcore.dream import tables
from memcore.recall.store import fold_pending, read_store, read_view
from memcore.search.index import _scan, load_df
from memcore.search.query import (
    RECORD_MIN_SCORE,
    chunk_markdown,
    index_stats,
    last_record_error,
    search,
)
from memcore.workspace.core import Workspace
from tests.conftest import held_lock

NOW = datetime(2026, 4, 10, 12, 0, tzinfo=UTC)

MEMORY_MD = """# Long-Term Memory

## Project
- The billing service is written in Go and owned by Alice; deploys go through ArgoCD.
- Staging database is Postgres 15 on db-staging.internal, port 5433.
- Release branches are cut every second Tuesday; hotfixes go to main with two approvals.

## Preferences
<!-- memcore:entry id="e1" -->
- The user prefers dark mode and vim keybindings in every editor.
- Write commit messages in the imperative mood, at most 72 characters in the subject line.
"""

NOTES = {
    "2026-04-01.md": """# 2026-04-01

## Standup
- Bob is out until Friday; Carol covers the on-call rotation.
- The flaky test in payments/refund_test.go fails only when run in parallel with the ledger tests.

## Migration
- Ran the Postgres 15 upgrade on staging: took 42 minutes, no errors, vacuum took another 10.
- Need to bump max_connections to 300 before the production upgrade.
""",
    "2026-04-02.md": """# 2026-04-02

Decisions:
- We switch the frontend build from webpack to Vite; cold builds drop from 90 s to 12 s.
- Feature flags move to Unleash; the old LaunchDarkly keys stay readable until June.

Notes from the security review: the JWT signing key rotates every 30 days and the rotation job
lives in infra/cron/rotate-keys.yaml. Nobody remembered where it was.

```sh
kubectl -n billing rollout restart deploy/billing-api
```
""",
    "2026-04-03.md": """# 2026-04-03

- Customer Acme reported duplicate invoices for March; the retry loop in the invoice worker
  did not check idempotency keys.
- Fixed by adding a unique index on (customer_id, period) and a dedupe step; deployed 16:40.
- Lunch: tried the new ramen place on 5th street, good but slow.
""",
    "2026-04-06.md": """# 2026-04-06

## Incidents
- Redis ran out of memory at 03:10; the eviction policy was noeviction. Switched to allkeys-lru.
- Sentry alert storm from the webhook relay: 4,000 events in ten minutes, all timeouts to Stripe.

## Reviews
- Carol's pull request for the ledger export needs a second reviewer before Thursday.
""",
    "deploy-runbook.md": """# Deploy runbook

1. Merge to main and wait for CI to go green.
2. ArgoCD syncs staging automatically; check the billing dashboard for 10 minutes.
3. Promote to production with `argocd app sync billing-prod`.
""",
}


def make_ws(root: Path) -> Workspace:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    for name, text in NOTES.items():
        (root / "memory" / name).write_text(text, encoding="utf-8")
    return Workspace(root)


@pytest.fixture
def mws(tmp_path: Path) -> Workspace:
    return make_ws(tmp_path / "ws")


def lines_of(ws: Workspace, path: str, start: int, end: int) -> str:
    text = (ws.root / path).read_text(encoding="utf-8")
    return "\n".join(text.split("\n")[start - 1 : end]).strip()


# -- chunking ---------------------------------------------------------------------------


def test_chunks_are_blocks_with_exact_line_ranges() -> None:
    text = NOTES["2026-04-02.md"]
    chunks = chunk_markdown(text)
    lines = text.split("\n")
    assert [(c.start_line, c.end_line) for c in chunks] == [(4, 4), (5, 5), (7, 8), (10, 12)]
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line]).strip()
    assert chunks[0].context == "Decisions"  # the label line is context, not chunk text
    assert "kubectl" in chunks[3].text and chunks[3].text.startswith("```")


def test_memory_md_bullets_are_one_chunk_each_without_headings_or_markers() -> None:
    chunks = chunk_markdown(MEMORY_MD)
    assert [(c.start_line, c.end_line) for c in chunks] == [
        (4, 4),
        (5, 5),
        (6, 6),
        (10, 10),
        (11, 11),
    ]
    assert all(not c.text.startswith("#") and "<!--" not in c.text for c in chunks)
    assert chunks[3].context == "Preferences"


def test_continuation_lines_front_matter_crlf_and_long_blocks() -> None:
    text = (
        "---\ntitle: x\n---\n# T\r\n- item one\r\n  continues here\r\n  - sub item\r\n"
        "- item two\r\n"
    )
    chunks = chunk_markdown(text)
    assert [(c.start_line, c.end_line) for c in chunks] == [(5, 7), (8, 8)]
    assert "\r" not in chunks[0].text
    long = "\n".join(f"line {i} " + "word " * 30 for i in range(40))
    parts = chunk_markdown(long)
    assert len(parts) > 1
    assert parts[0].start_line == 1 and parts[-1].end_line == 40
    for a, b in itertools.pairwise(parts):
        assert b.start_line == a.end_line + 1
    assert all(len(p.text) <= 800 for p in parts)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "",
                "# H",
                "- item",
                "  more",
                "text line",
                "```",
                "<!-- c -->",
                "1. x",
                "Label:",
                "---",
                "ü 日本",
            ]
        ),
        max_size=40,
    )
)
def test_chunk_ranges_are_ordered_disjoint_and_match_the_text(parts: list[str]) -> None:
    text = "\n".join(parts)
    lines = text.split("\n")
    last = 0
    for c in chunk_markdown(text):
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.start_line > last
        last = c.end_line
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line]).strip()
        assert c.text


# -- the index --------------------------------------------------------------------------


def test_scan_lists_exactly_the_workspace_markdown_files(mws: Workspace) -> None:
    (mws.memory_dir / "topics").mkdir()
    (mws.memory_dir / "topics" / "oncall.md").write_text("- page Carol\n", encoding="utf-8")
    (mws.memory_dir / ".hidden").mkdir()
    (mws.memory_dir / ".hidden" / "x.md").write_text("- no\n", encoding="utf-8")
    mws.ensure_dreams_dir()
    (mws.dreams_dir / "notes.md").write_text("- no\n", encoding="utf-8")
    found, problems = _scan(mws)
    assert set(found) == {mws.rel(p) for p in mws.markdown_files()}
    assert "memory/topics/oncall.md" in found and not problems


def test_incremental_index_rechunks_only_changed_files(mws: Workspace) -> None:
    first = search(mws, "postgres upgrade", record=False)
    assert first.index.rechunked == 6 and first.index.files == 6
    again = search(mws, "postgres upgrade", record=False)
    assert again.index.rechunked == 0
    note = mws.memory_dir / "2026-04-03.md"
    note.write_text(
        note.read_text(encoding="utf-8") + "- Acme asked for a credit note.\n", encoding="utf-8"
    )
    changed = search(mws, "credit note", record=False)
    assert changed.index.rechunked == 1
    assert changed.results[0]["path"] == "memory/2026-04-03.md"
    # a touch (new mtime, same bytes) re-reads but does not re-chunk
    old = time.time() - 3600
    os.utime(mws.memory_dir / "2026-04-01.md", (old, old))
    touched = search(mws, "redis eviction", record=False)
    assert touched.index.rechunked == 0 and touched.index.rehashed >= 1
    (mws.memory_dir / "2026-04-06.md").unlink()
    gone = search(mws, "redis eviction", record=False)
    assert gone.index.removed == 1
    assert all(h["path"] != "memory/2026-04-06.md" for h in gone.results)


def test_never_returns_stale_lines_after_an_edit(mws: Workspace) -> None:
    first = search(mws, "ramen place 5th street", record=False)
    assert (first.results[0]["startLine"], first.results[0]["endLine"]) == (6, 6)
    note = mws.memory_dir / "2026-04-03.md"
    text = note.read_text(encoding="utf-8")
    # same size and within the same second: the racy-stat rule must still catch it
    edited = text.replace("# 2026-04-03\n\n", "# 2026-04-03\n\n\n\n", 1).replace(
        "good but slow", "good & slow"
    )
    assert len(edited.encode()) == len(text.encode())
    st0 = note.stat()
    note.write_text(edited, encoding="utf-8")
    os.utime(note, ns=(st0.st_atime_ns, st0.st_mtime_ns))
    hit = search(mws, "ramen place 5th street", record=False).results[0]
    assert (hit["startLine"], hit["endLine"]) == (8, 8)
    assert lines_of(mws, hit["path"], 8, 8) == hit["snippet"]
    for h in search(mws, "invoice duplicate idempotency", record=False).results:
        assert lines_of(mws, h["path"], h["startLine"], h["endLine"]) == h["snippet"]


def test_invalid_files_are_skipped_and_named(mws: Workspace) -> None:
    search(mws, "ramen", record=False)
    (mws.memory_dir / "2026-04-07.md").write_bytes(b"- caf\xe9 latin-1 text\n")
    (mws.memory_dir / "2026-04-08.md").write_bytes(b"- binary\x00junk\n")
    # a file indexed before and now broken must lose its chunks
    (mws.memory_dir / "2026-04-03.md").write_bytes(b"- ramen \xff\xfe\n")
    res = search(mws, "ramen", record=False)
    text = "\n".join(res.warnings)
    assert "memory/2026-04-07.md" in text and "UTF-8" in text
    assert "memory/2026-04-08.md" in text and "NUL" in text
    assert "memory/2026-04-03.md" in text
    assert all(h["path"] != "memory/2026-04-03.md" for h in res.results)
    assert search(mws, "postgres staging", record=False).results  # the rest still answers
    stats = index_stats(mws)
    assert {s["path"] for s in stats["skipped"]} == {
        "memory/2026-04-03.md",
        "memory/2026-04-07.md",
        "memory/2026-04-08.md",
    }


def test_index_stats_reports_freshness(mws: Workspace) -> None:
    before = index_stats(mws)
    assert before["exists"] is False and before["stale"] == 6 and before["fresh"] is False
    search(mws, "anything at all", record=False)
    stats = index_stats(mws)
    assert stats["files"] == 6 and stats["chunks"] > 15 and stats["dbBytes"] > 0
    old = time.time() - 3600
    for p in mws.markdown_files():
        os.utime(p, (old, old))
    search(mws, "settle the stat cache", record=False)
    assert index_stats(mws)["fresh"] is True
    (mws.memory_dir / "2026-04-09.md").write_text("- new note\n", encoding="utf-8")
    assert index_stats(mws)["stale"] == 1


# -- scores -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "path", "start"),
    [
        ("how long did the Postgres 15 upgrade on staging take", "memory/2026-04-01.md", 8),
        ("webpack to Vite cold build time", "memory/2026-04-02.md", 4),
        ("JWT signing key rotation job", "memory/2026-04-02.md", 7),
        ("Acme duplicate invoices retry loop", "memory/2026-04-03.md", 3),
        ("who owns the billing service", "MEMORY.md", 4),
        ("Redis eviction policy out of memory", "memory/2026-04-06.md", 4),
    ],
)
def test_targeted_query_scores_high_on_its_chunk(
    mws: Workspace, query: str, path: str, start: int
) -> None:
    top = search(mws, query, record=False).results[0]
    assert (top["path"], top["startLine"]) == (path, start)
    assert top["score"] >= 0.85


@pytest.mark.parametrize(
    "query",
    [
        "deploy",
        "billing",
        "production database backups",
        "editor theme colours",
        "kubectl cluster autoscaling",
    ],
)
def test_loose_queries_score_well_below(mws: Workspace, query: str) -> None:
    """A query that only brushes the notes still finds them, but well below a targeted one."""
    hits = search(mws, query, record=False).results
    assert hits, f"{query!r} should match something"
    assert max(h["score"] for h in hits) < 0.7, hits
    targeted = search(mws, "postgres upgrade", record=False).results[0]["score"]
    assert max(h["score"] for h in hits) < targeted - 0.2


def test_query_sharing_no_word_with_the_notes_finds_nothing(mws: Workspace) -> None:
    assert search(mws, "kubernetes cluster autoscaling", record=False).results == []


def test_scores_are_in_unit_range_sorted_and_stable(mws: Workspace) -> None:
    queries = [
        "postgres",
        "the",
        "!!!",
        "deploy billing staging production",
        "ramen",
        "Ärger 日本語",
    ]
    for q in queries:
        hits = search(mws, q, record=False, limit=50).results
        scores = [h["score"] for h in hits]
        assert all(0.0 <= s <= 1.0 for s in scores)
        assert scores == sorted(scores, reverse=True)
    a = search(mws, "postgres upgrade", record=False, limit=1).results[0]["score"]
    b = search(mws, "postgres upgrade", record=False, limit=20).results[0]["score"]
    assert a == b  # a hit's score does not depend on how many results are asked for
    assert search(mws, "!!!", record=False).results == []


def test_non_english_text_is_searchable(mws: Workspace) -> None:
    (mws.memory_dir / "2026-04-09.md").write_text(
        "- Деплой биллинга только по вторникам и четвергам.\n"
        "- Die Datenbank läuft auf Port 5433.\n",
        encoding="utf-8",
    )
    ru = search(mws, "деплой по вторникам", record=False).results[0]
    de = search(mws, "Datenbank Port", record=False).results[0]
    assert (ru["path"], ru["startLine"]) == ("memory/2026-04-09.md", 1)
    assert (de["path"], de["startLine"]) == ("memory/2026-04-09.md", 2)
    assert ru["score"] >= 0.85


# -- recording --------------------------------------------------------------------------


def test_search_records_daily_note_hits_only(mws: Workspace) -> None:
    res = search(mws, "billing deploy staging postgres", now=NOW, limit=20)
    paths = {h["path"] for h in res.results}
    assert "MEMORY.md" in paths and "memory/deploy-runbook.md" in paths  # found, but...
    store = read_store(mws, now=NOW)
    stored = {e["path"] for e in store.entries.values()}
    assert stored and stored <= {f"memory/{n}" for n in NOTES if n[0].isdigit()}
    daily = [h for h in res.results if h["path"].startswith("memory/2026")]
    daily_hits = [h for h in daily if h["score"] >= RECORD_MIN_SCORE]
    side_hits = [h for h in daily if h["score"] < RECORD_MIN_SCORE]
    assert daily_hits and side_hits  # the query grazes some notes: returned, not recalled
    assert res.recorded == len(daily_hits)
    assert res.record_error is None
    for h in daily_hits:
        e = store.entries[f"memory:{h['path']}:{h['startLine']}:{h['endLine']}"]
        assert e["recallCount"] == 1 and e["maxScore"] == pytest.approx(h["score"])
        assert e["lastRecalledAt"] == "2026-04-10T12:00:00.000Z"
    for h in side_hits:
        assert f"memory:{h['path']}:{h['startLine']}:{h['endLine']}" not in store.entries


def test_record_false_writes_nothing(mws: Workspace) -> None:
    search(mws, "postgres upgrade", record=False)
    assert not mws.store_path.exists()


def test_recording_failure_never_fails_the_search(mws: Workspace) -> None:
    mws.ensure_dreams_dir()
    mws.store_path.mkdir()  # the store cannot be read or written
    res = search(mws, "postgres upgrade staging", now=NOW)
    assert res.results and res.results[0]["score"] >= 0.85
    assert res.record_error and "recall recording failed" in res.record_error
    saved = last_record_error(mws)
    assert saved is not None
    assert (
        saved["query"] == "postgres upgrade staging" and saved["at"] == "2026-04-10T12:00:00.000Z"
    )
    assert "resolvedAt" not in saved
    mws.store_path.rmdir()
    ok = search(mws, "postgres upgrade staging", now=NOW)
    assert ok.record_error is None and ok.recorded >= 1
    assert last_record_error(mws)["resolvedAt"] == "2026-04-10T12:00:00.000Z"


def test_invalid_config_does_not_fail_the_search(mws: Workspace) -> None:
    mws.config_path.write_text('[dreaming]\nmode = "sometimes"\n', encoding="utf-8")
    res = search(mws, "ramen place", now=NOW)
    assert res.results and res.record_error and "sometimes" in res.record_error
    assert not mws.store_path.exists()


def test_lock_held_elsewhere_does_not_block_the_search(mws: Workspace) -> None:
    with held_lock(mws):
        res = search(mws, "ramen place", now=NOW, lock_timeout=0.2)
        assert res.results and res.record_error is None and res.recorded == 1
        assert not mws.store_path.exists()  # waiting in the recall log
    res = search(mws, "ramen", now=NOW)
    (entry,) = orjson.loads(mws.store_path.read_bytes())["entries"].values()
    assert entry["recallCount"] == 2


def test_memory_md_hits_count_as_ledger_accesses(mws: Workspace) -> None:

    res = search(mws, "dark mode vim keybindings editor", now=NOW)
    assert res.results[0]["path"] == "MEMORY.md" and res.results[0]["startLine"] == 10
    with tables.connect(mws) as conn:
        rows = conn.execute(
            "SELECT access_count, last_accessed_at FROM dream_ledger WHERE access_count > 0"
        ).fetchall()
    assert rows and all(r[1] == "2026-04-10T12:00:00.000Z" for r in rows)
    assert not read_store(mws, now=NOW).entries.get("memory:MEMORY.md:10:10")


def test_chinese_and_japanese_text_is_searchable(mws: Workspace) -> None:
    (mws.memory_dir / "2026-04-09.md").write_text(
        "- 生产环境只在周二和周四部署。\n- データベースのバックアップは毎晩3時に実行される。\n",
        encoding="utf-8",
    )
    zh = search(mws, "什么时候部署生产环境", record=False).results[0]
    ja = search(mws, "バックアップは何時", record=False).results[0]
    assert (zh["path"], zh["startLine"]) == ("memory/2026-04-09.md", 1)
    assert (ja["path"], ja["startLine"]) == ("memory/2026-04-09.md", 2)
    assert search(mws, "部署", record=False).results[0]["startLine"] == 1


def test_concurrent_searches_build_one_consistent_index(mws: Workspace) -> None:
    code = (
        "import sys; from pathlib import Path; from memcore.search.query import search;"
        "from memcore.workspace.core import Workspace;"
        "r = search(Workspace(Path(sys.argv[1])), 'postgres upgrade staging');"
        "print(r.results[0]['path'], r.results[0]['startLine'], r.record_error)"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(mws.root)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=50)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs == ["memory/2026-04-01.md 8 None"] * 4
    stats = index_stats(mws)
    single = make_ws(mws.root.parent / "single")
    search(single, "postgres", record=False)
    assert stats["chunks"] == index_stats(single)["chunks"] and stats["files"] == 6
    # no lost update between the four recorders: what is not folded yet waits in the log
    key = "memory:memory/2026-04-01.md:8:8"
    assert read_view(mws, NOW).entries[key]["recallCount"] == 4
    with mws.lock():
        fold_pending(mws, NOW)
    assert read_store(mws).entries[key]["recallCount"] == 4


def test_edit_reuses_unchanged_chunks_and_moves_their_lines(mws: Workspace) -> None:
    from memcore.search.query import open_index

    search(mws, "billing", record=False)
    text = mws.memory_md.read_text(encoding="utf-8")
    edited = text.replace("## Project\n", "## Project\n- A new first entry about Kafka.\n\n", 1)
    edited = edited.replace("port 5433", "port 5434")
    mws.memory_md.write_text(edited, encoding="utf-8")
    res = search(mws, "Kafka entry", record=False)
    assert res.index.rechunked == 1
    assert (res.results[0]["path"], res.results[0]["startLine"]) == ("MEMORY.md", 4)
    conn = open_index(mws)
    try:
        rows = conn.execute("SELECT path, start_line, end_line, text FROM search_chunks").fetchall()
        fts_hits = conn.execute(
            "SELECT count(*) FROM search_fts WHERE search_fts MATCH '\"5433\"'"
        ).fetchone()[0]
    finally:
        conn.close()
    for path, start, end, chunk_text in rows:
        assert lines_of(mws, path, start, end) == chunk_text
    assert fts_hits == 0  # the old text left the full-text index too
    fresh = make_ws(mws.root.parent / "fresh")
    fresh.memory_md.write_text(edited, encoding="utf-8")
    assert len(rows) == search(fresh, "Kafka", record=False).index.chunks
    # the incrementally kept document frequencies equal those of a fresh build
    dfs = []
    for w in (mws, fresh):
        conn = open_index(w)
        try:
            dfs.append(load_df(conn))
        finally:
            conn.close()
    assert dfs[0][1] == dfs[1][1] and (dfs[0][0] == dfs[1][0]).all()


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0, 1e4),
    st.floats(0, 1e4),
    st.floats(-1, 1),
    st.floats(0, 1),
    st.floats(0, 10),
    st.floats(0, 0.5),
)
def test_hit_score_is_bounded_and_monotone(
    bm25: float, ref: float, cos: float, spec: float, more_bm25: float, more_cos: float
) -> None:
    from memcore.search.query import hit_score

    score, lexical, semantic = hit_score(bm25, ref, cos, spec)
    assert 0.0 <= score <= 1.0 and 0.0 <= lexical <= 1.0 and 0.0 <= semantic <= 1.0
    assert hit_score(bm25 + more_bm25, ref, cos, spec)[0] >= score
    assert hit_score(bm25, ref, min(1.0, cos + more_cos), spec)[0] >= score


def test_deep_index_stats_hashes_content(mws: Workspace) -> None:
    search(mws, "postgres", record=False)
    note = mws.memory_dir / "2026-04-01.md"
    st0 = note.stat()
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("Bob", "Rob"), encoding="utf-8")  # same size
    os.utime(note, ns=(st0.st_atime_ns, st0.st_mtime_ns))  # same mtime: stat cannot tell
    assert index_stats(mws, deep=True)["stale"] == 1
    assert search(mws, "Rob out until Friday", record=False).results[0]["startLine"] == 4
    assert index_stats(mws, deep=True)["stale"] == 0


def test_recording_can_be_turned_off(ws: Workspace) -> None:
    from memcore.search.query import search

    (ws.memory_dir / "2026-11-21.md").write_text(
        "# Notes\n\n- The billing cron runs at 02:00 UTC every night.\n", encoding="utf-8"
    )
    ws.config_path.write_text("[search]\nrecord = false\n", encoding="utf-8")
    res = search(ws, "billing cron")
    assert res.results and res.recorded == 0 and res.record_error is None
    assert not ws.store_path.exists()
    ws.config_path.write_text('[search]\nrecord = "no"\n', encoding="utf-8")
    res = search(ws, "billing cron")
    assert res.results and "[search] record = 'no' is not a boolean" in res.record_error
