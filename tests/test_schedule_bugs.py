"""Schedule bugs: an invalid config keeps every later slot, a cadence change never fires a past
slot, and two gateways on one workspace never run the same slot twice."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memcore.gateway import api
from memcore.gateway.scheduler import _trigger
from memcore.schedule import jobs as schedule
from memcore.schedule.jobs import JobState, compute_due, execute, load_state, recent_runs
from memcore.workspace.core import Workspace
from tests.test_gateway_helpers import gateway, make_ws
from tests.test_gateway_scheduler import jobs, once_job, wait_for  # noqa: F401

HOURLY = '[dreaming]\nmode = "core"\ncron = "0 * * * *"\ntimezone = "UTC"\n'
BROKEN = '[dreaming]\nmode = "core"\ncron = "0 * * * *"\ntimezone = "Mars/Base"\n'


def at(hour: int, minute: int = 0, day: int = 1) -> datetime:
    return datetime(2026, 5, day, hour, minute, tzinfo=UTC)


def test_invalid_config_keeps_every_later_slot(ws: Workspace) -> None:
    job = schedule.get_job("promote")
    ws.config_path.write_text(HOURLY, encoding="utf-8")
    assert compute_due(ws, job, at(10, 30))[0] == at(11)
    ws.config_path.write_text(BROKEN, encoding="utf-8")
    due, st = compute_due(ws, job, at(10, 40))
    assert due == at(11) and "Mars/Base" in (st.config_error or "")
    assert st.config_error_since == at(10, 40)
    execute(ws, job, at(11), trigger="schedule", slot=at(11))  # the slot fires
    due, st = compute_due(ws, job, at(11, 30))
    assert due == at(12), due  # the next slot of the last good schedule, not the spent one
    assert st.config_error_since == at(10, 40)
    execute(ws, job, at(12), trigger="schedule", slot=at(12))
    assert compute_due(ws, job, at(12, 5))[0] == at(13)
    out = api.status_payload(ws, at(12, 5))
    assert out["nextRunAt"]["utc"].startswith("2026-05-01T13:00")
    assert "since 2026-05-01T10:40" in out["scheduleNote"]


def test_cadence_change_schedules_from_now(ws: Workspace) -> None:
    job = schedule.get_job("promote")
    ws.config_path.write_text('[dreaming]\nmode = "core"\ntimezone = "UTC"\n', encoding="utf-8")
    schedule.save_state(ws, JobState("promote", created_at=at(3, day=1), last_slot=at(3, day=3)))
    assert compute_due(ws, job, at(9, day=3))[0] == at(3, day=4)
    ws.config_path.write_text('[dreaming]\nmode = "rem"\ntimezone = "UTC"\n', encoding="utf-8")
    due, st = compute_due(ws, job, at(10, day=3))
    assert due == at(12, day=3), due  # not the 06:00 slot already past
    assert _trigger(due, st, at(1, day=3)) == "config-change"
    execute(ws, job, due, trigger="config-change", slot=due)
    due2, st = compute_due(ws, job, at(12, 1, day=3))
    assert due2 == at(18, day=3) and _trigger(due2, st, at(1, day=3)) == "schedule"


def test_a_slot_is_claimed_once(ws: Workspace) -> None:
    job = schedule.get_job("promote")
    ws.config_path.write_text(HOURLY, encoding="utf-8")
    first = execute(ws, job, at(11), trigger="schedule", slot=at(11), owner="gw-a")
    second = execute(ws, job, at(11), trigger="schedule", slot=at(11), owner="gw-b")
    assert first.status != "claimed" and second.status == "claimed"
    assert len(recent_runs(ws, job="promote")) == 1


def test_two_gateways_run_a_slot_once_and_the_second_says_so(
    tmp_path: Path,
    jobs,  # noqa: F811
    caplog,
) -> None:
    ws = make_ws(tmp_path / "ws")
    ran: list[str] = []
    started = threading.Event()
    release = threading.Event()

    def slow(w: Workspace, now: datetime) -> dict:
        ran.append("x")
        started.set()
        release.wait(30)  # still running when the second gateway looks at the slot
        return {}

    once_job("t-once", slow, jobs)
    with (
        caplog.at_level(logging.INFO, logger="memcore"),
        gateway([ws], max_sleep=0.1) as (_one, _c1, _),
    ):
        started.wait(20)
        with gateway([ws], max_sleep=0.1) as (two, _c2, _):
            try:
                wait_for(lambda: "slot already claimed" in caplog.text or len(ran) > 1)
            finally:
                release.set()
            wait_for(lambda: load_state(ws, "t-once").last_status == "ok")
            assert two.gateway.scheduler.peers
    assert ran == ["x"]
    assert len(recent_runs(ws, job="t-once")) == 1
    assert "another gateway serves" in caplog.text


def test_first_run_after_a_restart_is_still_startup() -> None:
    st = JobState("promote", last_slot=at(3), created_at=at(1))
    assert _trigger(at(9), st, at(10)) == "startup"
    assert _trigger(at(11), st, at(10)) == "schedule"
    assert _trigger(at(11), JobState("p", cadence_since=at(10)), at(1)) == "config-change"
    assert timedelta(0) == timedelta(0)
