"""The consolidate and sessions jobs run on the last good settings while memcore.toml is
invalid, as the promote job does: kept in memcore.sqlite, so a gateway started on the broken
file (a new process) still schedules them and their slots run with those settings."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import httpx
import pytest

from memcore.dream.jobs import consolidation_settings_for
from memcore.schedule.state import load_state, save_state
from memcore.sessions.jobs import sessions_settings_for
from memcore.workspace import last_good
from memcore.workspace.core import Workspace
from tests.test_last_good import real_gateway

GOOD = "[consolidation]\ninterval_hours = 5\n\n[sessions]\nenabled = true\nmin_sessions = 3\n"
BROKEN = (
    '[consolidation]\ninterval_hours = "soon"\n\n[sessions]\nenabled = true\nmin_sessions = -1\n'
)


def _memory(ws: Workspace) -> None:
    ws.memory_md.write_text(
        "# Long-Term Memory\n\n- The staging database lives in eu-west-1.\n"
        "- Deploys happen on Tuesdays.\n",
        encoding="utf-8",
    )


@pytest.mark.timeout(300)  # two gateway processes and a dream cycle: slow under load
def test_a_gateway_started_on_an_invalid_config_runs_both_jobs_on_the_last_good_settings(
    ws: Workspace,
) -> None:
    _memory(ws)
    ws.config_path.write_text(GOOD, encoding="utf-8")
    with real_gateway(ws) as client:
        before = client.get("/api/status").json()["jobs"]
    assert before["consolidate"]["configError"] is None
    for name in ("consolidate", "sessions"):  # the gateway first saw the workspace 6 h ago
        state = load_state(ws, name)
        assert state.created_at is not None
        state.created_at -= timedelta(hours=6)
        state.next_run_at = None
        save_state(ws, state)
    ws.config_path.write_text(BROKEN, encoding="utf-8")
    with real_gateway(ws) as client:  # a new process: nothing of the first one in memory
        jobs = client.get("/api/status").json()["jobs"]
        runs = _wait_for_runs(client, ("consolidate", "sessions"))
    assert "interval_hours" in jobs["consolidate"]["configError"]
    assert "min_sessions" in jobs["sessions"]["configError"]
    # both slots were overdue on the last good cadence (5 h, hourly) and ran on its settings:
    # before, each failed with the config error
    assert runs["consolidate"]["status"] == "ok", runs["consolidate"]
    assert runs["consolidate"]["result"]["runId"]
    assert runs["sessions"]["status"] == "skipped", runs["sessions"]
    assert "3 needed" in json.dumps(runs["sessions"])  # the stored gate, not the default 5


def _wait_for_runs(client: httpx.Client, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The first finished run of each job in the gateway's run history (waits for them)."""
    deadline = time.monotonic() + 200
    while True:
        found: dict[str, dict[str, Any]] = {}
        for name in names:
            rows = client.get(f"/api/runs?job={name}&limit=5").json()["runs"]
            done = [r for r in rows if r.get("finishedAt")]
            if done:
                found[name] = done[-1]
        if len(found) == len(names):
            return found
        assert time.monotonic() < deadline, f"runs never finished: {found}"
        time.sleep(0.2)


def test_without_good_settings_ever_the_error_is_all_there_is(ws: Workspace) -> None:
    ws.config_path.write_text(BROKEN, encoding="utf-8")
    settings, err = consolidation_settings_for(ws)
    assert settings is None and err and "interval_hours" in err
    settings, err = sessions_settings_for(ws)
    assert settings is None and err and "min_sessions" in err


def test_stored_settings_come_back_as_they_were(ws: Workspace) -> None:
    ws.config_path.write_text(GOOD + 'independent = ["s1", "s2"]\n', encoding="utf-8")
    good, err = sessions_settings_for(ws)
    assert err is None and good is not None and good.independent == ("s1", "s2")
    assert consolidation_settings_for(ws)[1] is None
    ws.config_path.write_text(BROKEN, encoding="utf-8")
    last_good.forget_cached()  # as after a restart
    kept, err = sessions_settings_for(ws)
    assert err is not None and kept == good  # the tuple field is a tuple again
    kept_c, _ = consolidation_settings_for(ws)
    assert kept_c is not None and kept_c.interval_hours == 5
