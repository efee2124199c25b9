"""MEMCORE_NOW: one clock for every command, and a one-line error for a bad value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from memcore.errors import InputError
from memcore.workspace.clock import fixed_now, utcnow
from memcore.workspace.core import Workspace


def test_fixed_now_forms() -> None:
    assert fixed_now({}) is None
    assert fixed_now({"MEMCORE_NOW": " "}) is None
    assert fixed_now({"MEMCORE_NOW": "2026-04-05"}) == datetime(2026, 4, 5, tzinfo=UTC)
    assert fixed_now({"MEMCORE_NOW": "2026-04-05T12:00:00+02:00"}) == datetime(
        2026, 4, 5, 10, tzinfo=UTC
    )
    with pytest.raises(InputError, match="MEMCORE_NOW='next tuesday' is not an ISO 8601"):
        fixed_now({"MEMCORE_NOW": "next tuesday"})


def test_utcnow_follows_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_NOW", "2030-01-02T03:04:05Z")
    assert utcnow() == datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    monkeypatch.delenv("MEMCORE_NOW")
    assert utcnow().year >= 2026


def _memcore(ws: Workspace, now: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMCORE_NOW": now}
    return subprocess.run(
        [sys.executable, "-m", "memcore", "-w", str(ws.root), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_commands_run_on_the_fixed_date(ws: Workspace) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n- The wiki moved to Notion.\n", "utf-8")
    res = _memcore(ws, "2031-05-06T07:08:09Z", "dream", "--auto", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["ranAt"] == "2031-05-06T07:08:09.000Z"


def test_bad_value_is_one_line_exit_2(ws: Workspace) -> None:
    res = _memcore(ws, "yesterday", "dream")
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "MEMCORE_NOW='yesterday'" in lines[0]
