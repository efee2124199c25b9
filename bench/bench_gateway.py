"""Gateway figures: GET /api/status latency on a 5,000-entry store; 200 concurrent searches of
one workspace (p50/p95 of each search and of /api/status polled during them, lost recalls);
the idle CPU of the gateway process serving 10 workspaces; and a hypothesis fuzz of every route
(JSON bodies, raw bodies, query strings, headers) counting 5xx answers.

Runs a real ``memcore gateway`` subprocess on a free 127.0.0.1 port with ten temporary
workspaces. Usage: ``python bench/bench_gateway.py [--idle-seconds 10] [--requests 200]
[--fuzz 20000]``.
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
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # memcore from this checkout

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
    with httpx.Client(base_url=url, timeout=120) as c:
        for _ in range(300):
            states = [c.get(f"/api/status?workspace={w}").json() for w in ("big", "search")]
            if not any(s["running"] for s in states):
                return
            time.sleep(0.1)


def bench_status(url: str, n: int = 200) -> dict[str, float]:
    times = []
    with httpx.Client(base_url=url, timeout=120) as c:
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
    with httpx.Client(base_url=url, timeout=120) as c:
        for i in range(n):
            os.utime(store, ns=(time.time_ns(), time.time_ns() + i))
            t0 = time.perf_counter()
            c.get("/api/status?workspace=big").raise_for_status()
            times.append((time.perf_counter() - t0) * 1000)
    return {"median": statistics.median(times), "max": max(times)}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


async def bench_searches(url: str, n: int) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    limits = httpx.Limits(max_connections=n + 1, max_keepalive_connections=n + 1)
    latencies: list[float] = []
    status_times: list[float] = []
    done = asyncio.Event()
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=120) as c:
        # steady state: the first search of a workspace builds its index (and model vectors)
        warm = {"query": "warm up", "limit": 3, "workspace": "search"}
        (await c.post("/api/memories/search", json=warm)).raise_for_status()

        async def one(i: int) -> httpx.Response:
            topic = TOPICS[i % len(TOPICS)]
            body = {"query": f"{topic} cluster upgrade {i}", "limit": 3, "workspace": "search"}
            t = time.perf_counter()
            res = await c.post("/api/memories/search", json=body)
            latencies.append(time.perf_counter() - t)
            return res

        async def poll_status() -> None:
            while not done.is_set():
                t = time.perf_counter()
                (await c.get("/api/status?workspace=search")).raise_for_status()
                status_times.append(time.perf_counter() - t)
                await asyncio.sleep(0.05)

        poller = asyncio.create_task(poll_status())
        t0 = time.perf_counter()
        responses = await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - t0
        done.set()
        await poller
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
        "p50": pct(latencies, 0.5),
        "p95": pct(latencies, 0.95),
        "status_p50": pct(status_times, 0.5) if status_times else float("nan"),
        "status_p95": pct(status_times, 0.95) if status_times else float("nan"),
        "status_n": len(status_times),
        "hits": hits,
        "recorded": recorded,
        "record_errors": errors,
    }


def small_workspace(root: Path, i: int) -> None:
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "2026-10-01.md").write_text(f"# Notes {i}\n\n- Small fact {i}.\n")
    (root / "memcore.toml").write_text('[dreaming]\nmode = "core"\ntimezone = "UTC"\n')


def fuzz_routes(url: str, n: int, names: list[str]) -> dict[str, Any]:
    """``n`` hypothesis-made requests over every route: methods, query strings, JSON and raw
    bodies, headers (token right, wrong or missing; content types; Host and Origin). Counts
    answers by status class; every 5xx is kept with its request."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    routes = [
        ("GET", "/"), ("GET", "/healthz"), ("GET", "/api/workspaces"), ("GET", "/api/status"),
        ("GET", "/api/candidates"), ("GET", "/api/runs"), ("GET", "/api/review"),
        ("GET", "/api/sessions"), ("GET", "/static/dreams.js"), ("GET", "/static/x"),
        ("POST", "/api/review"), ("POST", "/api/memories/promote"),
        ("POST", "/api/memories/dream"), ("POST", "/api/memories/search"),
        ("POST", "/api/commands"), ("PUT", "/api/status"), ("GET", "/nope"),
    ]  # fmt: skip
    fields = ["workspace", "query", "limit", "apply", "item", "choice", "text", "job", "x"]
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True), st.text(max_size=40), st.sampled_from([*names, "", "²", "9"]),
    )  # fmt: skip

    def nested(inner: Any) -> Any:
        return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)

    values = st.recursive(scalars, nested, max_leaves=6)
    bodies = st.one_of(
        st.dictionaries(st.sampled_from(fields) | st.text(max_size=8), values, max_size=4).map(
            lambda d: json.dumps(d).encode()
        ),
        st.binary(max_size=200),
        st.text(max_size=100).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.just(b""),
        st.just(b'{"query": "\\ud800 x"}'),
    )  # fmt: skip
    queries = st.dictionaries(
        st.sampled_from(["workspace", "limit", "job", "x"]),
        st.text(max_size=12) | st.sampled_from([*names, "²", "٣", "-1", "99999999999999999999"]),
        max_size=3,
    )
    host = url.split("//", 1)[1]
    header_sets = st.fixed_dictionaries(
        {},
        optional={
            "Authorization": st.sampled_from(
                [f"Bearer {TOKEN}", "Bearer nope", "Basic x", "", "Bearer "]
            ),
            "Content-Type": st.sampled_from(
                ["application/json", "text/plain", "application/json; charset=utf-8", "x/y"]
            ),
            "Origin": st.sampled_from([url, "http://evil.example", "null", "file://"]),
            "Host": st.sampled_from([host, "evil.example", "localhost", "[::1]"]),
            "Accept": st.text(max_size=10).filter(lambda t: t.isprintable() and t.isascii()),
        },
    )
    counts: dict[str, int] = {"2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0, "errors": 0, "not sent": 0}
    five: list[str] = []
    client = httpx.Client(base_url=url, timeout=120)

    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.sampled_from(routes), queries, bodies, header_sets)
    def one(
        route: tuple[str, str], query: dict[str, str], body: bytes, headers: dict[str, str]
    ) -> None:
        method, path = route
        if path == "/api/memories/dream" and headers.get("Authorization") == f"Bearer {TOKEN}":
            headers = {
                **headers,
                "Authorization": "Bearer nope",
            }  # keep the fuzz from dreaming 1,000s of times
        try:
            res = client.request(
                method, path, params=query, content=body if method != "GET" else None,
                headers={k: v for k, v in headers.items() if v.isascii()},
            )  # fmt: skip
        except httpx.LocalProtocolError:
            counts["not sent"] += 1  # the client itself refused the request (a bad header)
            return
        except (httpx.HTTPError, UnicodeError) as exc:
            counts["errors"] += 1
            if len(five) < 20:
                five.append(f"{method} {path} {query} -> {type(exc).__name__}")
            return
        counts[f"{res.status_code // 100}xx"] += 1
        if res.status_code >= 500 and len(five) < 20:
            five.append(
                f"{method} {path} {query} {body[:60]!r} -> {res.status_code} {res.text[:80]}"
            )

    try:
        one()
    finally:
        client.close()
    return {"counts": counts, "total": sum(counts.values()) - counts["not sent"], "examples": five}


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--fuzz", type=int, default=20000)
    args = ap.parse_args()
    print(f"load average at start: {load_average()}")
    with tempfile.TemporaryDirectory() as tmp:
        big, srch = Path(tmp) / "big", Path(tmp) / "search"
        big_store_workspace(big)
        search_workspace(srch)
        smalls = [Path(tmp) / f"small{i}" for i in range(8)]
        for i, p in enumerate(smalls):
            small_workspace(p, i)
        port = free_port()
        env = {**os.environ, "MEMCORE_TOKEN": TOKEN, "MEMCORE_USER_DIR": str(Path(tmp) / "user")}
        cmd = [sys.executable, "-m", "memcore", "gateway", "-w", str(big), "-w", str(srch)]
        for p in smalls:
            cmd += ["-w", str(p)]
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
            load_search = load_average()
            search = asyncio.run(bench_searches(url, args.requests))
            time.sleep(1.0)  # a fold of the last recall log lines
            total_recalls = _total_recalls(srch, url)
            time.sleep(1.0)
            load_idle = load_average()
            c0, t0 = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(args.idle_seconds)
            idle_cpu = (cpu_seconds(proc.pid) - c0) / (time.monotonic() - t0) * 100
            names = ["big", "search", *(p.name for p in smalls)]
            fuzz = fuzz_routes(url, args.fuzz, names) if args.fuzz else None
            load_fuzz = load_average()
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
        f"{args.requests} concurrent POST /api/memories/search (load {load_search}): "
        f"{search['ok']} ok in {search['wall_s']:.2f} s; p50 {search['p50']:.2f} s, "
        f"p95 {search['p95']:.2f} s; GET /api/status during them: p50 "
        f"{search['status_p50'] * 1000:.0f} ms, p95 {search['status_p95'] * 1000:.0f} ms "
        f"({search['status_n']} polls)"
    )
    print(
        f"daily-note hits {search['hits']}, recorded {search['recorded']}, sum of recallCount "
        f"{total_recalls}, lost recalls {search['hits'] - total_recalls}, "
        f"record errors {len(search['record_errors'])}"
    )
    print(
        f"idle CPU of the gateway process serving 10 workspaces over {args.idle_seconds:g} s "
        f"(load {load_idle}): {idle_cpu:.2f} %"
    )
    if fuzz is not None:
        print(
            f"fuzz of every route (load at end {load_fuzz}): {fuzz['total']} requests, "
            + ", ".join(f"{k} {v}" for k, v in fuzz["counts"].items())
        )
        for line in fuzz["examples"]:
            print("  ", line)
    ok = total_recalls == search["hits"] == search["recorded"] and search["ok"] == args.requests
    print("all recalls recorded:", "yes" if ok else "NO")


def _total_recalls(ws: Path, url: str) -> int:
    """Recalls in the store plus those still waiting in the recall log (a page view)."""
    from memcore.recall.store import read_view
    from memcore.workspace.clock import utcnow
    from memcore.workspace.core import Workspace

    view = read_view(Workspace(ws), utcnow())
    return sum(int(e.get("recallCount", 0)) for e in view.entries.values())


if __name__ == "__main__":
    main()
