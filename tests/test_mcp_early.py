"""``memcore mcp`` answers ``initialize`` before the SDK is loaded: the answer must be the one
the SDK gives (the SDK's own, dropped, is compared with it and a difference is reported on
stderr), every later message is the SDK's, and other first lines are left to the SDK."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memcore.mcp.stdio import HANDSHAKE_VERSIONS, early_answer
from memcore.workspace.core import Workspace

ROOT = Path(__file__).resolve().parents[1]


def _talk(
    ws: Workspace, messages: list[dict[str, Any] | str], answers: int
) -> tuple[list[dict[str, Any]], str]:
    """Send ``messages``, read ``answers`` lines, then close stdin (as a client does: the SDK
    stops at end of input, answered or not) and collect the rest."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcore", "mcp", "-w", str(ws.root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    for m in messages:
        proc.stdin.write((m if isinstance(m, str) else json.dumps(m)) + "\n")
    proc.stdin.flush()
    lines = [proc.stdout.readline() for _ in range(answers)]
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    return [json.loads(line) for line in [*lines, *out.splitlines()] if line.strip()], err


def _init(version: str, rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}  # fmt: skip


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_the_early_answer_is_the_sdks(ws: Workspace, version: str) -> None:
    tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    out, err = _talk(ws, [_init(version, "a"), INITIALIZED, tools], 2)
    assert "differs" not in err, err
    assert [m["id"] for m in out] == ["a", 2], "one answer each, the SDK's own initialize dropped"
    assert out[0]["result"]["protocolVersion"] == version
    assert out[0]["result"]["serverInfo"]["name"] == "memcore"
    assert "memory_search" in [t["name"] for t in out[1]["result"]["tools"]]


def test_other_first_lines_are_left_to_the_sdk(ws: Workspace) -> None:
    out, _ = _talk(ws, [_init("2099-01-01", 7), INITIALIZED], 1)
    assert [m["id"] for m in out] == [7]
    assert out[0]["result"]["protocolVersion"] == HANDSHAKE_VERSIONS[-1], "the SDK's choice"
    out, _ = _talk(ws, ["not json", _init(HANDSHAKE_VERSIONS[0], 8)], 1)
    assert [m.get("id") for m in out][-1] == 8
    assert out[-1]["result"]["protocolVersion"] == HANDSHAKE_VERSIONS[0]


def test_early_answer_takes_only_a_well_formed_handshake() -> None:
    good = _init("2025-06-18", 3)
    assert early_answer(json.dumps(good).encode(), "9.9")[0] == 3  # type: ignore[index]
    for bad in (
        {**good, "id": True},
        {**good, "id": None},
        {**good, "method": "ping"},
        {**good, "jsonrpc": "1.0"},
        {**good, "params": {**good["params"], "clientInfo": {"name": "x"}}},
        {**good, "params": {**good["params"], "capabilities": None}},
        {**good, "params": {**good["params"], "protocolVersion": "2026-07-28"}},
    ):
        assert early_answer(json.dumps(bad).encode(), "9.9") is None, bad
    assert early_answer(b"{", "9.9") is None


def test_the_early_path_imports_no_sdk() -> None:
    code = (
        "import sys, memcore.mcp.stdio\n"
        "sdk = ('mcp', 'mcp_types', 'pydantic', 'anyio')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in sdk))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout  # fmt: skip
    assert out.strip() == "[]"
