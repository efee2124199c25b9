"""A full disk or a read-only workspace: one line on stderr, exit 1, every file as it was,
nothing moved aside, and the next run with space back converges. (bench/bench_diskfull.py
runs the whole sweep: every step of four commands, a tmpfs at 11 fill levels.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from memcore.recall.store import record_recalls
from memcore.workspace.clock import utcnow
from memcore.workspace.core import Workspace

ROOT = Path(__file__).resolve().parent.parent
MEMCORE = [
    sys.executable,
    "-c",
    f"import sys; sys.path.insert(0, {str(ROOT)!r}); from memcore.cli import main; main()",
]
NOTE = "# 2026-11-28\n\n- The staging database is db-stg-02 in eu-west-1.\n"
BASE = "# Long-Term Memory\n\n- Keep pull requests under 400 lines.\n"
# root ignores file modes; without these capabilities it honours them like anyone else
DROP_CAPS = (
    ["setpriv", "--bounding-set=-dac_override,-fowner,-dac_read_search", "--"]
    if os.geteuid() == 0
    else []
)


def _workspace(ws: Workspace) -> Workspace:
    ws.memory_md.write_text(BASE, encoding="utf-8")
    (ws.memory_dir / "2026-11-28.md").write_text(NOTE, encoding="utf-8")
    hit = {
        "path": "memory/2026-11-28.md",
        "startLine": 3,
        "endLine": 3,
        "score": 0.95,
        "snippet": NOTE.split("\n")[2],
    }
    base = utcnow().replace(microsecond=0)
    for i in range(4):
        record_recalls(ws, f"q-{i}", [hit], now=base - timedelta(hours=i + 1))
    return ws


def _files(ws: Workspace) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for dirpath, _dirs, names in os.walk(ws.root):
        for n in names:
            p = Path(dirpath) / n
            rel = p.relative_to(ws.root).as_posix()
            if rel.endswith(("-wal", "-shm", ".checked")):
                continue  # SQLite's side files and the quick_check stamp
            out[rel] = p.read_bytes() if not rel.endswith(".sqlite") else b"db"
    return out


def _run(*args: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(prefix or []), *MEMCORE, *args], capture_output=True, text=True, timeout=120
    )


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _memory_md_write(trace: str) -> int:
    """N such that the N-th write() is the one that writes MEMORY.md's temp file."""
    n = 0
    for line in trace.splitlines():
        m = re.match(r"^(?:\d+\s+)?write\((\d+)<([^>]*)>", line)
        if m is None:
            continue
        n += 1
        if "/.MEMORY.md." in m.group(2):
            return n
    raise AssertionError("promote --apply never wrote MEMORY.md")


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_enospc_on_the_memory_md_write_changes_nothing_and_the_next_run_converges(
    ws: Workspace, tmp_path: Path
) -> None:
    _workspace(ws)
    clean = Workspace(tmp_path / "clean")
    shutil.copytree(ws.root, clean.root)
    trace = tmp_path / "trace.txt"
    traced = _run(
        "-w",
        str(clean.root),
        "memory",
        "promote",
        "--apply",
        prefix=["strace", "-f", "-qq", "-y", "-o", str(trace), "-e", "trace=write"],
    )
    assert traced.returncode == 0, traced.stderr
    after = clean.memory_md.read_bytes()
    n = _memory_md_write(trace.read_text(errors="replace"))
    before = _files(ws)
    inject = [
        "strace",
        "-f",
        "-qq",
        "-o",
        "/dev/null",
        "-e",
        "trace=write",
        "-e",
        f"inject=write:error=ENOSPC:when={n}",
    ]
    proc = _run("-w", str(ws.root), "memory", "promote", "--apply", prefix=inject)
    line = _one_line_error(proc)
    assert "No space left on device" in line and "rolled back" in line, line
    assert _files(ws) == before  # no temp file, nothing set aside, every byte as it was
    again = _run("-w", str(ws.root), "memory", "promote", "--apply")
    assert again.returncode == 0, again.stderr
    assert ws.memory_md.read_bytes() == after
    assert not ws.pending_run_path.exists()


@pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("setpriv") is None, reason="root without setpriv"
)
@pytest.mark.parametrize("what", ["workspace", "memcore.sqlite"])
def test_a_read_only_workspace_or_database_gives_one_line_and_changes_nothing(
    ws: Workspace, what: str
) -> None:
    _workspace(ws)
    assert ws.db_path.exists()
    before = _files(ws)
    targets = (
        [ws.db_path]
        if what == "memcore.sqlite"
        else [Path(d) / n for d, _s, ns in os.walk(ws.root) for n in ns]
        + [Path(d) for d, _s, _n in os.walk(ws.root)]
    )
    modes = {p: p.stat().st_mode for p in targets}
    for p in targets:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        for args in (["memory", "promote", "--apply"], ["dream", "--auto"]):
            proc = _run("-w", str(ws.root), *args, prefix=DROP_CAPS)
            line = _one_line_error(proc)
            assert "read-only" in line or "Permission denied" in line, line
            assert _files(ws) == before
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    again = _run("-w", str(ws.root), "memory", "promote", "--apply")
    assert again.returncode == 0, again.stderr
    assert "db-stg-02" in ws.memory_md.read_text(encoding="utf-8")
