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
import random
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

from memcore.search.query import RECORD_MIN_SCORE

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


def bench_status_uncached(
    url: str, store: Path, n: int = 30, pause: float = 0.0
) -> dict[str, float]:
    """The store changes before every request (as when searches record). The gateway computes
    the status again at most once per ``STATUS_REFRESH`` (2 s) for such a change, so without
    ``pause`` this is what a poll costs while searches record; with ``pause`` >= 2 s each
    request computes the status afresh."""
    times = []
    with httpx.Client(base_url=url, timeout=120) as c:
        for i in range(n):
            time.sleep(pause)
            os.utime(store, ns=(time.time_ns(), time.time_ns() + i))
            t0 = time.perf_counter()
            c.get("/api/status?workspace=big").raise_for_status()
            times.append((time.perf_counter() - t0) * 1000)
    return {"median": statistics.median(times), "max": max(times)}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


async def warm_search(url: str) -> None:
    """Steady state: the first search of a workspace builds its index (and model vectors)."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as c:
        warm = {"query": "warm up", "limit": 3, "workspace": "search"}
        (await c.post("/api/memories/search", json=warm)).raise_for_status()


async def raw_request(
    host: str, port: int, method: str, path: str, body: bytes = b""
) -> tuple[int, bytes]:
    """One HTTP/1.1 request on a connection of its own, read to the end of the body.

    A client of a few lines on asyncio streams: httpx's async client spent about twice the
    gateway's CPU on 200 concurrent searches, on the same two cores as the gateway."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        writer.write(head.encode() + body)
        status_line = await reader.readline()
        status = int(status_line.split()[1])
        length = None
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        data = await (reader.readexactly(length) if length is not None else reader.read())
        return status, data
    finally:
        writer.close()


async def bench_searches(url: str, n: int) -> dict[str, object]:
    """``n`` searches sent at once, each on its own connection; each one's latency runs from
    opening its connection to the last byte of its answer. ``/api/status`` is polled during
    them."""
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    latencies: list[float] = []
    status_times: list[float] = []
    done = asyncio.Event()

    async def one(i: int) -> tuple[int, bytes]:
        topic = TOPICS[i % len(TOPICS)]
        body = {"query": f"{topic} cluster upgrade {i}", "limit": 3, "workspace": "search"}
        t = time.perf_counter()
        res = await raw_request(
            host, int(port), "POST", "/api/memories/search", json.dumps(body).encode()
        )
        latencies.append(time.perf_counter() - t)
        return res

    async def poll_status() -> None:
        while not done.is_set():
            t = time.perf_counter()
            code, _ = await raw_request(host, int(port), "GET", "/api/status?workspace=search")
            if code != 200:
                raise SystemExit(f"GET /api/status answered {code}")
            status_times.append(time.perf_counter() - t)
            await asyncio.sleep(0.05)

    poller = asyncio.create_task(poll_status())
    t0 = time.perf_counter()
    responses = await asyncio.gather(*(one(i) for i in range(n)))
    wall = time.perf_counter() - t0
    done.set()
    await poller
    statuses = [code for code, _ in responses]
    bodies = [json.loads(data) for _, data in responses]
    # Only hits scoring at least RECORD_MIN_SCORE are recorded as recalls (the rest are
    # returned, not recorded), so those are the ones that must all land in the store.
    hits = sum(
        1
        for b in bodies
        for r in b.get("results", [])
        if r["path"].startswith("memory/2026-") and r["score"] >= RECORD_MIN_SCORE
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


def fuzz_routes(
    url: str, n: int, names: list[str], every: int = 1000, pool: int | None = None, seed: int = 0
) -> dict[str, Any]:
    """``n`` hypothesis-made requests over every route: methods, query strings, JSON and raw
    bodies, headers (token right, wrong or missing; content types; Host and Origin). Counts
    answers by status class (printed every ``every`` requests) and per route; every 5xx is
    kept with its request."""
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
    per_route: dict[str, int] = {f"{m} {p}": 0 for m, p in routes}
    five: list[str] = []
    # one keep-alive connection for the whole run (a new TCP connection per request would
    # be most of the time); the server closes it after some errors, httpx reconnects
    client = httpx.Client(
        base_url=url, timeout=120, limits=httpx.Limits(max_keepalive_connections=1)
    )
    started = time.monotonic()

    printed: set[int] = set()

    def progress() -> None:
        done = sum(counts.values()) - counts["not sent"]
        if done % every == 0 and done not in printed:
            printed.add(done)
            rate = done / max(1e-9, time.monotonic() - started)
            print(
                f"  fuzz {done}/{n} answered ({rate:.0f}/s, load {load_average()}): "
                + ", ".join(f"{k} {v}" for k, v in counts.items()),
                flush=True,
            )

    def send(
        route: tuple[str, str], query: dict[str, str], body: bytes, headers: dict[str, str]
    ) -> None:
        method, path = route
        per_route[f"{method} {path}"] += 1
        authorized = headers.get("Authorization") == f"Bearer {TOKEN}"
        if path == "/api/memories/dream" and authorized and per_route[f"{method} {path}"] % 200:
            # a real dream about once in 200 dream requests (each runs the whole cycle); the
            # others are refused before running (a wrong token)
            headers = {**headers, "Authorization": "Bearer nope"}
        try:
            res = client.request(
                method, path, params=query, content=body if method != "GET" else None,
                headers={k: v for k, v in headers.items() if v.isascii()},
            )  # fmt: skip
        except httpx.LocalProtocolError:
            counts["not sent"] += 1  # the client itself refused the request (a bad header)
            progress()
            return
        except (httpx.HTTPError, UnicodeError) as exc:
            counts["errors"] += 1
            if len(five) < 20:
                five.append(f"{method} {path} {query} -> {type(exc).__name__}")
            progress()
            return
        counts[f"{res.status_code // 100}xx"] += 1
        if res.status_code >= 500 and len(five) < 20:
            five.append(
                f"{method} {path} {query} {headers} {body[:80]!r} -> {res.status_code} "
                f"{res.text[:80]}"
            )
            print("  5xx:", five[-1], flush=True)
        progress()

    # Hypothesis's engine costs milliseconds per example, far more than a request: it draws a
    # pool of (query string, body, headers) examples, and the requests combine parts of
    # different examples (query of one, body of another, headers of a third) over the routes
    # in turn, so every route gets n / len(routes) requests.
    drawn: list[tuple[dict[str, str], bytes, dict[str, str]]] = []

    @settings(
        max_examples=pool or max(200, n // 20),
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(queries, bodies, header_sets)
    def draw(query: dict[str, str], body: bytes, headers: dict[str, str]) -> None:
        drawn.append((query, body, headers))

    t0 = time.monotonic()
    draw()
    print(
        f"  fuzz: {len(drawn)} hypothesis examples of (query string, body, headers) drawn in "
        f"{time.monotonic() - t0:.0f} s; {n} requests combine them over {len(routes)} routes",
        flush=True,
    )
    rng = random.Random(seed)
    started = time.monotonic()
    try:
        i = 0
        while sum(counts.values()) - counts["not sent"] < n:  # n requests the server answered
            q, b, h = (drawn[rng.randrange(len(drawn))] for _ in range(3))
            send(routes[i % len(routes)], q[0], b[1], h[2])
            i += 1
    finally:
        client.close()
    return {
        "counts": counts,
        "total": sum(counts.values()) - counts["not sent"],
        "examples": five,
        "per_route": per_route,
        "seconds": time.monotonic() - started,
    }


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


PARTS = ("status", "search", "idle", "fuzz")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--requests", type=int, default=200, help="concurrent searches")
    ap.add_argument("--fuzz", type=int, default=20000, help="fuzz requests (0: no fuzz)")
    ap.add_argument(
        "--only", default=",".join(PARTS), help=f"comma-separated parts to run: {','.join(PARTS)}"
    )
    ap.add_argument(
        "--embedder", default=None, help="MEMCORE_EMBEDDER for the gateway (default: auto)"
    )
    ap.add_argument(
        "--search-threads",
        default=None,
        help="MEMCORE_SEARCH_THREADS for the gateway: threads per batch of one workspace's "
        "searches (default: the gateway's own, 2)",
    )
    args = ap.parse_args()
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    if not args.fuzz:
        parts.discard("fuzz")
    print(f"load average at start: {load_average()}; {os.cpu_count()} CPUs", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        big, srch = Path(tmp) / "big", Path(tmp) / "search"
        big_store_workspace(big)
        search_workspace(srch)
        smalls = [Path(tmp) / f"small{i}" for i in range(8)]
        for i, p in enumerate(smalls):
            small_workspace(p, i)
        port = free_port()
        env = {**os.environ, "MEMCORE_TOKEN": TOKEN, "MEMCORE_USER_DIR": str(Path(tmp) / "user")}
        if args.embedder:
            env["MEMCORE_EMBEDDER"] = args.embedder
        if args.search_threads:
            env["MEMCORE_SEARCH_THREADS"] = args.search_threads
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
            if "status" in parts:
                run_status(url, big)
            if "search" in parts:
                run_search(url, srch, args.requests, proc.pid, args.embedder)
            if "idle" in parts:
                time.sleep(1.0)
                load_idle = load_average()
                c0, t0 = cpu_seconds(proc.pid), time.monotonic()
                time.sleep(args.idle_seconds)
                idle_cpu = (cpu_seconds(proc.pid) - c0) / (time.monotonic() - t0) * 100
                print(
                    f"idle CPU of the gateway process serving 10 workspaces over "
                    f"{args.idle_seconds:g} s (load {load_idle}): {idle_cpu:.2f} %",
                    flush=True,
                )
            if "fuzz" in parts:
                names = ["big", "search", *(p.name for p in smalls)]
                run_fuzz(url, args.fuzz, names, proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def run_status(url: str, big: Path) -> None:
    status = bench_status(url)
    store = big / "memory" / ".dreams" / "short-term-recall.json"
    uncached = bench_status_uncached(url, store)
    fresh = bench_status_uncached(url, store, n=5, pause=2.1)
    print(
        f"GET /api/status, 5,000-entry store: median {status['median']:.2f} ms, "
        f"p95 {status['p95']:.2f} ms (200 requests, files unchanged)"
    )
    print(
        f"GET /api/status, store changed before each request: median {uncached['median']:.1f} ms, "
        f"max {uncached['max']:.1f} ms (30 requests; recomputed at most every 2 s); computed "
        f"afresh (2.1 s apart): median {fresh['median']:.1f} ms, max {fresh['max']:.1f} ms "
        "(5 requests)",
        flush=True,
    )


def run_search(url: str, srch: Path, n: int, pid: int, embedder: str | None) -> None:
    from memcore.search.embeddings import resolve_backend

    asyncio.run(warm_search(url))
    time.sleep(0.5)  # its recording lands
    load_search = load_average()
    before = _total_recalls(srch, url)
    c0, own0 = cpu_seconds(pid), time.process_time()
    search = asyncio.run(bench_searches(url, n))
    cpu, own = cpu_seconds(pid) - c0, time.process_time() - own0
    t_done = time.monotonic()
    total_recalls = _total_recalls(srch, url) - before
    while total_recalls != search["hits"] and time.monotonic() - t_done < 10:
        time.sleep(0.05)  # the last batch is still being written
        total_recalls = _total_recalls(srch, url) - before
    landed = time.monotonic() - t_done
    print(
        f"{n} concurrent POST /api/memories/search (load {load_search}, backend "
        f"{resolve_backend(embedder)}): {search['ok']} ok in {search['wall_s']:.2f} s, gateway CPU "
        f"{cpu:.2f} s (client {own:.2f} s); p50 {search['p50']:.2f} s, p95 {search['p95']:.2f} s; "
        f"GET /api/status during them: p50 {search['status_p50'] * 1000:.0f} ms, p95 "
        f"{search['status_p95'] * 1000:.0f} ms ({search['status_n']} polls)"
    )
    print(
        f"daily-note hits to record (score >= {RECORD_MIN_SCORE}) {search['hits']}, "
        f"recorded {search['recorded']}, sum of recallCount "
        f"{total_recalls} ({landed:.2f} s after the last answer), lost recalls "
        f"{search['hits'] - total_recalls}, record errors {len(search['record_errors'])}"
    )
    ok = total_recalls == search["hits"] == search["recorded"] and search["ok"] == n
    print("all recalls recorded:", "yes" if ok else "NO", flush=True)


def run_fuzz(url: str, n: int, names: list[str], pid: int) -> None:
    c0 = cpu_seconds(pid)
    fuzz = fuzz_routes(url, n, names)
    print(
        f"fuzz of every route (load at end {load_average()}): {fuzz['total']} requests in "
        f"{fuzz['seconds']:.0f} s (gateway CPU {cpu_seconds(pid) - c0:.0f} s), "
        + ", ".join(f"{k} {v}" for k, v in fuzz["counts"].items())
    )
    print("  per route: " + ", ".join(f"{k} {v}" for k, v in fuzz["per_route"].items()))
    for line in fuzz["examples"]:
        print("  ", line)
    print("no 5xx:", "yes" if not fuzz["counts"]["5xx"] else "NO", flush=True)


def _total_recalls(ws: Path, url: str) -> int:
    """Recalls in the store plus those still waiting in the recall log (a page view)."""
    from memcore.recall.store import read_view
    from memcore.workspace.clock import utcnow
    from memcore.workspace.core import Workspace

    view = read_view(Workspace(ws), utcnow())
    return sum(int(e.get("recallCount", 0)) for e in view.entries.values())


if __name__ == "__main__":
    main()
