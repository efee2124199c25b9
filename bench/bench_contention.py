"""Contention figures: recordings never lost and never refused while runs hold the lock.

1. ``--recorders`` (200) concurrent ``memcore memory record`` processes and ``--searches`` (60)
   concurrent ``memcore memory search`` processes, started in one burst while
   ``memory promote --apply`` and ``dream --auto`` run back to back in a loop. Each recorder
   records one hit on a key of its own day; each search records what it found on daily notes.
   Afterwards the recall log is folded and the store's total ``recallCount`` is compared with
   the starting total plus every recall the processes reported: **recalls lost** (target 0) and
   **exits other than 0** (target 0), with the wall time of the burst.
2. The cost of one record (``memcore.recall.record_recalls``) on stores of 1k and 10k entries:
   the append alone (the lock held by another process, so the hits wait in the log) and the
   append plus the fold (lock free: the patching path), median of ``--runs``.

Usage: ``python bench/bench_contention.py [--recorders 200] [--searches 60] [--runs 30]``.
Every process imports memcore from this checkout (PYTHONPATH is set to it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memcore.recall.store import Store, fold_pending, read_store, record_recalls, write_store  # noqa: E402
from memcore.workspace.clock import iso_ms  # noqa: E402
from memcore.workspace.core import Workspace  # noqa: E402

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
DAYS = 30
TOPICS = [
    "billing cron", "postgres upgrade", "redis ttl", "payout retries", "staging deploy",
    "webhook hmac", "alembic migration", "argo rollout", "sepa export", "settlement report",
]  # fmt: skip


def make_workspace(root: Path) -> Workspace:
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Long-Term Memory\n\n- We deploy with Argo CD.\n")
    (root / "memcore.toml").write_text('[dreaming]\nmode = "core"\nmin_score = 0.5\n')
    start = NOW.date() - timedelta(days=DAYS)
    for d in range(DAYS):
        day = start + timedelta(days=d)
        lines = [f"# {day}", ""]
        for t, topic in enumerate(TOPICS):
            lines.append(f"- Day {d} note {t}: the {topic} changed on {day} (ticket {d * 10 + t}).")
        (root / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n")
    return Workspace(root)


def total_recalls(ws: Workspace) -> int:
    with ws.lock(60):
        fold_pending(ws, datetime.now(UTC))
    return sum(int(e.get("recallCount", 0)) for e in read_store(ws).entries.values())


def contention(recorders: int, searches: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="memcore-contention-"))
    ws = make_workspace(tmp / "ws")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    base = [sys.executable, "-m", "memcore", "-w", str(ws.root)]
    # seed: a few searches so promote and dream have work to do
    for i in range(12):
        subprocess.run([*base, "memory", "search", TOPICS[i % 10]], env=env, capture_output=True)
    before = total_recalls(ws)
    days = sorted(p.name for p in ws.memory_dir.glob("*.md"))
    stop = tmp / "stop"
    runner = subprocess.Popen(
        [sys.executable, "-c", _RUNS, str(ws.root), str(stop)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)  # let the first run take the lock
    t0 = time.perf_counter()
    procs: list[tuple[str, subprocess.Popen[str], str | None]] = []
    for i in range(recorders):
        day = days[i % len(days)]
        line = 3 + i % len(TOPICS)
        hit = {"path": f"memory/{day}", "startLine": line, "endLine": line, "score": 0.8,
               "snippet": ""}  # fmt: skip
        p = subprocess.Popen(
            [*base, "memory", "record", "-q", f"recorder {i}", "--json"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env,
        )  # fmt: skip
        procs.append(("record", p, json.dumps([hit])))
    for i in range(searches):
        q = f"{TOPICS[i % 10]} day {i % DAYS}"
        p = subprocess.Popen(
            [*base, "memory", "search", q, "--json"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env,
        )  # fmt: skip
        procs.append(("search", p, None))
    recorded = 0
    bad: list[str] = []
    for kind, p, data in procs:
        out, err = p.communicate(data, timeout=600)
        if p.returncode != 0:
            bad.append(f"{kind} exit {p.returncode}: {err.strip()[-200:]}")
            continue
        doc = json.loads(out)
        if kind == "record":
            recorded += int(doc["recorded"])
        else:  # a search records its hits on daily notes (one recall each)
            hits = [r for r in doc["results"] if r["path"].startswith("memory/20")]
            recorded += (
                0 if any("recording failed" in w for w in doc.get("warnings", [])) else len(hits)
            )
    wall = time.perf_counter() - t0
    stop.write_text("stop")
    run_out, run_err = runner.communicate(timeout=600)
    runs = json.loads(run_out.strip().splitlines()[-1]) if run_out.strip() else {}
    after = total_recalls(ws)
    return {
        "recorders": recorders,
        "searches": searches,
        "recorded": recorded,
        "lost": before + recorded - after,
        "badExits": len(bad),
        "badSamples": bad[:3],
        "burstSeconds": round(wall, 1),
        "runsDuringBurst": runs,
        "runnerErrors": run_err.strip()[-300:],
    }


_RUNS = """
import json, subprocess, sys, os
from pathlib import Path
root, stop = sys.argv[1], Path(sys.argv[2])
base = [sys.executable, "-m", "memcore", "-w", root]
counts = {"promote": 0, "dream": 0, "failed": 0}
while not stop.exists():
    for kind, args in (("promote", ["memory", "promote", "--apply"]),
                       ("dream", ["dream", "--auto"])):
        r = subprocess.run(base + args, capture_output=True, text=True)
        counts[kind] += 1
        if r.returncode != 0:
            counts["failed"] += 1
            print(kind, r.returncode, r.stderr.strip()[-200:], file=sys.stderr)
print(json.dumps(counts))
"""


def synthetic_store(ws: Workspace, n: int) -> None:
    rng = random.Random(n)
    entries: dict[str, Any] = {}
    for i in range(n):
        key = f"memory:memory/2026-10-{1 + i % 28:02d}.md:{i + 1}:{i + 1}"
        entries[key] = {
            "key": key, "path": f"memory/2026-10-{1 + i % 28:02d}.md", "startLine": i + 1,
            "endLine": i + 1, "source": "memory", "snippet": "word " * rng.randint(16, 80),
            "recallCount": rng.randint(1, 12), "totalScore": 3.0, "maxScore": 0.9,
            "firstRecalledAt": "2026-10-01T00:00:00.000Z",
            "lastRecalledAt": iso_ms(NOW - timedelta(hours=i % 500)),
            "queryHashes": [f"{rng.getrandbits(48):012x}" for _ in range(rng.randint(1, 5))],
        }  # fmt: skip
    ws.ensure_dreams_dir()
    write_store(ws, Store(entries=entries), NOW)


def record_cost(n: int, runs: int) -> dict[str, float]:
    from tests.conftest import held_lock

    tmp = Path(tempfile.mkdtemp(prefix="memcore-record-"))
    ws = Workspace(tmp / "ws")
    (ws.root / "memory").mkdir(parents=True)
    synthetic_store(ws, n)
    hits = [
        {"path": "memory/2026-10-05.md", "startLine": 5 + k, "endLine": 5 + k, "score": 0.8,
         "snippet": "the payout retries changed"}
        for k in range(10)
    ]  # fmt: skip
    fold_ms: list[float] = []
    for i in range(runs):
        t = time.perf_counter()
        record_recalls(ws, f"fold {i}", hits, now=NOW, max_entries=n + 1000)
        fold_ms.append((time.perf_counter() - t) * 1000)
    append_ms: list[float] = []
    with held_lock(ws):
        for i in range(runs):
            t = time.perf_counter()
            record_recalls(ws, f"append {i}", hits, now=NOW, max_entries=n + 1000)
            append_ms.append((time.perf_counter() - t) * 1000)
    return {
        "appendMs": round(statistics.median(append_ms), 2),
        "appendFoldMs": round(statistics.median(fold_ms[1:]), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--recorders", type=int, default=200)
    ap.add_argument("--searches", type=int, default=60)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--skip-burst", action="store_true")
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    for n in (1000, 10000):
        print(f"record on {n} entries: {record_cost(n, args.runs)}")
    if not args.skip_burst:
        print(json.dumps(contention(args.recorders, args.searches), indent=2))


if __name__ == "__main__":
    main()
