"""Figures for memory search: index time, search median, re-index of one note, growth,
and the hit-score distribution on the example workspace.

    python bench/bench_search.py [--sizes 100,1000,3000] [--queries 50]
    python bench/bench_search.py --quality [--split dev] [--backends hashing,minilm,use-m3]
    python bench/bench_search.py --quality --split PATH.jsonl [--workspace DIR]
    python bench/bench_search.py --distribution [--backends hashing,use-m3]
    python bench/bench_search.py --second-model-cost [--sizes 300] [--queries 50]

``--quality`` prints recall@1/@5 and MRR per query kind and backend on the labelled set in
bench/eval/search/ (``bench/search_quality.py``). The named splits are development data:
``tune`` and ``holdout`` (queries.jsonl), ``all`` (both), ``fresh`` and ``fresh3``
(fresh.jsonl and fresh3.jsonl, each written blind and run once as such), ``dev`` (all of
them) and ``fresh4`` (fresh4/fresh4.jsonl on its own workspace, also blind once).
``--split PATH.jsonl`` runs a blind set in the same format, once, after the search is frozen
(``--misses`` and ``--retrievers`` refuse it, unless it is one of the development files);
``--workspace DIR`` is the workspace such a set was written on (its answer paths are
relative to DIR; default bench/eval/search/workspace). DIR is copied, without its
``memory/.dreams/``, and indexed afresh.

The "server" columns time the same queries searched as a long-lived process (the gateway, the
MCP server) searches: through an ``IndexPool``, which keeps the index connection and the watch
of the workspace's folders between searches (``memcore.search.watch``), so a search stats no
note while none changed. Both ways compute each query's model vector afresh.

Daily notes are generated from a seeded vocabulary of a believable software project (about ten
chunks a note). Searches run with ``record=False`` so the figure is the search alone (recording
is measured by the recall-store bench).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memcore.search.connections import IndexPool
from memcore.search.query import index_stats, open_index, query_index, search, update_index
from memcore.workspace.core import Workspace

PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Esther", "Farid", "Grace", "Hiro", "Ines", "Jonas"]
SERVICES = [
    "billing-api",
    "invoice-worker",
    "auth-gateway",
    "search-indexer",
    "notification-service",
    "ledger",
    "reporting-etl",
    "frontend",
    "mobile-sync",
    "webhook-relay",
    "rate-limiter",
]
TOOLS = [
    "Postgres",
    "Redis",
    "Kafka",
    "ArgoCD",
    "Terraform",
    "Grafana",
    "Sentry",
    "Vite",
    "pytest",
    "Docker",
    "Kubernetes",
    "nginx",
    "ClickHouse",
    "S3",
    "OpenTelemetry",
    "GitHub Actions",
]
CUSTOMERS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell"]
TOPICS = [
    "latency",
    "memory leak",
    "flaky test",
    "schema migration",
    "timeout",
    "retry storm",
    "connection pool",
    "cache invalidation",
    "feature flag",
    "on-call handover",
    "cost report",
    "load test",
    "certificate renewal",
    "data backfill",
    "rate limit",
    "index rebuild",
]
TEMPLATES = [
    "- {p} found the {t} in {s} was caused by {tool}; fixed by raising the limit to {n}.",
    "- Deployed {s} {v} to staging; p95 latency went from {n} ms to {m} ms.",
    "- {c} reported a {t} on the {s} endpoint; ticket OPS-{k} opened, {p} owns it.",
    "- Decision: {s} moves to {tool} by the end of the sprint; {p} writes the migration plan.",
    "- Standup: {p} is on the {t} work, {q} reviews the {s} pull request #{k}.",
    "- The {tool} upgrade to {v} broke the {s} build; pinned the old version until {p} checks it.",
    "- Postmortem for the {t} incident: alert fired after {n} minutes, runbook step {m} was wrong.",
    "- {p} prefers small pull requests (under {n} lines) and squash merges for {s}.",
    "- Benchmarked {tool} for {s}: {n} requests per second on two cores, {m} MB resident.",
    "- Reminder: the {t} on {s} needs a follow-up with {c} before Friday.",
    "Notes from the {s} sync: {tool} dashboards are missing the {t} panel; {p} will add it"
    " and link it from the runbook.",
]
HEADINGS = ["## Standup", "## Incidents", "## Decisions", "## Notes", "## Follow-ups", "## Reviews"]


def fill(rng: random.Random, template: str) -> str:
    return template.format(
        p=rng.choice(PEOPLE),
        q=rng.choice(PEOPLE),
        s=rng.choice(SERVICES),
        tool=rng.choice(TOOLS),
        c=rng.choice(CUSTOMERS),
        t=rng.choice(TOPICS),
        n=rng.randint(2, 900),
        m=rng.randint(2, 900),
        k=rng.randint(100, 9999),
        v=f"{rng.randint(1, 9)}.{rng.randint(0, 20)}",
    )


def daily_note(rng: random.Random, day: date) -> str:
    lines = [f"# {day.isoformat()}", ""]
    for heading in rng.sample(HEADINGS, 3):
        lines.append(heading)
        for _ in range(rng.randint(2, 5)):
            lines.append(fill(rng, rng.choice(TEMPLATES)))
        lines.append("")
    return "\n".join(lines)


def build_workspace(root: Path, n_notes: int, seed: int = 7) -> Workspace:
    rng = random.Random(seed)
    (root / "memory").mkdir(parents=True, exist_ok=True)
    start = date.today() - timedelta(days=n_notes + 1)  # all in the past, like real notes
    for i in range(n_notes):
        day = start + timedelta(days=i)
        path = root / "memory" / f"{day.isoformat()}.md"
        path.write_text(daily_note(rng, day), encoding="utf-8")
        stamp = time.mktime(day.timetuple()) + 23 * 3600  # written that evening, long ago
        os.utime(path, (stamp, stamp))
    (root / "MEMORY.md").write_text(
        "# Long-Term Memory\n\n"
        + "\n".join(fill(rng, rng.choice(TEMPLATES)) for _ in range(60))
        + "\n",
        encoding="utf-8",
    )
    stamp = time.time() - 86400
    os.utime(root / "MEMORY.md", (stamp, stamp))
    return Workspace(root)


def queries(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.5:
            out.append(f"{rng.choice(TOPICS)} in {rng.choice(SERVICES)}")
        elif kind < 0.8:
            out.append(f"what did {rng.choice(PEOPLE)} decide about {rng.choice(TOOLS)}")
        else:
            out.append(f"{rng.choice(CUSTOMERS)} {rng.choice(TOPICS)} ticket")
    return out


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def timed(run: Callable[[str], object], qs: list[str]) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of ``run`` on each query, each query's model vector computed
    afresh (the process keeps the last queries' vectors; both ways of searching pay for the
    first of each query alike)."""
    from memcore.search import dense

    dense._queries.clear()
    times, cpu = [], []
    for q in qs:
        t0, c0 = time.perf_counter(), time.process_time()
        run(q)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return times, cpu


def measure(n_notes: int, n_queries: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = build_workspace(Path(tmp) / "ws", n_notes)
        t0 = time.perf_counter()
        conn = open_index(ws)
        rep = update_index(conn, ws)
        conn.close()
        initial = time.perf_counter() - t0
        qs = queries(random.Random(11), n_queries)
        t0 = time.perf_counter()
        search(ws, qs[0], record=False)  # warm: loads the model, embeds every chunk
        first = time.perf_counter() - t0
        times, cpu = timed(lambda q: search(ws, q, record=False), qs)
        # A long-lived process (the gateway, the MCP server): its pool keeps the index
        # connection and the watch of the workspace's folders between searches.
        pool = IndexPool()
        try:
            search(ws, qs[0], record=False, pool=pool)  # opens the connection, adds the watch
            search(ws, qs[0], record=False, pool=pool)  # the first scan kept by the watch
            s_times, s_cpu = timed(lambda q: search(ws, q, record=False, pool=pool), qs)
        finally:
            pool.close()
        # re-index of one changed note (the next search pays it)
        note = sorted(ws.memory_dir.glob("*.md"))[n_notes // 2]
        reindex = []
        for i in range(5):
            note.write_text(note.read_text(encoding="utf-8") + f"\n- edit {i}: Redis eviction\n")
            t0 = time.perf_counter()
            res = search(ws, "Redis eviction", record=False)
            reindex.append(time.perf_counter() - t0)
            assert res.index.rechunked == 1, res.index
        stats = index_stats(ws)
        return {
            "notes": n_notes,
            "chunks": rep.chunks,
            "initial_index_ms": ms(initial),
            "first_search_s": round(first, 2),
            "search_median_ms": ms(statistics.median(times)),
            "search_p95_ms": ms(sorted(times)[int(len(times) * 0.95) - 1]),
            "search_cpu_ms": ms(statistics.median(cpu)),
            "reindex_one_median_ms": ms(statistics.median(reindex)),
            "server_median_ms": ms(statistics.median(s_times)),
            "server_p95_ms": ms(sorted(s_times)[int(len(s_times) * 0.95) - 1]),
            "server_cpu_ms": ms(statistics.median(s_cpu)),
            "db_mb": round(stats["dbBytes"] / 1e6, 1),
        }


def second_model_cost(n_notes: int, n_queries: int) -> None:
    """What the second search model (MiniLM beside use-m3) costs, in CPU seconds of this
    process (model threads included): the first index's model vectors with use-m3 alone, then
    MiniLM's on top, then the median CPU of a search with and without it, alternating, on
    the same index, over the bench's generated queries (most of them English sentences, the
    queries it is asked about; the share is printed)."""
    from search_quality import backend_env

    from memcore.search import dense as dense_mod
    from memcore.search.companion import asks_in_english, companion_for, sync_companion
    from memcore.search.dense import sync_dense
    from memcore.search.query import search_embedder

    with tempfile.TemporaryDirectory() as tmp, backend_env("use-m3-alone"):
        ws = build_workspace(Path(tmp) / "ws", n_notes)
        emb = search_embedder(ws)
        conn = open_index(ws)
        update_index(conn, ws)
        chunks = conn.execute("SELECT count(*) FROM search_chunks").fetchone()[0]
        c0 = time.process_time()
        pieces = sync_dense(conn, emb)
        first_cpu = time.process_time() - c0
        os.environ["MEMCORE_SECOND_MODEL"] = "auto"
        second = companion_for(emb)
        assert second is not None, "MiniLM is not installed"
        c0 = time.process_time()
        sync_companion(conn, second)
        second_cpu = time.process_time() - c0
        conn.close()
        qs = queries(random.Random(11), n_queries)
        cpu: dict[str, list[float]] = {"auto": [], "none": []}
        for mode in ("auto", "none"):  # warm: model loads, the matrices read once
            os.environ["MEMCORE_SECOND_MODEL"] = mode
            search(ws, "warm up the search", record=False)
        for q in qs:
            for mode in ("auto", "none"):
                os.environ["MEMCORE_SECOND_MODEL"] = mode
                dense_mod._queries.clear()  # each mode pays its own query vectors
                c0 = time.process_time()
                search(ws, q, record=False)
                cpu[mode].append(time.process_time() - c0)
    print(
        f"# second model cost, {n_notes} notes, {chunks} chunks ({pieces} use-m3 pieces),"
        f" load average {os.getloadavg()[0]:.2f};"
        f" {sum(map(asks_in_english, qs))} of {len(qs)} queries asked of MiniLM"
    )
    print("| figure | use-m3 alone | use-m3 + MiniLM |")
    print("|---|---:|---:|")
    print(
        f"| model vectors of the first index, CPU s | {first_cpu:.1f} |"
        f" {first_cpu + second_cpu:.1f} |"
    )
    print(
        f"| per chunk, CPU ms | {first_cpu / chunks * 1000:.1f} |"
        f" {(first_cpu + second_cpu) / chunks * 1000:.1f} |"
    )
    print(
        f"| search median CPU ms ({len(qs)} queries) | {ms(statistics.median(cpu['none']))} |"
        f" {ms(statistics.median(cpu['auto']))} |"
    )


# Queries for examples/workspace (payrail-api): each targeted one asks for one fact that one
# chunk states; the loose ones are broad words or topics the workspace barely touches.
TARGETED = [
    "where does the Adyen webhook HMAC key live",
    "which pain.001 version does the partner bank accept",
    "how long did reconcile_ledger take after the index",
    "Maya prefers small PRs",
    "never store money as floats",
    "CREATE INDEX CONCURRENTLY inside a transaction",
    "duplicate payout merchant m_4471",
    "make migrate-check on the snapshot index build time",
    "who owns the EKS clusters and Argo CD",
    "IDEMPOTENCY_REDIS_URL setting for staging",
]
LOOSE = [
    "deploy",
    "database",
    "webhook",
    "tests",
    "meeting notes",
    "performance problems",
    "Friday",
    "kubernetes autoscaling",
    "frontend build",
]


def example_distribution(
    example: Path, limit: int, backend: str
) -> list[tuple[str, str, list[dict]]]:
    """Top hits per query on a copy of the example workspace, searched as ``search`` does with
    ``backend`` (its model vectors too; nothing recorded)."""
    import shutil

    from search_quality import backend_env

    from memcore.search.dense import sync_dense, uses_dense
    from memcore.search.query import search_embedder

    rows = []
    with tempfile.TemporaryDirectory() as tmp, backend_env(backend):
        root = Path(tmp) / "ws"
        shutil.copytree(example, root, ignore=shutil.ignore_patterns(".dreams"))
        ws = Workspace(root)
        emb = search_embedder(ws)
        conn = open_index(ws)
        update_index(conn, ws)
        if uses_dense(emb):
            sync_dense(conn, emb)
        for kind, qs in (("targeted", TARGETED), ("loose", LOOSE)):
            for q in qs:
                rows.append((kind, q, query_index(conn, q, limit, embedder=emb)))
        conn.close()
    return rows


def print_distribution(example: Path, backend: str) -> None:
    rows = example_distribution(example, 5, backend)
    print(f"\n# score distribution on {example}, {backend} (top 5 hits per query)")
    print("| kind | query | top hit | scores |")
    print("|---|---|---|---|")
    for kind, q, hits in rows:
        top = f"{hits[0]['path']}:{hits[0]['startLine']}" if hits else "-"
        scores = ", ".join(f"{h['score']:.3f}" for h in hits) or "-"
        print(f"| {kind} | {q} | {top} | {scores} |")
    for kind in ("targeted", "loose"):
        tops = sorted(hits[0]["score"] if hits else 0.0 for k, _, hits in rows if k == kind)
        rest = sorted(h["score"] for k, _, hits in rows if k == kind for h in hits[1:])
        print(
            f"{kind}: top hit min {tops[0]:.3f} / median {statistics.median(tops):.3f} / "
            f"max {tops[-1]:.3f}; other hits median {statistics.median(rest or [0]):.3f}"
        )


def split_name(value: str) -> str:
    """A named split of bench/eval/search, or a .jsonl file of labelled queries."""
    if value in ("tune", "holdout", "all", "fresh", "fresh3", "fresh4", "dev") or value.endswith(
        ".jsonl"
    ):
        return value
    raise argparse.ArgumentTypeError(
        f"{value!r}: allowed: tune, holdout, all, fresh, fresh3, fresh4, dev, or a path ending"
        " in .jsonl"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000,3000")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument(
        "--example", default=str(Path(__file__).resolve().parent.parent / "examples" / "workspace")
    )
    ap.add_argument("--quality", action="store_true", help="retrieval quality only")
    ap.add_argument(
        "--split",
        default="dev",
        type=split_name,
        help="tune, holdout, all, fresh, fresh3, fresh4, dev, or the path of a blind set (.jsonl)",
    )
    ap.add_argument(
        "--workspace",
        type=Path,
        default=None,
        help="with --split PATH.jsonl: the workspace its answer paths are relative to",
    )
    ap.add_argument("--backends", default="hashing,minilm,use-m3")
    ap.add_argument("--misses", action="store_true", help="list the queries missed at 5")
    ap.add_argument(
        "--retrievers", action="store_true", help="recall@5 of bm25 alone, the model alone"
    )
    ap.add_argument(
        "--distribution",
        action="store_true",
        help="only the hit scores on the example workspace, per backend",
    )
    ap.add_argument(
        "--second-model-cost",
        action="store_true",
        help="CPU of the second search model (MiniLM beside use-m3) at --sizes' first size",
    )
    args = ap.parse_args()
    if args.second_model_cost:
        second_model_cost(int(args.sizes.split(",")[0]), args.queries)
        return
    if args.distribution:
        from search_quality import available_backends

        for b in available_backends(args.backends.split(",")):
            print_distribution(Path(args.example), b)
        return
    if args.retrievers:
        from search_quality import print_retrievers

        print_retrievers(args.split, args.backends.split(","))
        return
    if args.quality:
        from search_quality import print_quality

        print_quality(args.split, args.backends.split(","), args.misses, args.workspace)
        return
    print(
        f"# memory search (Python {platform.python_version()}, {platform.machine()},"
        f" {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f})"
    )
    print(
        "| backend | notes | chunks | initial index ms | first search s | search median ms"
        " | search p95 ms | search median CPU ms | re-index one note ms | db MB"
        " | server: median ms | p95 ms | median CPU ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    from memcore.search.embeddings import resolve_backend

    backend = resolve_backend(None)
    for n in (int(x) for x in args.sizes.split(",")):
        r = measure(n, args.queries)
        print(
            f"| {backend} | {r['notes']} | {r['chunks']} | {r['initial_index_ms']} |"
            f" {r['first_search_s']} | {r['search_median_ms']} | "
            f"{r['search_p95_ms']} | {r['search_cpu_ms']} | {r['reindex_one_median_ms']} | "
            f"{r['db_mb']} | {r['server_median_ms']} | {r['server_p95_ms']} |"
            f" {r['server_cpu_ms']} |",
            flush=True,
        )
    example = Path(args.example)
    if (example / "memory").is_dir() and any((example / "memory").glob("*.md")):
        print_distribution(example, backend)
    else:
        print(f"\n(no example workspace at {example}; score distribution skipped)")


if __name__ == "__main__":
    main()
