"""One gateway process serving many workspaces: idle CPU, memory, and a scheduler tick.

Builds ``--workspaces`` small workspaces (a MEMORY.md, a week of daily notes, a recall store
of 200 entries, dreaming mode ``core``), starts one ``memcore gateway`` serving them all on a
free 127.0.0.1 port, waits for the start-up runs to finish, then measures:

- the gateway's resident memory (VmRSS) and its CPU over ``--idle-seconds`` of idleness;
- a scheduler tick in this process (``Scheduler.tick``: every job's due time derived for every
  workspace from its config and state), median of ``--ticks``;
- ``GET /api/status`` of one workspace, median of 50.

Usage: ``python bench/bench_fleet.py [--workspaces 100] [--idle-seconds 20] [--ticks 20]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gateway import cpu_seconds, free_port, wait_up

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token"


def make_workspace(root: Path, i: int) -> None:
    mem = root / "memory"
    (mem / ".dreams").mkdir(parents=True)
    now = datetime.now(UTC)
    (root / "MEMORY.md").write_text(f"# Long-Term Memory\n\n- Team {i} deploys on Tuesdays.\n")
    (root / "memcore.toml").write_text('[dreaming]\nmode = "core"\n')
    entries = {}
    for d in range(7):
        day = (now - timedelta(days=d)).date().isoformat()
        lines = [f"# {day}", ""] + [f"- fact {k} of team {i} on {day}" for k in range(30)]
        (mem / f"{day}.md").write_text("\n".join(lines) + "\n")
        for k in range(min(30, 200 // 7 + 1)):
            key = f"memory:memory/{day}.md:{k + 3}:{k + 3}"
            at = (now - timedelta(days=d, minutes=k)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            entries[key] = {"key": key, "path": f"memory/{day}.md", "startLine": k + 3,
                            "endLine": k + 3, "source": "memory",
                            "snippet": f"- fact {k} of team {i} on {day}", "recallCount": 1,
                            "totalScore": 0.6, "maxScore": 0.6, "firstRecalledAt": at,
                            "lastRecalledAt": at, "queryHashes": ["a1b2c3d4e5f6"]}  # fmt: skip
    doc = {"version": 1, "updatedAt": None, "entries": entries}
    (mem / ".dreams" / "short-term-recall.json").write_text(json.dumps(doc, indent=2) + "\n")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_idle(url: str, names: list[str], limit_s: float = 600) -> float:
    """Seconds until no served workspace has a run going (the start-up runs)."""
    t0 = time.monotonic()
    with httpx.Client(base_url=url, timeout=30) as c:
        while time.monotonic() - t0 < limit_s:
            states = [c.get(f"/api/status?workspace={n}").json() for n in names]
            if not any(s.get("running") for s in states):
                return time.monotonic() - t0
            time.sleep(0.5)
    return time.monotonic() - t0


def tick_ms(roots: list[Path], ticks: int) -> float:
    from memcore.gateway.scheduler import Scheduler
    from memcore.gateway.workspaces import build_served
    from memcore.schedule import jobs

    jobs.load_job_modules()  # as the gateway does at start
    assert jobs.registered_jobs(), "no scheduled job registered"
    sched = Scheduler(build_served([(None, r) for r in roots]))
    times = []
    for _ in range(ticks):
        t0 = time.perf_counter()
        sched.tick(datetime.now(UTC))
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspaces", type=int, default=100)
    ap.add_argument("--idle-seconds", type=float, default=20.0)
    ap.add_argument("--ticks", type=int, default=20)
    args = ap.parse_args()
    print(f"load average at start {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        roots = [Path(tmp) / f"ws{i:03d}" for i in range(args.workspaces)]
        for i, r in enumerate(roots):
            make_workspace(r, i)
        port = free_port()
        env = {**os.environ, "MEMCORE_TOKEN": TOKEN, "MEMCORE_USER_DIR": str(Path(tmp) / "u"),
               "PYTHONPATH": str(ROOT)}  # fmt: skip
        cmd = [sys.executable, "-m", "memcore", "gateway", "--port", str(port)]
        for r in roots:
            cmd += ["-w", str(r)]
        t_start = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_up(url, proc)
            up_s = time.monotonic() - t_start
            names = [r.name for r in roots]
            settle_s = wait_idle(url, names)
            rss_busy = rss_mb(proc.pid)
            time.sleep(1.0)
            c0, t0 = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(args.idle_seconds)
            idle = (cpu_seconds(proc.pid) - c0) / (time.monotonic() - t0) * 100
            rss = rss_mb(proc.pid)
            with httpx.Client(base_url=url) as c:
                times = []
                for _ in range(50):
                    t1 = time.perf_counter()
                    c.get(f"/api/status?workspace={names[len(names) // 2]}").raise_for_status()
                    times.append((time.perf_counter() - t1) * 1000)
            status_ms = statistics.median(times)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        tick = tick_ms(roots, args.ticks)
    print(f"{args.workspaces} workspaces in one gateway process:")
    print(f"  up (healthz) after {up_s:.1f} s; start-up runs finished after {settle_s:.1f} s more")
    print(f"  resident memory {rss:.0f} MB idle ({rss_busy:.0f} MB right after the start-up runs)")
    print(f"  idle CPU over {args.idle_seconds:g} s: {idle:.2f} % of one core")
    print(f"  scheduler tick (every job of every workspace): median {tick:.1f} ms")
    print(f"  GET /api/status of one workspace: median {status_ms:.1f} ms")
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
