"""The gateway's scheduler loop with a real server: due runs, failures, catch-up, shutdown."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memcore.schedule import jobs as schedule
from memcore.schedule.jobs import (
    Job,
    JobState,
    load_state,
    recent_runs,
    register_job,
    unregister_job,
)
from memcore.workspace.clock import utcnow
from memcore.workspace.core import Workspace
from tests.test_gateway_helpers import gateway, make_ws, seed_candidate


def wait_for(cond, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


@pytest.fixture
def jobs() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for n in names:
        unregister_job(n)


def once_job(name: str, run, jobs: list[str], only: Path | None = None) -> Job:
    """Due once right after the gateway first sees it; ``only`` limits it to one workspace."""

    def next_due(ws: Workspace, now: datetime, state: JobState) -> datetime | None:
        if only is not None and ws.root != only:
            return None
        return None if state.last_slot else state.created_at

    jobs.append(name)
    return register_job(Job(name, next_due, run))


def test_due_jobs_run_and_a_failure_does_not_stop_others(tmp_path: Path, jobs, caplog) -> None:
    a, b = make_ws(tmp_path / "a"), make_ws(tmp_path / "b")
    ran: list[Path] = []

    def boom(ws: Workspace, now: datetime) -> dict:
        raise RuntimeError("disk on fire")

    def fine(ws: Workspace, now: datetime) -> dict:
        ran.append(ws.root)
        return {"things": 3}

    once_job("t-boom", boom, jobs, only=a.root)
    once_job("t-fine", fine, jobs)
    with (
        caplog.at_level("INFO", logger="memcore"),
        gateway([a, b], max_sleep=0.2) as (_, client, _),
    ):
        wait_for(lambda: len(ran) == 2)
        wait_for(lambda: load_state(a, "t-boom").last_status == "failed")
        st = client.get("/api/status?workspace=a").json()
    assert sorted(ran) == sorted([a.root, b.root])
    boom_state = st["jobs"]["t-boom"]
    assert boom_state["consecutiveFailures"] == 1 and "disk on fire" in boom_state["lastError"]
    assert "run failed" in caplog.text and "Traceback" in caplog.text
    assert "run end" in caplog.text and "things=3" in caplog.text
    fine_runs = recent_runs(b, job="t-fine")
    assert len(fine_runs) == 1 and fine_runs[0]["result"] == {"things": 3}
    assert len(recent_runs(a, job="t-boom")) == 1  # the failed slot is consumed, not retried


def test_missed_promote_slots_run_once_at_startup(ws: Workspace) -> None:
    ws.config_path.write_text('[dreaming]\nmode = "rem"\ntimezone = "UTC"\n', encoding="utf-8")
    seed_candidate(ws)
    now = utcnow()
    long_ago = (now - timedelta(days=3)).replace(hour=0, minute=0, second=0, microsecond=0)
    schedule.save_state(ws, JobState("promote", created_at=long_ago, last_slot=long_ago))
    with gateway([ws], max_sleep=0.2) as (_, client, _):
        wait_for(
            lambda: recent_runs(ws, job="promote") and recent_runs(ws)[0]["status"] != "running"
        )
        time.sleep(0.5)  # a burst would show up as more runs here
        runs = recent_runs(ws, job="promote")
        st = client.get("/api/status").json()
    assert len(runs) == 1
    assert runs[0]["trigger"] == "startup" and runs[0]["status"] == "ok"
    assert runs[0]["result"]["promoted"] == 1
    assert st["promotedTotal"] == 1
    nxt = datetime.fromisoformat(st["nextRunAt"]["utc"].replace("Z", "+00:00"))
    assert now < nxt <= now + timedelta(hours=6)


def test_shutdown_records_running_job_as_interrupted(ws: Workspace, jobs) -> None:
    started, release = threading.Event(), threading.Event()

    def slow(w: Workspace, now: datetime) -> dict:
        started.set()
        release.wait(30)
        return {}

    once_job("t-slow", slow, jobs)
    try:
        with gateway([ws], max_sleep=0.2, shutdown_grace=0.3) as (_, client, _):
            assert started.wait(20)
            res = client.post("/api/memories/dream", json={})
            assert res.status_code == 409  # the workspace is busy
        runs = recent_runs(ws, job="t-slow")
        assert runs[0]["status"] == "interrupted"
        st = load_state(ws, "t-slow")
        assert not st.running and st.last_status == "interrupted"
    finally:
        release.set()


def test_idle_loop_sleeps(ws: Workspace) -> None:
    with gateway([ws], max_sleep=30) as (running, _client, _):
        wait_for(lambda: running.gateway.scheduler.ticks >= 1)
        time.sleep(0.6)
        ticks = running.gateway.scheduler.ticks
    assert ticks == 1  # nothing due: one tick, then asleep


def test_config_change_through_api_wakes_the_loop(ws: Workspace) -> None:
    with gateway([ws], max_sleep=30) as (running, client, _):
        wait_for(lambda: running.gateway.scheduler.ticks >= 1)
        assert running.gateway.scheduler.next_wake is not None
        client.post("/api/commands", json={"text": "/dreaming core"})
        wait_for(lambda: running.gateway.scheduler.ticks >= 2)
        wait_for(lambda: load_state(ws, "promote").next_run_at is not None)
    due = load_state(ws, "promote").next_run_at
    assert due is not None and due > datetime.now(UTC)


def test_a_job_due_again_right_after_its_run_does_not_loop(ws: Workspace, jobs) -> None:
    calls: list[datetime] = []

    def skip(w: Workspace, now: datetime) -> dict:
        calls.append(now)
        raise schedule.JobSkipped("nothing yet")

    jobs.append("t-eager")
    register_job(Job("t-eager", lambda w, now, st: now, skip))  # always "due now"
    with gateway([ws], max_sleep=0.1) as (running, _client, _):
        wait_for(lambda: len(calls) == 1)
        ticks = running.gateway.scheduler.ticks
        wait_for(lambda: running.gateway.scheduler.ticks >= ticks + 3)
    assert len(calls) == 1
    assert recent_runs(ws, job="t-eager")[0]["status"] == "skipped"


def test_vanished_workspace_is_reported_and_others_run(tmp_path: Path, jobs, caplog) -> None:
    import shutil

    a, b = make_ws(tmp_path / "alpha"), make_ws(tmp_path / "beta")
    armed = threading.Event()
    ran: list[Path] = []

    def next_due(w: Workspace, now: datetime, state: JobState) -> datetime | None:
        return None if not armed.is_set() or state.last_slot else now

    def run(w: Workspace, now: datetime) -> dict:
        ran.append(w.root)
        return {}

    jobs.append("t-armed")
    register_job(Job("t-armed", next_due, run))
    with (
        caplog.at_level("INFO", logger="memcore"),
        gateway([a, b], max_sleep=0.1) as (
            running,
            client,
            _,
        ),
    ):
        wait_for(lambda: running.gateway.scheduler.ticks >= 1)
        shutil.rmtree(b.root)
        armed.set()
        wait_for(lambda: ran == [a.root])
        wait_for(lambda: "beta" in running.gateway.scheduler.errors)
        assert client.get("/api/status?workspace=alpha").status_code == 200
    assert "does not exist" in running.gateway.scheduler.errors["beta"]
    assert "workspace error" in caplog.text
