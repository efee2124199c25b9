"""The first rank and the first record right after another tool rewrote the recall store, as
library calls, against one orjson parse of the store (the unit of the "within 2x of one parse"
target), wall and CPU time (this process's), median of ``--runs``.

The foreign write is bench_openclaw's: the same document rewritten as 2-space JSON with a new
inode, after ``--changed`` entries got one more recall (as another tool's recording would).
The rank is ``memcore.promotion.promote.preview`` with zero thresholds (every entry scored,
sorted and built as a candidate); the record is one search's 10 hits.

Usage: ``python bench/bench_foreign.py [--size 100000] [--runs 3] [--changed 50]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's memcore
from bench_openclaw import ZERO, _now
from bench_recall import NOW, machine, make_workspace, search_hits, synthetic_entries

from memcore.promotion.promote import preview
from memcore.recall.store import record_recalls
from memcore.workspace.core import Workspace


def foreign_write(ws: Workspace, changed: int) -> None:
    """Another tool records ``changed`` entries and rewrites the file (2-space JSON)."""
    doc = orjson.loads(ws.store_path.read_bytes())
    for key in list(doc["entries"])[:changed]:
        doc["entries"][key]["recallCount"] += 1
    tmp = ws.store_path.with_suffix(".foreign")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, ws.store_path)


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one call."""
    gc.collect()
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return (time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--changed", type=int, default=50)
    args = ap.parse_args()
    print(machine())
    print(f"load average at start {os.getloadavg()}")
    n = args.size
    with tempfile.TemporaryDirectory() as tmp:
        entries = synthetic_entries(n)
        ws = make_workspace(Path(tmp) / "ws", entries)
        (ws.root / "memcore.toml").write_text(f"[dreaming]\nmax_entries = {n * 10}\n")
        hits = search_hits(entries)
        del entries
        preview(ws, now=NOW)  # the mirror current
        data = ws.store_path.read_bytes()
        got: dict[str, list[tuple[float, float]]] = {"parse": [], "rank": [], "record": []}
        for _ in range(args.runs):
            got["parse"].append(timed(lambda: orjson.loads(data)))
            foreign_write(ws, args.changed)
            got["rank"].append(timed(lambda: preview(ws, now=NOW, **ZERO)))
            foreign_write(ws, args.changed)
            got["record"].append(
                timed(lambda: record_recalls(ws, "q", hits, now=_now(), max_entries=n * 10))
            )
    wall = {k: statistics.median(w for w, _ in v) for k, v in got.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in got.items()}
    print(f"{n} entries ({len(data) / 1e6:.1f} MB), median of {args.runs}, ms")
    print(f"{'':34} {'wall':>8} {'cpu':>8} {'cpu / parse':>12}")
    names = {
        "parse": "one orjson parse of the store",
        "rank": "first rank after a foreign write",
        "record": "first record after a foreign write",
    }
    for k, name in names.items():
        print(f"{name:34} {wall[k]:8.0f} {cpu[k]:8.0f} {cpu[k] / cpu['parse']:11.2f}x")
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
