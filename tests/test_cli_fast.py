"""The short path of ``memcore memory record`` (no click) must behave exactly as the click
command: the same output, errors and exit codes for the same command line and input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memcore.cli.fast import parse
from memcore.workspace.core import Workspace

ROOT = Path(__file__).resolve().parents[1]
HIT = {"path": "memory/2026-11-20.md", "startLine": 3, "endLine": 3, "score": 0.8,
       "snippet": "- The cron runs at 02:00."}  # fmt: skip
CLICK = "import sys; from memcore.cli.root import cli; sys.argv[0] = 'memcore'; cli()"


def _run(how: list[str], args: list[str], stdin: str, env: dict[str, str]) -> tuple:
    proc = subprocess.run(
        [sys.executable, *how, *args], input=stdin, capture_output=True, text=True, cwd=ROOT,
        timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr


CASES = [
    (["memory", "record", "-q", "cron"], json.dumps([HIT]), {}),
    (["memory", "record", "--query=cron", "--json", "--origin", "agent"], json.dumps([HIT]), {}),
    (["memory", "record", "-q", "cron", "--origin=schedule"], json.dumps({"results": [HIT]}), {}),
    (["memory", "record", "-q", "cron"], "not json", {}),
    (["memory", "record", "-q", "cron"], '{"a": 1}', {}),
    (["memory", "record", "-q", "cron"], "[NaN]", {}),
    (["memory", "record", "-q", "cron"], json.dumps([{**HIT, "path": "/etc/x.md"}]), {}),
    (["memory", "record", "-q", "cron"], json.dumps([HIT]), {"MEMCORE_NOW": "yesterday"}),
]


@pytest.mark.parametrize(("args", "stdin", "env"), CASES)
def test_short_path_matches_the_click_command(
    ws: Workspace, tmp_path: Path, args: list[str], stdin: str, env: dict[str, str]
) -> None:
    (ws.root / "memory" / "2026-11-20.md").write_text("# Notes\n\n- The cron runs at 02:00.\n")
    twin = tmp_path / "twin"
    shutil.copytree(ws.root, twin)
    assert parse(["-w", str(ws.root), *args]) is not None, "the case takes the short path"
    fast = _run(["-m", "memcore"], ["-w", str(ws.root), *args], stdin, env)
    slow = _run(["-c", CLICK], ["-w", str(twin), *args], stdin, env)
    assert fast == tuple(
        x.replace(str(twin), str(ws.root)) if isinstance(x, str) else x for x in slow
    )
    stored = [ws.store_path.exists(), (twin / "memory/.dreams/short-term-recall.json").exists()]
    assert stored[0] == stored[1]


def test_a_missing_workspace_is_the_same_error(tmp_path: Path) -> None:
    args = ["-w", str(tmp_path / "nowhere"), "memory", "record", "-q", "x"]
    fast = _run(["-m", "memcore"], args, "[]", {})
    slow = _run(["-c", CLICK], args, "[]", {})
    assert fast == slow and fast[0] != 0 and fast[2].startswith("Error: ")


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "record", "-q", "x", "--help"],
        ["-v", "memory", "record", "-q", "x"],
        ["memory", "record", "-q", "x", "--lock-timeout", "3"],
        ["memory", "record", "-q", "x", "-q", "y"],
        ["memory", "record", "-q", "  "],
        ["memory", "record", "-q", "-x"],
        ["memory", "record", "--origin", "nonsense", "-q", "x"],
        ["memory", "record"],
        ["memory", "search", "x"],
        ["-w", "a", "-w", "b", "memory", "record", "-q", "x"],
        ["memory", "record", "-q", "x", "-w", "a"],
        ["--version"],
        [],
    ],
)
def test_anything_else_goes_to_click(argv: list[str]) -> None:
    assert parse(argv) is None


def test_the_short_path_parses_what_click_parses() -> None:
    assert parse(["-w", "W", "memory", "record", "-q", "x"]) == ("W", "x", "interactive", False)
    assert parse(["--workspace=W", "memory", "record", "--query", "x y", "--json"]) == (
        "W", "x y", "interactive", True)  # fmt: skip
    assert parse(["memory", "record", "--origin", "agent", "-q", "x"]) == (
        None, "x", "agent", False)  # fmt: skip
