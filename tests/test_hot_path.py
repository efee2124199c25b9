"""The hot commands load only what they use: ``memory record`` runs in every agent turn, so a
heavy import (numpy, the gateway's Starlette stack, the MCP SDK) would tax each search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memcore.workspace.core import Workspace

ROOT = Path(__file__).resolve().parents[1]
#: Packages a recording has no use for.
FORBIDDEN = (
    "numpy",
    "starlette",
    "uvicorn",
    "anyio",
    "mcp",
    "pydantic",
    "memcore.gateway",
    "memcore.mcp",
    "memcore.search",
    "memcore.dream",
    "memcore.judge",
    "memcore.promotion",
    "memcore.sessions",
    "click",  # a plain recording takes memcore.cli.fast, not the click tree
    "memcore.cli.root",
    "filelock",  # the workspace lock takes flock(2) itself (memcore.workspace.flock)
)


def _imported(stderr: str) -> set[str]:
    """Module names from ``python -X importtime`` output."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_memory_record_imports_no_heavy_package(ws: Workspace) -> None:
    (ws.root / "memory" / "2026-11-20.md").write_text("# Notes\n\n- The cron runs at 02:00.\n")
    hits = [{"path": "memory/2026-11-20.md", "startLine": 3, "endLine": 3, "score": 0.8,
             "snippet": "- The cron runs at 02:00."}]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memcore", "-w", str(ws.root),
         "memory", "record", "-q", "cron", "--json"],
        input=json.dumps(hits), capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["recorded"] == 1
    names = _imported(proc.stderr)
    assert "memcore.recall.store" in names, "importtime output was read"
    heavy = sorted(n for n in names if n.split(".")[0] in FORBIDDEN or n.startswith(FORBIDDEN))
    assert heavy == [], heavy
