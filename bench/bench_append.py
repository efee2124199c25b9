"""A search's recording while another run holds the workspace lock: one append to the recall
log, whatever the store's size (the fold happens later, under the lock). Times the library call
``record_recalls`` (10 hits) with the kernel lock held by another process, on stores of 1k, 10k
and 100k entries, and the same call with the lock free (append, then fold and patch the store)::

    python bench/bench_append.py --runs 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_recall import NOW, make_workspace, search_hits, synthetic_entries

from memcore.recall.store import record_recalls
from memcore.workspace.core import Workspace

HOLD = (
    "import sys, time; from memcore.workspace import flock\n"
    "flock.acquire(sys.argv[1], 0); print('held', flush=True); sys.stdin.read()\n"
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--sizes", default="1000,10000,100000")
    args = ap.parse_args()
    print(f"load average at start {os.getloadavg()}")
    print("entries   held: median ms  cpu ms   free: median ms  cpu ms")
    tick = iter(range(10**9))
    with tempfile.TemporaryDirectory() as tmp:
        for size in map(int, args.sizes.split(",")):
            entries = synthetic_entries(size)
            ws = make_workspace(Path(tmp) / f"ws{size}", entries)
            hits = search_hits(entries)

            def record(ws: Workspace = ws, hits: list = hits, cap: int = size * 10) -> tuple:
                t0, c0 = time.perf_counter(), time.process_time()
                record_recalls(ws, "q", hits, now=NOW + timedelta(seconds=next(tick)),
                               max_entries=cap, lock_timeout=0)  # fmt: skip
                return (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000

            record()  # the mirror exists
            ws.ensure_dreams_dir()
            holder = subprocess.Popen(
                [sys.executable, "-c", HOLD, str(ws.flock_path)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            held = [record() for _ in range(args.runs)]
            holder.communicate("")
            record()  # folds what waited in the log
            free = [record() for _ in range(max(3, args.runs // 4))]
            print(f"{size:>7} {statistics.median(w for w, _ in held):14.1f} "
                  f"{statistics.median(c for _, c in held):7.1f} "
                  f"{statistics.median(w for w, _ in free):17.1f} "
                  f"{statistics.median(c for _, c in free):7.1f}")  # fmt: skip
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
