"""The schedule: cron slots in a zone (DST), catch-up without bursts, job state, failures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memcore.schedule import jobs as schedule
from memcore.schedule.jobs import (
    Job,
    JobSkipped,
    JobState,
    compute_due,
    cron_next_due,
    cron_slots_after,
    execute,
    load_state,
    mark_interrupted,
    recent_runs,
    register_job,
    unregister_job,
)
from memcore.workspace.core import Workspace

NY = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")


def test_fall_back_repeated_hour_fires_once() -> None:
    start = datetime(2024, 11, 2, 12, tzinfo=NY)
    slots = cron_slots_after("30 1 * * *", NY, start, 3)
    assert [s.date().day for s in slots] == [3, 4, 5]
    assert all((s.hour, s.minute) == (1, 30) for s in slots)


def test_fall_back_state_after_first_run_skips_the_repeat() -> None:
    first = datetime(2024, 11, 3, 1, 30, tzinfo=NY)  # EDT instance, 05:30Z
    state = JobState(
        "promote", created_at=first - timedelta(days=1), last_slot=first.astimezone(UTC)
    )
    # one hour later the wall clock reads 01:30 again (EST); it must not be due again
    now = datetime(2024, 11, 3, 6, 31, tzinfo=UTC)
    due = cron_next_due("30 1 * * *", NY, now, state)
    assert due.astimezone(NY).date().day == 4


def test_spring_forward_missing_time_fires_at_three() -> None:
    slots = cron_slots_after("30 2 * * *", NY, datetime(2024, 3, 9, 12, tzinfo=NY), 2)
    assert (slots[0].day, slots[0].hour, slots[0].minute) == (10, 3, 0)
    assert (slots[1].day, slots[1].hour, slots[1].minute) == (11, 2, 30)


def test_slots_are_in_the_configured_zone() -> None:
    slot = cron_slots_after("0 3 * * *", BERLIN, datetime(2026, 7, 1, 12, tzinfo=UTC))[0]
    assert slot.astimezone(UTC) == datetime(2026, 7, 2, 1, 0, tzinfo=UTC)


def test_missed_slots_catch_up_once_never_a_burst() -> None:
    created = datetime(2026, 1, 1, 0, 0, tzinfo=UTC)
    state = JobState("promote", created_at=created, last_slot=datetime(2026, 1, 1, 6, tzinfo=UTC))
    now = datetime(2026, 1, 3, 7, 15, tzinfo=UTC)  # down for two days: many 6-hour slots missed
    due = cron_next_due("0 */6 * * *", UTC, now, state)
    assert due == datetime(2026, 1, 3, 6, 0, tzinfo=UTC)  # the latest missed slot only
    state.last_slot = due
    assert cron_next_due("0 */6 * * *", UTC, now, state) == datetime(2026, 1, 3, 12, tzinfo=UTC)


def test_new_job_does_not_fire_for_slots_before_it_was_seen() -> None:
    now = datetime(2026, 1, 3, 7, 15, tzinfo=UTC)
    state = JobState("promote", created_at=now)
    assert cron_next_due("0 3 * * *", UTC, now, state) == datetime(2026, 1, 4, 3, tzinfo=UTC)


@pytest.fixture
def counting_job():
    calls: list[datetime] = []

    def run(ws: Workspace, now: datetime) -> dict:
        calls.append(now)
        if len(calls) == 2:
            raise RuntimeError("boom")
        if len(calls) == 3:
            raise JobSkipped("nothing to do")
        return {"done": len(calls)}

    job = register_job(Job("test-count", lambda ws, now, st: now, run))
    yield job, calls
    unregister_job("test-count")


def test_execute_records_ok_failure_skip(ws: Workspace, counting_job) -> None:
    job, _calls = counting_job
    now = datetime(2026, 5, 1, 3, tzinfo=UTC)
    out = execute(ws, job, now, slot=now)
    assert out.status == "ok" and out.result == {"done": 1}
    st = load_state(ws, job.name)
    assert st.last_slot == now and not st.running and st.consecutive_failures == 0

    out = execute(ws, job, now + timedelta(hours=1), slot=now + timedelta(hours=1))
    assert out.status == "failed" and "boom" in (out.error or "")
    st = load_state(ws, job.name)
    assert st.consecutive_failures == 1 and st.last_result == {"done": 1}
    assert st.last_slot == now + timedelta(hours=1)  # a failed slot is consumed too: no retry storm

    out = execute(ws, job, now + timedelta(hours=2))
    assert out.status == "skipped" and out.result["skipped"] == "nothing to do"
    assert load_state(ws, job.name).consecutive_failures == 0

    runs = recent_runs(ws, 10)
    assert [r["status"] for r in runs] == ["skipped", "failed", "ok"]
    assert runs[1]["error"] == "RuntimeError: boom"


def test_failure_is_logged_with_traceback(ws: Workspace, counting_job, caplog) -> None:
    job, _calls = counting_job
    now = datetime(2026, 5, 1, 3, tzinfo=UTC)
    execute(ws, job, now)
    with caplog.at_level("INFO", logger="memcore.schedule.jobs"):
        execute(ws, job, now)
    text = caplog.text
    assert "run failed" in text and "Traceback" in text and "job=test-count" in text


def test_mark_interrupted_closes_running_rows(ws: Workspace) -> None:
    now = datetime(2026, 5, 1, 3, tzinfo=UTC)
    st = JobState("promote", created_at=now, running=True)
    schedule.save_state(ws, st)
    schedule._start_run(ws, "promote", "schedule", now, now)
    assert mark_interrupted(ws, now) == 1
    assert recent_runs(ws)[0]["status"] == "interrupted"
    st = load_state(ws, "promote")
    assert not st.running and st.last_status == "interrupted"


def test_promote_due_follows_config_and_keeps_last_good(ws: Workspace) -> None:
    now = datetime(2026, 5, 1, 10, tzinfo=UTC)
    job = schedule.get_job("promote")
    due, _ = compute_due(ws, job, now)
    assert due is None  # mode off by default
    ws.config_path.write_text('[dreaming]\nmode = "rem"\ntimezone = "UTC"\n', encoding="utf-8")
    due, st = compute_due(ws, job, now)
    assert due == datetime(2026, 5, 1, 12, tzinfo=UTC) and st.config_error is None
    ws.config_path.write_text(
        '[dreaming]\nmode = "rem"\ntimezone = "Mars/Base"\n', encoding="utf-8"
    )
    due2, st = compute_due(ws, job, now)
    assert due2 == due
    assert st.config_error and "Mars/Base" in st.config_error
    ws.config_path.write_text('[dreaming]\nmode = "core"\ntimezone = "UTC"\n', encoding="utf-8")
    due3, st = compute_due(ws, job, now)
    assert due3 == datetime(2026, 5, 2, 3, tzinfo=UTC) and st.config_error is None


def test_promote_limit_zero_is_skipped(ws: Workspace, caplog) -> None:
    ws.config_path.write_text('[dreaming]\nmode = "core"\nlimit = 0\n', encoding="utf-8")
    ws.memory_md.write_text("# Long-Term Memory\n", encoding="utf-8")
    now = datetime(2026, 5, 1, 3, tzinfo=UTC)
    with caplog.at_level("INFO", logger="memcore.schedule.jobs"):
        out = execute(ws, schedule.get_job("promote"), now, slot=now)
    assert out.status == "skipped" and out.result["skipped"] == "limit = 0"
    assert "limit = 0" in caplog.text
    assert ws.memory_md.read_text(encoding="utf-8") == "# Long-Term Memory\n"


def test_vanished_workspace_fails_clearly(tmp_path) -> None:
    gone = Workspace(tmp_path / "gone")
    with pytest.raises(Exception, match="does not exist"):
        compute_due(gone, schedule.get_job("promote"), datetime(2026, 5, 1, tzinfo=UTC))
