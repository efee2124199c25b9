"""The dream cycle decides with the judge: supersessions with lineage, pinned entries, the
"newer wins unless the older is pinned" suggestion, a bounded review queue, the verdict cache."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memcore.dream import cycle, review, tables
from memcore.journal import runs as journal
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
STEPS = ("merge", "reconcile", "decay", "forget")


def marker(eid: str, **attrs: str) -> str:
    extra = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f'<!-- memcore:entry id="{eid}"{extra} -->\n'


def write(ws: Workspace, body: str) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n" + body, encoding="utf-8")


def ids(ws: Workspace) -> list[str]:
    return [e.id for e in parse(ws.memory_md.read_text(encoding="utf-8")).entries]


def run(ws: Workspace, now: datetime = NOW) -> dict:
    return cycle.run_cycle(ws, now=now, mode="auto", steps=STEPS)


def test_newer_entry_naming_the_old_value_supersedes_with_lineage(ws: Workspace) -> None:
    write(
        ws,
        marker("old", created="2026-10-01")
        + "- CI runs on Jenkins.\n"
        + marker("new", created="2026-11-01")
        + "- CI moved from Jenkins to Buildkite.\n",
    )
    res = run(ws)
    assert res["superseded"] == 1 and ids(ws) == ["new"]
    archive = ws.archive_path.read_text(encoding="utf-8")
    assert "superseded by new" in archive and "- CI runs on Jenkins." in archive
    with tables.connect(ws) as conn:
        run_id = journal.runs(conn)[0]["runId"]
        removed = [c for c in journal.changes_of(conn, run_id) if c.action == "remove"]
    assert [c.entry_id for c in removed] == ["old"]
    assert removed[0].reason.startswith("superseded by new")


def test_pinned_older_entry_stays_and_the_pair_waits_keeping_both(ws: Workspace) -> None:
    write(
        ws,
        marker("old", created="2026-10-01", pinned="true")
        + "- CI runs on Jenkins.\n"
        + marker("new", created="2026-11-01")
        + "- CI moved from Jenkins to Buildkite.\n",
    )
    res = run(ws)
    assert res["superseded"] == 0 and ids(ws) == ["old", "new"]
    (item,) = review.pending(ws)
    assert item["verdict"] == "supersedes" and item["suggested"] == "both"
    assert "pinned" in item["reason"]
    out = review.resolve(ws, item["itemId"], "both", now=NOW)
    assert out["status"] == "dismissed" and ids(ws) == ["old", "new"]
    assert run(ws, NOW + timedelta(hours=1))["reviewPending"] == 0  # not proposed again


def test_value_swap_waits_for_review_suggesting_the_newer(ws: Workspace) -> None:
    write(
        ws,
        marker("old", created="2026-10-01")
        + "- The payments service listens on port 8001.\n"
        + marker("new", created="2026-11-01")
        + "- The payments service listens on port 9001.\n",
    )
    res = run(ws)
    assert res["superseded"] == 0 and res["conflicts"] == 1 and ids(ws) == ["old", "new"]
    (item,) = review.pending(ws)
    assert item["a"]["id"] == "new" and item["suggested"] == "a"


def test_review_queue_takes_at_most_50_new_items_most_confident_first(ws: Workspace) -> None:
    services = [f"svc{n:03d}" for n in range(80)]
    body = "".join(
        marker(f"{s}-old", created="2026-10-01")
        + f"- The {s} service listens on port {8000 + n}.\n"
        + marker(f"{s}-new", created="2026-11-01")
        + f"- The {s} service listens on port {9000 + n}.\n"
        for n, s in enumerate(services)
    )
    write(ws, body)
    res = run(ws)
    assert res["conflicts"] >= 60
    assert res["reviewPending"] == cycle.REVIEW_LIMIT
    assert res["reviewOverflow"] == res["conflicts"] - cycle.REVIEW_LIMIT
    items = review.pending(ws)
    confidences = [i["confidence"] for i in items]
    assert confidences == sorted(confidences, reverse=True)
    res = run(ws, NOW + timedelta(hours=1))  # the next run adds the next ones, still bounded
    assert res["reviewPending"] <= 2 * cycle.REVIEW_LIMIT


def test_second_run_reads_verdicts_from_the_cache(ws: Workspace) -> None:
    write(ws, "- The docs site is built with MkDocs.\n- Docs are published to GitHub Pages.\n")
    run(ws)
    with tables.connect(ws) as conn:
        cached = conn.execute("SELECT count(*) FROM judge_verdicts").fetchone()[0]
    assert cached >= 1
    plan = cycle.preview(ws, now=NOW)
    assert plan.candidates == cached and plan.judge.startswith("offline-3+")


def test_same_day_conflict_suggests_keeping_both(ws: Workspace) -> None:
    """Nothing tells which of two same-day statements is current: the suggestion keeps both."""
    write(
        ws,
        marker("x", created="2026-10-01")
        + "- The Brindle invoice export runs at 04:00.\n"
        + marker("y", created="2026-10-01")
        + "- The Brindle invoice export runs at 05:30.\n",
    )
    res = run(ws)
    assert res["conflicts"] == 1 and ids(ws) == ["x", "y"]
    (item,) = review.pending(ws)
    assert item["verdict"] == "conflict" and item["suggested"] == "both"
    assert "same day" in item["reason"]


def test_uncertain_flag_suggests_keeping_both(ws: Workspace) -> None:
    """A negation on one side is a weak sign of a contradiction: queued, but the suggestion
    does not archive the older entry."""
    write(
        ws,
        marker("old", created="2026-09-01")
        + "- Brindle nightly backups are encrypted with age.\n"
        + marker("new", created="2026-11-01")
        + "- Brindle nightly backups are not encrypted with age.\n",
    )
    run(ws)
    (item,) = review.pending(ws)
    assert item["confidence"] < 0.7 and item["suggested"] == "both"
    assert "keep both" in item["reason"]
    review.resolve(ws, item["itemId"], item["suggested"], now=NOW)
    assert ids(ws) == ["old", "new"]
