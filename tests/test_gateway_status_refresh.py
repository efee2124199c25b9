"""``GET /api/status`` while searches record: the why-not figures are computed again at most
once per ``STATUS_REFRESH`` when only the recall store changed, at once for anything else."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memcore.gateway import api
from memcore.recall.store import record_recalls
from memcore.workspace.core import Workspace
from tests.test_gateway_helpers import gateway, seed_candidate, seed_weak

NOW = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)


def _recall(ws: Workspace, line: int, now: datetime) -> None:
    """One search's hit on line ``line`` of the day's note, recorded in the store."""
    rel = f"memory/{now.date().isoformat()}.md"
    record_recalls(
        ws,
        f"query about line {line}",
        [{"path": rel, "startLine": line, "endLine": line, "score": 0.9, "snippet": f"L{line}"}],
        now=now,
    )


def _note(ws: Workspace, now: datetime) -> None:
    lines = "\n".join(f"Fact {i} about the espresso machine." for i in range(1, 9))
    (ws.memory_dir / f"{now.date().isoformat()}.md").write_text(lines + "\n", encoding="utf-8")


def test_recordings_show_within_the_refresh_interval(ws: Workspace) -> None:
    _note(ws, NOW)
    _recall(ws, 1, NOW)
    assert api.status_payload(ws, NOW)["shortTermCount"] == 1
    _recall(ws, 2, NOW)  # a search recorded: only the store changed
    soon = NOW + api.STATUS_REFRESH / 2
    assert api.status_payload(ws, soon)["shortTermCount"] == 1  # the figures of NOW
    later = NOW + api.STATUS_REFRESH
    assert api.status_payload(ws, later)["shortTermCount"] == 2  # computed again
    assert api.status_payload(ws, later)["shortTermCount"] == 2


def test_anything_but_the_store_shows_at_once(ws: Workspace) -> None:
    _note(ws, NOW)
    _recall(ws, 1, NOW)
    assert api.status_payload(ws, NOW)["longTermCount"] == 0
    _recall(ws, 2, NOW)
    ws.memory_md.write_text("# Long-Term Memory\n\n- one\n", encoding="utf-8")
    st = api.status_payload(ws, NOW + timedelta(milliseconds=1))
    assert (st["shortTermCount"], st["longTermCount"]) == (2, 1)
    _recall(ws, 3, NOW)
    ws.config_path.write_text('[dreaming]\nmode = "core"\n', encoding="utf-8")
    st = api.status_payload(ws, NOW + timedelta(milliseconds=2))
    assert (st["shortTermCount"], st["mode"]) == (3, "core")
    _recall(ws, 4, NOW)
    api.forget_status(ws)  # the gateway changed the store itself
    assert api.status_payload(ws, NOW + timedelta(milliseconds=3))["shortTermCount"] == 4


def test_a_clock_set_back_computes_again(ws: Workspace) -> None:
    _note(ws, NOW)
    _recall(ws, 1, NOW)
    assert api.status_payload(ws, NOW)["shortTermCount"] == 1
    _recall(ws, 2, NOW)
    earlier = NOW - timedelta(seconds=1)  # not "within the interval" of NOW
    assert api.status_payload(ws, earlier)["shortTermCount"] == 2


def test_a_change_made_through_the_gateway_shows_in_the_next_status(ws: Workspace) -> None:
    seed_candidate(ws)
    with gateway([ws], scheduler=False) as (_, client, _served):
        assert client.get("/api/status").json()["shortTermCount"] == 1
        seed_weak(ws)  # the store changed (a second entry)
        preview = client.post("/api/memories/promote", json={"apply": False})
        assert preview.status_code == 200, preview.text
        assert client.get("/api/status").json()["shortTermCount"] == 2
