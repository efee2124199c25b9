"""The ``consolidate`` scheduler job and the review list for the Dreams page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memcore.errors import ConfigError
from memcore.schedule.jobs import JobState, get_job
from memcore.workspace.core import Workspace

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def test_consolidate_job_is_registered_and_due_by_interval(ws: Workspace) -> None:
    import memcore.dream.jobs  # noqa: F401 - registers the job

    job = get_job("consolidate")
    assert job.poll_seconds == 1800
    state = JobState(job="consolidate")
    assert job.next_due(ws, NOW, state) is None  # no MEMORY.md: nothing to consolidate
    ws.memory_md.write_text("# M\n", encoding="utf-8")
    # never ran: the first run is one interval after the scheduler first saw the workspace,
    # never at once (a gateway's first start applies nothing)
    assert job.next_due(ws, NOW, state) == NOW + timedelta(hours=24)
    seen = JobState(job="consolidate", created_at=NOW - timedelta(hours=30))
    assert job.next_due(ws, NOW, seen) == NOW - timedelta(hours=6)
    ws.memory_md.write_text(
        "# M\n\n- The cache TTL is 300 seconds.\n- The cache TTL is 300 seconds!\n",
        encoding="utf-8",
    )
    out = job.run(ws, NOW)
    assert (
        out["merged"] == 1 and out["remaining"] == 1 and out["ranAt"] == "2026-11-30T03:00:00.000Z"
    )
    # A manual run counts too: the last run lives in memcore.sqlite.
    assert job.next_due(ws, NOW + timedelta(minutes=30), state) == NOW + timedelta(hours=24)
    ws.config_path.write_text("[consolidation]\ninterval_hours = 6\n", encoding="utf-8")
    assert job.next_due(ws, NOW, state) == NOW + timedelta(hours=6)
    ws.config_path.write_text("[consolidation]\nenabled = false\n", encoding="utf-8")
    assert job.next_due(ws, NOW, state) is None
    ws.config_path.write_text("[consolidation]\ninterval_hours = 1000\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="interval_hours = 1000 is out of range"):
        job.next_due(ws, NOW, state)


def test_pending_review_list_for_the_page(ws: Workspace) -> None:
    from memcore.dream import cycle, review

    assert review.pending(ws) == []
    ws.memory_md.write_text(
        "# M\n\n- The API server listens on port 8080.\n- The API server listens on port 9090.\n",
        encoding="utf-8",
    )
    cycle.run_cycle(ws, now=NOW)
    items = review.pending(ws)
    assert [i["kind"] for i in items] == ["conflict"]
    item = items[0]
    assert set(item) >= {
        "itemId",
        "kind",
        "createdAt",
        "a",
        "b",
        "topic",
        "reason",
        "choices",
        "suggested",
    }
    assert item["choices"] == ["a", "b", "both", "skip"]
    with pytest.raises(Exception, match="not allowed"):
        review.resolve(ws, item["itemId"], "apply", now=NOW)
    assert review.resolve(ws, item["itemId"], "skip", now=NOW)["status"] == "pending"


@pytest.mark.parametrize("mode", ["off", "core"])
def test_consolidate_job_never_promotes(ws: Workspace, mode: str) -> None:
    import memcore.dream.jobs  # noqa: F401 - registers the job
    from memcore.recall import store as recall

    (ws.memory_dir / "2026-11-28.md").write_text(
        "# Notes\n\n- The staging database is db-stg-02 in eu-west.\n", encoding="utf-8"
    )
    hit = {
        "path": "memory/2026-11-28.md",
        "startLine": 3,
        "endLine": 3,
        "score": 0.95,
        "snippet": "- The staging database is db-stg-02 in eu-west.",
    }
    for i in range(4):
        recall.record_recalls(ws, f"staging db {i}", [hit], now=NOW - timedelta(hours=i + 1))
    ws.memory_md.write_text("# Long-Term Memory\n\n- Keep PRs small.\n", encoding="utf-8")
    ws.config_path.write_text(f'[dreaming]\nmode = "{mode}"\n', encoding="utf-8")
    out = get_job("consolidate").run(ws, NOW)
    assert out["promoted"] == 0  # promotion runs on the mode's cron only (the promote job)
    assert "db-stg-02" not in ws.memory_md.read_text()
