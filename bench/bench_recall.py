"""Figures for the recall store and ranking: how each cost grows with the store.

Measures, on synthetic stores shaped like real ones (snippets of 80-400 characters, 1-12
recalls, a few query hashes each):

- record: one search's 10 hits recorded into a store of 1k / 10k / 100k entries
  (``memcore.recall.record_recalls`` as shipped: lock, patch or rewrite the JSON, atomic write
  with fsync, SQLite mirror update), the entry cap raised so nothing is dropped; median of
  ``--runs`` runs;
  "stale" is the same record right after another tool (OpenClaw, an editor) wrote the file;
- rank: read the store from disk (``read_store``, normalised) and rank every entry under core's
  thresholds (``memcore.scoring.rank``); median of ``--runs`` runs;
- preview: ``memcore.promote.preview`` (``memory promote`` without ``--apply``), which ranks from
  the SQLite mirror of the store: warm (mirror current) and cold (store file touched, so the
  mirror is rebuilt from the JSON first);
- size: the store file with the default cap of 5,000 entries, for typical entries and for the
  worst case (800-character snippets, 32 query hashes), after the cap was enforced by a record;
- ``memcore --help`` wall time in a fresh interpreter, median of 10.

Targets: record at 10k <= 50 ms, rank 100k including the read <= 500 ms, store with
the default cap < ~4 MB, ``memcore --help`` <= 300 ms.

Usage: ``python bench/bench_recall.py [--runs 20] [--sizes 1000,10000,50000,100000] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from memcore.recall.entries import MAX_QUERY_HASHES, MAX_SNIPPET_CHARS, query_hash
from memcore.recall.scoring import Thresholds, rank
from memcore.recall.store import Store, read_store, record_recalls, write_store
from memcore.workspace.clock import iso_ms
from memcore.workspace.config import DEFAULT_MAX_ENTRIES
from memcore.workspace.core import Workspace, atomic_write_bytes

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
_VOCAB = (
    "payout ledger idempotency redis celery retry webhook hmac migration alembic index postgres "
    "deploy staging prod argo helm cutoff berlin sepa export merchant batch reconcile report "
    "freeze incident alert queue scale replicas secret rotation key ttl snapshot approval review "
    "test flaky fixture timeout adyen settlement balance account"
)
WORDS = tuple(_VOCAB.split())


def synthetic_entries(n: int, *, seed: int = 7, worst: bool = False) -> dict[str, dict[str, Any]]:
    """``n`` plausible store entries (deterministic); ``worst`` maxes snippet and hashes."""
    rng = random.Random(seed)
    first_day = date(2020, 1, 1)
    entries: dict[str, dict[str, Any]] = {}
    i = 0
    while len(entries) < n:
        day = first_day + timedelta(days=i // 30)
        start = 1 + (i % 30) * 4
        end = start + rng.randint(0, 3)
        path = f"memory/{day.isoformat()}.md"
        key = f"memory:{path}:{start}:{end}"
        i += 1
        count = 32 if worst else rng.choice((1, 1, 1, 2, 2, 3, 4, 5, 8, 12))
        if worst:
            snippet = ("x" * (MAX_SNIPPET_CHARS - 1)) + "…"
            hashes = [query_hash(f"q{i}-{k}") for k in range(MAX_QUERY_HASHES)]
        else:
            words = rng.randint(12, 60)
            snippet = "- " + " ".join(rng.choice(WORDS) for _ in range(words))
            hashes = [query_hash(f"q{i}-{k}") for k in range(rng.randint(1, min(count, 6)))]
        scores = [round(rng.uniform(0.55, 0.97), 4) for _ in range(count)]
        last = NOW - timedelta(days=rng.uniform(0, 60), seconds=i)
        entries[key] = {
            "key": key,
            "path": path,
            "startLine": start,
            "endLine": end,
            "source": "memory",
            "snippet": snippet,
            "recallCount": count,
            "totalScore": sum(scores),
            "maxScore": max(scores),
            "firstRecalledAt": iso_ms(last - timedelta(days=rng.uniform(0, 20))),
            "lastRecalledAt": iso_ms(last),
            "queryHashes": hashes,
        }
    return entries


def make_workspace(root: Path, entries: dict[str, dict[str, Any]]) -> Workspace:
    if root.exists():
        shutil.rmtree(root)
    (root / "memory").mkdir(parents=True)
    ws = Workspace(root)
    write_store(ws, Store(entries=entries), NOW)
    return ws


def search_hits(entries: dict[str, dict[str, Any]], k: int = 10, seed: int = 1) -> list[dict]:
    """``k`` results of one search: existing chunks of the store (so its size stays put)."""
    keys = random.Random(seed).sample(sorted(entries), k)
    return [
        {
            "path": entries[key]["path"],
            "startLine": entries[key]["startLine"],
            "endLine": entries[key]["endLine"],
            "score": 0.9,
            "snippet": entries[key]["snippet"],
            "source": "memory",
        }
        for key in keys
    ]


def median_ms(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time of ``fn`` in milliseconds.

    CPU time (this process) is shown too because shared machines inflate wall time; the
    targets are wall time.
    """
    wall, cpu = [], []
    for _ in range(runs):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def preview_fn(ws: Workspace) -> Callable[[], Any] | None:
    """``memcore memory promote`` without --apply (the product's ranking path), if present."""
    try:
        from memcore.promotion.promote import preview
    except ImportError:
        return None
    return lambda: preview(ws, now=NOW)


def bench_size(size: int, runs: int, base: Path) -> dict[str, Any]:
    """Record and rank at one store size, plus where the time goes."""
    entries = synthetic_entries(size)
    ws = make_workspace(base / f"ws-{size}", entries)
    hits = search_hits(entries)
    th = Thresholds()
    counter = iter(range(10**9))
    few = max(3, runs // 4) if size >= 100_000 else max(5, runs // 2)

    def record() -> None:
        n = next(counter)
        now = NOW + timedelta(seconds=n)
        record_recalls(ws, f"query {n % 7}", hits, now=now, max_entries=size * 10)

    def read_and_rank() -> None:
        store = read_store(ws, now=NOW)
        rank(store.entries.values(), NOW, th)

    out: dict[str, Any] = {"size": size, "ws": ws, "hits": hits}
    out["record_ms"], out["record_cpu_ms"] = median_ms(record, runs)
    out["rank_ms"], out["rank_cpu_ms"] = median_ms(read_and_rank, runs)

    def record_after_foreign_write() -> None:
        os.utime(ws.store_path)  # another tool (OpenClaw, an editor) wrote the file
        record()

    out["record_stale_ms"], _ = median_ms(record_after_foreign_write, few)
    preview = preview_fn(ws)
    out["preview_warm_ms"] = out["preview_cold_ms"] = float("nan")
    if preview is not None:
        preview()  # the mirror now reflects the file
        out["preview_warm_ms"], _ = median_ms(preview, runs)

        def cold() -> None:
            os.utime(ws.store_path)  # as if another tool wrote the file: the mirror rebuilds
            preview()

        out["preview_cold_ms"], _ = median_ms(cold, few)
    # components, to show where the time goes
    data = ws.store_path.read_bytes()
    doc = orjson.loads(data)
    store = read_store(ws, now=NOW)
    scratch = ws.dreams_dir / "bench-write.json"
    out["bytes"] = len(data)
    out["parse_ms"], _ = median_ms(lambda: orjson.loads(data), few)
    out["dump_ms"], _ = median_ms(lambda: Store(entries=doc["entries"]).to_json_bytes(), few)
    out["write_ms"], _ = median_ms(lambda: atomic_write_bytes(scratch, data), few)
    out["read_store_ms"], _ = median_ms(lambda: read_store(ws, now=NOW), few)
    out["rank_only_ms"], _ = median_ms(lambda: rank(store.entries.values(), NOW, th), few)
    scratch.unlink()
    return out


def bench_capped_size(base: Path) -> dict[str, int]:
    """File size with the default cap after a record pushed the store over it."""
    out: dict[str, int] = {}
    for label, worst in (("typical", False), ("worst", True)):
        entries = synthetic_entries(DEFAULT_MAX_ENTRIES + 200, seed=11, worst=worst)
        ws = make_workspace(base / f"cap-{label}", entries)
        fresh = [
            {
                "path": f"memory/2030-01-0{1 + i % 9}.md",
                "startLine": 1 + i,
                "endLine": 2 + i,
                "score": 0.9,
                "snippet": "new " * 50,
                "source": "memory",
            }
            for i in range(10)
        ]
        record_recalls(ws, "cap check", fresh, now=NOW, max_entries=DEFAULT_MAX_ENTRIES)
        n = len(read_store(ws, now=NOW).entries)
        out[label] = ws.store_path.stat().st_size
        out[f"{label}_entries"] = n
    return out


def bench_help(runs: int = 10) -> float:
    exe = shutil.which("memcore")
    cmd = [exe, "--help"] if exe else [sys.executable, "-m", "memcore", "--help"]
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def profile(fn: Callable[[], Any], top: int = 18) -> str:
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def machine() -> str:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}, {platform.system()}"


COLUMNS = (
    ("entries", "size", 8, "d"),
    ("store MB", "mb", 9, ".2f"),
    ("record", "record_ms", 8, ".1f"),
    ("(cpu)", "record_cpu_ms", 7, ".1f"),
    ("(stale)", "record_stale_ms", 8, ".1f"),
    ("read+rank", "rank_ms", 10, ".1f"),
    ("(cpu)", "rank_cpu_ms", 7, ".1f"),
    ("preview", "preview_warm_ms", 8, ".1f"),
    ("(cold)", "preview_cold_ms", 8, ".1f"),
    ("| parse", "parse_ms", 8, ".1f"),
    ("dump", "dump_ms", 7, ".1f"),
    ("write", "write_ms", 7, ".1f"),
    ("read_store", "read_store_ms", 10, ".1f"),
    ("rank", "rank_only_ms", 7, ".1f"),
)


def table(rows: list[dict[str, Any]]) -> str:
    head = " ".join(f"{title:>{width}}" for title, _, width, _ in COLUMNS)
    lines = [head, "-" * len(head)]
    for r in rows:
        r = {**r, "mb": r["bytes"] / 1e6}
        lines.append(" ".join(f"{r[key]:>{width}{fmt}}" for _, key, width, fmt in COLUMNS))
    return "\n".join(lines)


def verdicts(rows: list[dict[str, Any]], cap: dict[str, int], help_ms: float) -> str:
    by_size = {r["size"]: r for r in rows}
    checks = []
    if 10000 in by_size:
        checks.append(("record 10 hits @10k (ms)", by_size[10000]["record_ms"], 50.0))
        checks.append(("  same, mirror stale (ms)", by_size[10000]["record_stale_ms"], 50.0))
    if 100000 in by_size:
        checks.append(("read+rank @100k (ms)", by_size[100000]["rank_ms"], 500.0))
        checks.append(("promote preview @100k (ms)", by_size[100000]["preview_warm_ms"], 500.0))
    checks.append(("memcore --help (ms)", help_ms, 300.0))
    checks.append(("store MB @cap, typical", cap["typical"] / 1e6, 4.0))
    return "\n".join(
        f"  {name:<26} {value:>9.1f}  target <= {target:g}  {'ok' if value <= target else 'MISSED'}"
        for name, value, target in checks
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="recall store and ranking figures")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--sizes", default="1000,10000,50000,100000")
    ap.add_argument(
        "--profile", action="store_true", help="cProfile record and rank at the largest size"
    )
    ap.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp dir)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        base = Path(tmp)
        rows = [bench_size(n, args.runs, base) for n in sizes]
        cap = bench_capped_size(base)
        help_ms = bench_help()

        print(f"\nmedian of {args.runs} runs; milliseconds (cpu = this process's CPU time)")
        print(table(rows))
        print(
            f"\nstore with the default cap ({DEFAULT_MAX_ENTRIES} entries): "
            f"typical {cap['typical'] / 1e6:.2f} MB ({cap['typical_entries']} entries), "
            f"worst case {cap['worst'] / 1e6:.2f} MB ({cap['worst_entries']} entries, "
            "800-char snippets, 32 hashes)"
        )
        print(f"memcore --help: {help_ms:.0f} ms (median of 10)")
        print("\ntarget check")
        print(verdicts(rows, cap, help_ms))

        if args.profile:
            big = rows[-1]
            ws, hits = big["ws"], big["hits"]
            print(f"\n== cProfile: record 10 hits @{big['size']} ==")
            print(profile(lambda: record_recalls(ws, "profile", hits, now=NOW, max_entries=10**9)))
            print(f"== cProfile: read_store + rank @{big['size']} ==")
            print(
                profile(lambda: rank(read_store(ws, now=NOW).entries.values(), NOW, Thresholds()))
            )
            preview = preview_fn(ws)
            if preview is not None:
                print(f"== cProfile: promote preview, warm mirror @{big['size']} ==")
                preview()
                print(profile(preview))
    return 0


if __name__ == "__main__":
    sys.exit(main())
