"""Start-up time of the ``memcore`` command: ``--help``, a ``memory record`` and the MCP
handshake.

``memcore --help`` lists every command, so it imports every CLI module (never library code);
the target is <= 100 ms. ``memory record`` records one search's 10 hits into a 1,000-entry
store (target <= 80 ms); ``mcp initialize`` is the time from starting ``memcore mcp`` to its
answer to ``initialize`` (target <= 1 s), and ``mcp tools/list`` to the answer after it (the
SDK loaded). The baseline rows show what the interpreter and click cost alone on this
machine. Wall time in a fresh interpreter (median and minimum of ``--runs``) and the child's
CPU time, which a busy machine inflates much less::

    python bench/bench_cli.py --runs 20
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

CASES = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "python -c 'import click' (baseline)": [sys.executable, "-c", "import click"],
    "memcore --help": [sys.executable, "-m", "memcore", "--help"],
    "memcore memory --help": [sys.executable, "-m", "memcore", "memory", "--help"],
    "memcore --version": [sys.executable, "-m", "memcore", "--version"],
}


# As installed: bytecode is cached (a PYTHONDONTWRITEBYTECODE environment would make every
# run compile every module).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(cmd: list[str], runs: int, stdin: bytes | None = None) -> tuple[float, float, float]:
    """Median and minimum wall ms, and median CPU ms (user + system) of the child."""
    run = {"check": True, "stdout": subprocess.DEVNULL, "cwd": ROOT, "env": ENV, "input": stdin}
    subprocess.run(cmd, **run)  # type: ignore[call-overload]  # warm-up
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, **run)  # type: ignore[call-overload]
        walls.append((time.perf_counter() - t0) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(walls), min(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()}, load average {load:.1f}"
    )
    print(f"{args.runs} runs, ms{'':25} wall median    min   cpu median")
    for name, cmd in CASES.items():
        med, low, cpu = measure(cmd, args.runs)
        print(f"{name:36} {med:11.1f} {low:6.1f} {cpu:12.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        from bench_recall import make_workspace, search_hits, synthetic_entries

        entries = synthetic_entries(1000)
        ws = make_workspace(Path(tmp) / "ws", entries)
        (ws.root / "memcore.toml").write_text("[dreaming]\nmax_entries = 100000\n")
        hits = json.dumps(search_hits(entries)).encode()
        cmd = [sys.executable, "-m", "memcore", "-w", str(ws.root), "memory", "record", "-q", "x"]
        med, low, cpu = measure(cmd, args.runs, hits)
        print(f"{'memory record (1k store, 10 hits)':36} {med:11.1f} {low:6.1f} {cpu:12.1f}")
        first, tools = zip(
            *(mcp_handshake(ws.root) for _ in range(max(3, args.runs // 4))), strict=True
        )
        print(f"{'mcp initialize answered':36} {statistics.median(first):11.1f} {min(first):6.1f}")
        print(f"{'mcp tools/list answered':36} {statistics.median(tools):11.1f} {min(tools):6.1f}")


def mcp_handshake(ws: Path) -> tuple[float, float]:
    """Wall ms from starting ``memcore mcp`` to its initialize answer, and to tools/list's."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}}  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcore", "mcp", "-w", str(ws)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(init).encode() + b"\n")
    proc.stdin.flush()
    proc.stdout.readline()
    t1 = time.perf_counter()
    for msg in (
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ):
        proc.stdin.write(json.dumps(msg).encode() + b"\n")
    proc.stdin.flush()
    proc.stdout.readline()
    t2 = time.perf_counter()
    proc.stdin.close()
    proc.wait()
    return (t1 - t0) * 1000, (t2 - t0) * 1000


if __name__ == "__main__":
    main()
