"""Big workspaces, as users meet them: every figure is a ``memcore`` process's wall time.

- notes: 1,000 daily notes (about 4 MB of markdown): the first ``memory search`` (the index is
  built; MB/s of markdown) and the next ones;
- memory_md: a 20 MB MEMORY.md (about 180,000 entries): ``memory status`` and a search after
  the index exists;
- foreign: a 100,000-entry recall store written by another tool (the mirror is stale): the first
  ``memory status`` and the first search after it.

Targets: index >= 1 MB/s (4 MB in <= 4 s), later searches <= 100 ms, status <= 0.5 s and a
search <= 1 s on the 20 MB MEMORY.md, first status or search after the foreign store <= 1.5 s.

Usage: ``python bench/bench_bigws.py [--only notes,memory_md,foreign] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The workspaces are made in this process: with this checkout's memcore, as the processes run
# it (another version's mirror would make the first status rebuild every row).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_recall import WORDS, make_workspace, synthetic_entries

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "MEMCORE_EMBEDDER": "hashing"}


CPU_MS: list[float] = []  # the child's CPU time (user + system) of each run_ms, in order


def run_ms(ws: Path, *args: str) -> float:
    """Wall ms of one ``memcore`` process (its CPU ms are appended to CPU_MS)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "memcore", "-w", str(ws), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        env=ENV,
    )
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_MS.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return wall


def cpu(last: int = 1) -> str:
    """The CPU ms of the last ``last`` runs (median when more than one)."""
    return f"{statistics.median(CPU_MS[-last:]):.0f} CPU ms"


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def notes_workspace(root: Path, n: int = 1000) -> int:
    rng = random.Random(3)
    mem = root / "memory"
    mem.mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Long-Term Memory\n\n- The team ships on Tuesdays.\n")
    size = 0
    for i in range(n):
        day = date(2023, 1, 1) + timedelta(days=i)
        body = [f"# {day}", ""] + [f"- {sentence(rng, 10)}." for _ in range(50)]
        text = "\n".join(body) + "\n"
        (mem / f"{day}.md").write_text(text)
        size += len(text.encode())
    return size


def memory_md_workspace(root: Path, target_bytes: int = 20_000_000) -> int:
    rng = random.Random(5)
    (root / "memory").mkdir(parents=True)
    lines = ["# Long-Term Memory", ""]
    size = 0
    while size < target_bytes:
        line = f"- {sentence(rng, rng.randint(6, 24))}."
        lines.append(line)
        size += len(line) + 1
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n")
    return size


def foreign_store_workspace(root: Path, n: int = 100_000) -> None:
    ws = make_workspace(root, synthetic_entries(n))
    (ws.root / "MEMORY.md").write_text("# Long-Term Memory\n\n- A fact.\n")
    run_ms(ws.root, "memory", "status")  # memcore knew the store...
    doc = json.loads(ws.store_path.read_text())
    for k in list(doc["entries"])[:50]:
        doc["entries"][k]["recallCount"] += 1  # ...then another tool recorded and rewrote it
    ws.store_path.write_text(json.dumps(doc, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="notes,memory_md,foreign")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    parts = args.only.split(",")
    print(f"load average at start {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if "notes" in parts:
            ws = base / "notes"
            size = notes_workspace(ws)
            first = run_ms(ws, "memory", "search", "redis retry", "--no-record")
            first_cpu = cpu()
            later = statistics.median(
                run_ms(ws, "memory", "search", f"ledger {i}", "--no-record")
                for i in range(args.runs)
            )
            print(f"notes: 1,000 daily notes, {size / 1e6:.1f} MB: first search {first:.0f} ms "
                  f"({size / 1e6 / (first / 1000):.2f} MB/s, index built; {first_cpu}), later "
                  f"searches {later:.0f} ms ({cpu(args.runs)}; median of {args.runs}, "
                  "a process each)")  # fmt: skip
        if "memory_md" in parts:
            ws = base / "memory_md"
            size = memory_md_workspace(ws)
            build = run_ms(ws, "memory", "search", "deploy", "--no-record")
            build_cpu = cpu()
            first_status = run_ms(ws, "memory", "status")  # counts MEMORY.md's entries
            first_cpu = cpu()
            status = statistics.median(run_ms(ws, "memory", "status") for _ in range(args.runs))
            status_cpu = cpu(args.runs)
            search = statistics.median(
                run_ms(ws, "memory", "search", f"payout {i}", "--no-record")
                for i in range(args.runs)
            )
            print(f"memory_md: MEMORY.md of {size / 1e6:.1f} MB: first search {build:.0f} ms "
                  f"({build_cpu}, index built); first memory status {first_status:.0f} ms "
                  f"({first_cpu}); then memory status {status:.0f} ms ({status_cpu}), search "
                  f"{search:.0f} ms ({cpu(args.runs)}; medians of {args.runs})")  # fmt: skip
        if "foreign" in parts:
            ws = base / "foreign"
            foreign_store_workspace(ws)
            status = run_ms(ws, "memory", "status")
            status_cpu = cpu()
            foreign_store_workspace(base / "foreign2")
            run_ms(base / "foreign2", "memory", "search", "warm the index", "--no-record")
            doc = json.loads((base / "foreign2/memory/.dreams/short-term-recall.json").read_text())
            (base / "foreign2/memory/.dreams/short-term-recall.json").write_text(
                json.dumps(doc, indent=2) + "\n"
            )
            search = run_ms(base / "foreign2", "memory", "search", "payout ledger")
            print(
                "foreign: 100,000-entry store another tool wrote: first memory status "
                f"{status:.0f} ms ({status_cpu}), first search (recording its hits) "
                f"{search:.0f} ms ({cpu()})"
            )
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
