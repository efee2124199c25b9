"""The width of a batch of one workspace's searches: 2 threads unless MEMCORE_SEARCH_THREADS
says otherwise; a value out of range stops the gateway at start with one line naming it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memcore.errors import ConfigError
from memcore.gateway.app import LANE_WIDTH, SEARCH_WORKERS, lane_width


def test_lane_width_default_and_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCORE_SEARCH_THREADS", raising=False)
    assert lane_width() == LANE_WIDTH == 2
    for raw, want in (("1", 1), (" 4 ", 4), (str(SEARCH_WORKERS), SEARCH_WORKERS)):
        monkeypatch.setenv("MEMCORE_SEARCH_THREADS", raw)
        assert lane_width() == want
    for bad in ("0", "17", "two", "-1", "²"):
        monkeypatch.setenv("MEMCORE_SEARCH_THREADS", bad)
        with pytest.raises(ConfigError, match=r"MEMCORE_SEARCH_THREADS.*from 1 to 16"):
            lane_width()


def test_a_gateway_with_a_bad_width_exits_1_naming_it(tmp_path: Path) -> None:
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    env = {
        **os.environ,
        "MEMCORE_SEARCH_THREADS": "64",
        "MEMCORE_USER_DIR": str(tmp_path / "user"),
        "MEMCORE_TOKEN": "t",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "memcore", "gateway", "-w", str(tmp_path / "ws"), "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert "MEMCORE_SEARCH_THREADS='64'" in last and "from 1 to 16" in last
    assert "Traceback" not in proc.stderr
