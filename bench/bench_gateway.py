"""Gateway figures: GET /api/status latency on a 5,000-entry store, 200 concurrent searches all
recorded, and the idle CPU of the gateway process.

Runs a real ``memcore gateway`` subprocess on a free 127.0.0.1 port with two temporary
workspaces. Usage: ``python bench/bench_gateway.py [--idle-seconds 10] [--requests 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

TOKEN = "bench-token"
TOPICS = ["kafka", "postgres", "redis", "nginx", "grafana", "terraform", "ansible", "docker"]


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def big_store_workspace(root: Path, n: int = 5000) -> None:
    """A workspace whose recall store holds ``n`` entries over 50 daily notes."""
    mem = root / "memory"
    (mem / ".dreams").mkdir(parents=True)
    now = datetime.now(UTC)
    entries = {}
    for i in range(n):
        day = (now - timedelta(days=i % 50)).date().isoformat()
        path = f"memory/{day}.md"
        line = i // 50 + 1
        key = f"memory:{path}:{line}:{line}"
        count = i % 7
        entries[key] = {
            "key": key,
            "path": path,
            "startLine": line,
            "endLine": line,
            "source": "memory",
            "snippet": f"Fact number {i} about {TOPICS[i % len(TOPICS)]} and its settings.",
            "recallCount": count,
            "totalScore": round(0.8 * count, 3),
            "maxScore": 0.9 if count else 0.0,
            "firstRecalledAt": iso(now - timedelta(days=i % 50)),
            "lastRecalledAt": iso(now - timedelta(hours=i % 200)),
            "queryHashes": [f"{j:012x}" for j in range(i % 5)],
        }
    doc = {"version": 1, "updatedAt": iso(now), "entries": entries}
    (mem / ".dreams" / "short-term-recall.json").write_text(json.dumps(doc, indent=2) + "\n")
    for d in range(50):
        day = (now - timedelta(days=d)).date().isoformat()
        lines = [
            f"Fact number {i} about {TOPICS[i % len(TOPICS)]} and its settings." for i in range(100)
        ]
        (mem / f"{day}.md").write_text("\n".join(lines) + "\n")
    (root / "MEMORY.md").write_text(
        "# Long-Term Memory\n\n" + "".join(f"- Long-term fact {i}.\n" for i in range(300))
    )
    (root / "memcore.toml").write_text('[dreaming]\nmode = "core"\ntimezone = "UTC"\n')


def search_workspace(root: Path) -> None:
    """Daily notes that every bench query hits."""
    mem = root / "memory"
    mem.mkdir(parents=True)
    for d in range(10):
        day = f"2026-10-{d + 1:02d}"
        body = "\n\n".join(
            f"The {topic} cluster in zone {d} was upgraded and the {topic} dashboards moved."
            for topic in TOPICS
        )
        (mem / f"{day}.md").write_text(f"# {day}\n\n{body}\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_up(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(
                f"gateway exited: {proc.stderr.read().decode() if proc.stderr else ''}"
            )
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("gateway did not come up")


def wait_idle(url: str) -> None:
    """Let the startup runs (consolidate on a fresh workspace) finish before timing."""
    with httpx.Client(base_url=url) as c:
        for _ in range(300):
            states = [c.get(f"/api/status?workspace={w}").json() for w in ("big", "search")]
            if not any(s["running"] for s in states):
                return
            time.sleep(0.1)


def bench_status(url: str, n: int = 200) -> dict[str, float]:
    times = []
    with httpx.Client(base_url=url) as c:
        c.get("/api/status?workspace=big").raise_for_status()  # first parse
        for _ in range(n):
            t0 = time.perf_counter()
            c.get("/api/status?workspace=big").raise_for_status()
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"median": statistics.median(times), "p95": times[int(0.95 * len(times)) - 1]}


def bench_status_uncached(url: str, store: Path, n: int = 30) -> dict[str, float]:
    """The store changes before every request (as when searches record): no cache hit."""
    times = []
    with httpx.Client(base_url=url) as c:
        for i in range(n):
            os.utime(store, ns=(time.time_ns(), time.time_ns() + i))
            t0 = time.perf_counter()
            c.get("/api/status?workspace=big").raise_for_status()
            times.append((time.perf_counter() - t0) * 1000)
    return {"median": statistics.median(times), "max": max(times)}


async def bench_searches(url: str, n: int) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=120) as c:

        async def one(i: int) -> httpx.Response:
            topic = TOPICS[i % len(TOPICS)]
            body = {"query": f"{topic} cluster upgrade {i}", "limit": 3, "workspace": "search"}
            return await c.post("/api/memories/search", json=body)

        t0 = time.perf_counter()
        responses = await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - t0
    statuses = [r.status_code for r in responses]
    bodies = [r.json() for r in responses]
    hits = sum(
        1 for b in bodies for r in b.get("results", []) if r["path"].startswith("memory/2026-")
    )
    recorded = sum(b.get("recorded", 0) for b in bodies)
    errors = [b.get("recordError") for b in bodies if b.get("recordError")]
    return {
        "ok": statuses.count(200),
        "wall_s": wall,
        "hits": hits,
        "recorded": recorded,
        "record_errors": errors,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--requests", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big, srch = Path(tmp) / "big", Path(tmp) / "search"
        big_store_workspace(big)
        search_workspace(srch)
        port = free_port()
        env = {**os.environ, "MEMCORE_TOKEN": TOKEN, "MEMCORE_USER_DIR": str(Path(tmp) / "user")}
        cmd = [sys.executable, "-m", "memcore", "gateway", "-w", str(big), "-w", str(srch)]
        cmd += ["--port", str(port)]
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_up(url, proc)
            time.sleep(1.0)
            wait_idle(url)
            status = bench_status(url)
            uncached = bench_status_uncached(
                url, big / "memory" / ".dreams" / "short-term-recall.json"
            )
            search = asyncio.run(bench_searches(url, args.requests))
            store = json.loads((srch / "memory" / ".dreams" / "short-term-recall.json").read_text())
            total_recalls = sum(e["recallCount"] for e in store["entries"].values())
            time.sleep(1.0)
            c0, t0 = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(args.idle_seconds)
            idle_cpu = (cpu_seconds(proc.pid) - c0) / (time.monotonic() - t0) * 100
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(
        f"GET /api/status, 5,000-entry store: median {status['median']:.2f} ms, "
        f"p95 {status['p95']:.2f} ms (200 requests, files unchanged)"
    )
    print(
        f"GET /api/status, store changed before each request: median {uncached['median']:.1f} ms, "
        f"max {uncached['max']:.1f} ms (30 requests)"
    )
    print(
        f"{args.requests} concurrent POST /api/memories/search: {search['ok']} ok in "
        f"{search['wall_s']:.2f} s; daily-note hits {search['hits']}, "
        f"recorded {search['recorded']}, sum of recallCount in the store {total_recalls}, "
        f"record errors {len(search['record_errors'])}"
    )
    print(f"idle CPU of the gateway process over {args.idle_seconds:g} s: {idle_cpu:.2f} %")
    ok = total_recalls == search["hits"] == search["recorded"] and search["ok"] == args.requests
    print("all recalls recorded:", "yes" if ok else "NO")


if __name__ == "__main__":
    main()
