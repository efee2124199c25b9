"""From zero to a first promotion on examples/fresh (daily notes, no recall store).

    python bench/bench_fresh.py [--backends hashing,use-m3]

For each backend, with and without ``memory backfill --apply`` first, the searches of
examples/fresh/searches.txt run one by one (interactive, 3 hits each, as search.sh does);
after each one the promotion preview says whether anything qualifies. Then promotion is
applied. Figures: searches until the first candidate qualifies, entries written (a candidate
that restates an entry reinforces it and is not counted), the share of
them that are distinct facts (facts.json labels the lines of each fact; two promoted lines of
one fact are a near-duplicate), and how many of the facts the notes repeat were promoted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_quality import available_backends, backend_env

FRESH = Path(__file__).resolve().parent.parent / "examples" / "fresh"
NOW = datetime(2026, 3, 13, 9, 0, tzinfo=UTC)


def fact_of(path: str, start: int, end: int, facts: dict[str, list[list]]) -> str:
    for fid, places in facts.items():
        if any(p == path and start <= line <= end for p, line in places):
            return fid
    return f"other:{path}:{start}"


def run(backend: str, warm: bool) -> dict:
    from memcore.dream import backfill
    from memcore.promotion import promote
    from memcore.search.query import search
    from memcore.workspace.core import Workspace

    facts = json.loads((FRESH / "facts.json").read_text("utf-8"))
    queries = [q for q in (FRESH / "searches.txt").read_text("utf-8").splitlines() if q.strip()]
    with tempfile.TemporaryDirectory() as tmp, backend_env(backend):
        root = Path(tmp) / "fresh"
        shutil.copytree(FRESH, root)
        ws = Workspace(root)
        seeded = 0
        if warm:
            seeded = len(backfill.apply(ws, NOW).seeds)
        first = None
        for i, q in enumerate(queries, 1):
            now = NOW + timedelta(minutes=i)
            search(ws, q, limit=3, now=now)
            if first is None and promote.preview(ws, now=now).candidates:
                first = i
        end = NOW + timedelta(minutes=len(queries) + 1)
        result = promote.apply(ws, now=end, limit=100)
        # what was written: a candidate that MEMORY.md (or one promoted before it in the same
        # run) already states reinforces that entry and adds none
        folded = {
            k for hit in (result.apply or {}).get("reinforcedExisting", []) for k in hit["keys"]
        }
        keys = [
            (c.path, c.start_line, c.end_line) for c in result.candidates if c.key not in folded
        ]
    promoted = [fact_of(p, s, e, facts) for p, s, e in keys]
    repeated = {f for f, places in facts.items() if len(places) >= 2}
    return {
        "backend": backend,
        "backfill": warm,
        "seeded": seeded,
        "searches": len(queries),
        "firstPromotionAfter": first,
        "promoted": len(promoted),
        "distinctShare": len(set(promoted)) / len(promoted) if promoted else None,
        "repeatedPromoted": len(repeated & set(promoted)),
        "repeatedFacts": len(repeated),
        "promotedFacts": promoted,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="hashing,use-m3")
    args = ap.parse_args()
    print(f"# examples/fresh (load average {os.getloadavg()[0]:.2f})")
    print(
        "| backend | backfill | seeded entries | searches until first promotion | promoted"
        " | distinct facts share | repeated facts promoted |"
    )
    print("|---|---|---|---|---|---|---|")
    for b in available_backends(args.backends.split(",")):
        for warm in (False, True):
            r = run(b, warm)
            share = "-" if r["distinctShare"] is None else f"{r['distinctShare']:.2f}"
            print(
                f"| {b} | {'yes' if warm else 'no'} | {r['seeded']} |"
                f" {r['firstPromotionAfter'] or 'none in ' + str(r['searches'])} |"
                f" {r['promoted']} | {share} | {r['repeatedPromoted']} of {r['repeatedFacts']} |"
                f"  <!-- {', '.join(r['promotedFacts'])} -->",
                flush=True,
            )


if __name__ == "__main__":
    main()
