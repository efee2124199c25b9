"""The last good settings are kept in memcore.sqlite: a gateway restarted while memcore.toml
is invalid still runs the last good schedule, and its status says since when the file is
invalid and which settings it runs on."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx

from memcore.gateway.server import bind_socket
from memcore.schedule import jobs as schedule
from memcore.workspace import last_good
from memcore.workspace.core import Workspace
from tests.conftest import wait_healthy
from tests.test_gateway_helpers import seed_candidate

GOOD = '[dreaming]\nmode = "core"\ncron = "17 * * * *"\ntimezone = "UTC"\nlimit = 7\n'
BROKEN = '[dreaming]\nmode = "core"\ncron = "17 * * * *"\ntimezone = "Mars/Base"\nlimit = 7\n'


@contextlib.contextmanager
def real_gateway(ws: Workspace) -> Iterator[httpx.Client]:
    """``memcore gateway -w WS`` in its own process (a real start and a real stop)."""
    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    taken.close()
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        "MEMCORE_TOKEN": "t",
    }
    cmd = [sys.executable, "-m", "memcore", "gateway", "-w", str(ws.root), "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, timeout=60)
        with httpx.Client(base_url=url, timeout=60) as client:
            yield client
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0


def test_a_gateway_restarted_on_an_invalid_config_keeps_the_last_good_schedule(
    ws: Workspace,
) -> None:
    ws.config_path.write_text(GOOD, encoding="utf-8")
    with real_gateway(ws) as client:
        before = client.get("/api/status").json()
    assert before["mode"] == "core" and before["cron"] == "17 * * * *" and before["limit"] == 7
    assert before["configError"] is None
    ws.config_path.write_text(BROKEN, encoding="utf-8")
    with real_gateway(ws) as client:  # a new process: nothing of the first one in memory
        first = client.get("/api/status").json()
        time.sleep(0.05)
        again = client.get("/api/status").json()
    assert "Mars/Base" in first["configError"]
    # the last good settings, not the defaults (mode off, no schedule)
    assert first["mode"] == "core" and first["cron"] == "17 * * * *" and first["limit"] == 7
    assert first["timezone"] == "UTC"
    nxt = datetime.fromisoformat(first["nextRunAt"]["utc"].replace("Z", "+00:00"))
    assert nxt.minute == 17 and nxt > datetime.now(UTC)
    assert first["jobs"]["promote"]["nextRunAt"]["utc"] == first["nextRunAt"]["utc"]
    since = first["configErrorSince"]
    assert since and again["configErrorSince"] == since  # since when, not since this poll
    assert f"since {since}" in first["scheduleNote"]
    assert first["lastGoodSettingsAt"] and first["lastGoodSettingsAt"] in first["scheduleNote"]
    assert first["lastGoodSettingsAt"] < since


AFTER_RESTART = """
import json, sys
from pathlib import Path
from memcore.schedule import jobs as schedule
from memcore.workspace.clock import utcnow
from memcore.workspace.core import Workspace

schedule.load_job_modules()
ws, job, now = Workspace(Path(sys.argv[1])), schedule.get_job("promote"), utcnow()
due, state = schedule.compute_due(ws, job, now)
out = schedule.execute(ws, job, due, trigger="schedule", slot=due)
print(json.dumps({"due": due.isoformat(), "error": state.config_error, "status": out.status,
                  "runError": out.error, "result": out.result}))
"""


def test_the_promote_slot_runs_on_the_stored_settings_after_a_restart(ws: Workspace) -> None:
    import json

    now = datetime.now(UTC)
    seed_candidate(ws, now)
    ws.config_path.write_text(GOOD, encoding="utf-8")
    schedule.compute_due(ws, schedule.get_job("promote"), now)  # a gateway saw the good config
    ws.config_path.write_text(BROKEN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run(  # a new process: nothing of this one in memory
        [sys.executable, "-c", AFTER_RESTART, str(ws.root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert datetime.fromisoformat(out["due"]).minute == 17 and "Mars/Base" in out["error"]
    assert out["status"] == "ok", out["runError"]  # was: failed, "no dreaming settings"
    assert out["result"]["promoted"] == 1
    assert "The staging database password" in ws.memory_md.read_text(encoding="utf-8")


def test_a_valid_config_polled_again_writes_nothing(ws: Workspace) -> None:
    from memcore.promotion.jobs import dreaming_settings_for

    ws.config_path.write_text(GOOD, encoding="utf-8")
    assert dreaming_settings_for(ws)[1] is None
    stored = last_good.recall(ws, "dreaming")
    assert stored is not None and stored[0]["limit"] == 7
    mtime = ws.db_path.stat().st_mtime_ns
    for _ in range(5):
        dreaming_settings_for(ws)
    assert ws.db_path.stat().st_mtime_ns == mtime
    ws.config_path.write_text(GOOD.replace("limit = 7", "limit = 3"), encoding="utf-8")
    dreaming_settings_for(ws)
    last_good.forget_cached()
    got = last_good.recall(ws, "dreaming")
    assert got is not None and got[0]["limit"] == 3
