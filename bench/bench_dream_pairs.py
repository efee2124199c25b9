"""Consolidation figures on the judge pair set: the whole ``dream`` (candidates, verdicts,
merges, supersessions, review) on one MEMORY.md per split, scored pair by pair.

    python bench/bench_dream_pairs.py --split tune [--backends hashing,minilm]
    python bench/bench_dream_pairs.py --split holdout      # once, with everything frozen

Per judge (offline + each embedder): merge precision/recall (pairs put in one merge cluster;
a merge between entries of two different pairs is wrong), contradiction precision/recall
(supersessions applied plus conflicts queued), near-miss false merges and false flags, details
kept (labelled details still in MEMORY.md after the run), questions still answerable after
``--auto`` and after accepting every suggestion, and facts still true that accepting every
suggestion removed (target 0).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import re
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "eval"))

from pairs_ws import NEAR, PairTruth, _scope, build_pairs  # noqa: E402

from memcore.dream import cycle, review, tables  # noqa: E402
from memcore.dream import plan as planning  # noqa: E402
from memcore.dream.settings import ConsolidationSettings  # noqa: E402
from memcore.journal import runs as journal  # noqa: E402
from memcore.judge.aliases import NUMBER_WORDS  # noqa: E402
from memcore.workspace.core import Workspace  # noqa: E402
from memcore.workspace.entries import parse  # noqa: E402

NOW = datetime(2026, 6, 1, tzinfo=UTC)
STEPS = ("merge", "reconcile")


def _pairs(groups: list[list[str]]) -> set[frozenset[str]]:
    return {frozenset(p) for g in groups for p in itertools.combinations(g, 2)}


def _answerable(truth: PairTruth, text: str) -> float:
    low = text.casefold()
    qs = [
        q["answer"]
        for row in truth.pairs.values()
        for q in (row.get("question"), row.get("question_b"))
        if q and q.get("answer")
    ]
    return sum(1 for a in qs if a.casefold() in low) / max(1, len(qs))


def _unanswerable(truth: PairTruth, text: str) -> dict[str, int]:
    """Questions no longer answerable, by the label/category of their pair."""
    low = text.casefold()
    out: dict[str, int] = {}
    for row in truth.pairs.values():
        for q in (row.get("question"), row.get("question_b")):
            if q and q.get("answer") and q["answer"].casefold() not in low:
                k = f"{row['label']}/{row['category']}"
                out[k] = out.get(k, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


_WORD_RE = re.compile(r"\b[^\W\d_]+\b")


@functools.lru_cache(maxsize=64)
def _digits(text: str) -> str:
    """The text with its counts written as words in digits ("four steps" -> "4 steps")."""
    return _WORD_RE.sub(lambda m: str(NUMBER_WORDS.get(m.group(0), m.group(0))), text.casefold())


def kept(detail: str, low: str) -> bool:
    """A labelled detail is still in ``low`` (casefolded text): as written, or with counts
    in digits on both sides (a merge that writes "eight" as "8", or keeps "twelve" where the
    label says "12", keeps the fact)."""
    return detail.casefold() in low or _digits(detail) in _digits(low)


def _details_kept(truth: PairTruth, text: str, which: set[frozenset[str]]) -> float:
    low = text.casefold()
    dets = [d for k in which for d in truth.pairs[k].get("details", [])]
    return sum(1 for d in dets if kept(d, low)) / max(1, len(dets))


def run(split: str, backend: str) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="memcore-pairs-"))
    try:
        truth = build_pairs(tmp / "ws", split, NOW)
        (tmp / "ws" / "memcore.toml").write_text(
            f'[consolidation]\nembedder = "{backend}"\njudge = "offline"\nmax_loss_fraction = 1\n',
            encoding="utf-8",
        )
        ws = Workspace(tmp / "ws")
        s = ConsolidationSettings(embedder=backend, judge="offline", max_loss_fraction=1.0)
        t0 = time.perf_counter()
        with tables.connect(ws) as conn:
            plan = planning.build_plan(
                ws, now=NOW, steps=STEPS, conn=conn, settings=s, write_cache=True
            )
        wall = time.perf_counter() - t0
        labelled = set(truth.pairs)
        # A cross-scope pair states one fact in two scopes: it must never merge (the scope
        # wall), so it is no merge to find, and a merge of it counts against precision. One
        # MEMORY.md has one project scope, so two project memories ("project:quill" /
        # "project:atlas") land in the same scope here: such a pair is not scored at all.
        blind = {
            k
            for k, r in truth.pairs.items()
            if r["category"] == "cross-scope" and _scope(r["a"]["scope"]) == _scope(r["b"]["scope"])
        }
        same = {
            k
            for k, r in truth.pairs.items()
            if r["label"] == "same" and r["category"] != "cross-scope"
        }
        contra = {k for k, r in truth.pairs.items() if r["label"] in ("supersedes", "conflict")}
        near = {k for k, r in truth.pairs.items() if r["category"] in NEAR}
        merged = _pairs([[m.keeper, *m.absorbed] for m in plan.merges]) - blind
        auto = _pairs([[m.keeper, *m.absorbed] for m in plan.auto_merges()]) - blind
        flagged = {frozenset((x.newer, x.older)) for x in plan.supersedes}
        flagged |= {frozenset((c.a, c.b)) for c in plan.conflicts}
        out: dict[str, Any] = {
            "split": split,
            "judge": plan.judge,
            "plan_s": wall,
            "entries": len(plan.doc.entries),
        }
        out["merge_precision"] = len(merged & same) / max(1, len(merged))
        out["merge_recall"] = len(merged & same) / max(1, len(same))
        out["auto_merge_precision"] = len(auto & same) / max(1, len(auto))
        out["auto_merge_recall"] = len(auto & same) / max(1, len(same))
        out["contra_precision"] = len(flagged & contra) / max(1, len(flagged))
        out["contra_recall"] = len(flagged & contra) / max(1, len(contra))
        out["near_false_merges"] = (len(merged & near), len(near))
        out["near_false_flags"] = (len(flagged & near), len(near))
        out["cross_pair_merges"] = len(merged - labelled)
        out["cross_pair_flags"] = len(flagged - labelled)
        tx = truth.texts
        out["misses"] = {
            "near_merged": [
                (truth.pairs[k]["category"], *(tx[x] for x in sorted(k)))
                for k in sorted(merged & near, key=sorted)
            ],
            "near_flagged": [
                (truth.pairs[k]["category"], *(tx[x] for x in sorted(k)))
                for k in sorted(flagged & near, key=sorted)
            ],
            "same_missed": [
                (truth.pairs[k]["category"], *(tx[x] for x in sorted(k)))
                for k in sorted(same - merged, key=sorted)
            ],
            "contra_missed": [
                (truth.pairs[k]["category"], *(tx[x] for x in sorted(k)))
                for k in sorted(contra - flagged, key=sorted)
            ],
            "wrong_merges": [
                tuple(tx[x] for x in sorted(k)) for k in sorted(merged - same, key=sorted)
            ],
            "lost": [],
        }
        # --auto
        res = cycle.apply_plan(plan, now=NOW, mode="auto", allow_loss=True)
        text = ws.memory_md.read_text(encoding="utf-8")
        out["answerable_auto"] = _answerable(truth, text)
        out["details_kept_auto"] = _details_kept(truth, text, same & auto)
        out["queued"], out["overflow"] = res["reviewPending"], res["reviewOverflow"]
        # accept every suggestion, page after page, until nothing new is proposed
        for _ in range(20):
            items = review.pending(ws)
            if not items:
                with tables.connect(ws) as conn:
                    more = planning.build_plan(
                        ws, now=NOW, steps=STEPS, conn=conn, settings=s, write_cache=True
                    )
                r2 = cycle.apply_plan(more, now=NOW, mode="auto", allow_loss=True)
                if not review.pending(ws):
                    break
                del r2
                continue
            for it in items:
                choice = (
                    "apply"
                    if it["kind"] == "merge"
                    else "both"
                    if it.get("suggested") == "both"
                    else "a"
                )
                with contextlib.suppress(Exception):  # made stale by an earlier answer
                    review.resolve(ws, it["itemId"], choice, now=NOW)
        text = ws.memory_md.read_text(encoding="utf-8")
        left = {e.id for e in parse(text).entries}
        out["answerable_all"] = _answerable(truth, text)
        out["unanswerable_kinds"] = _unanswerable(truth, text)
        out["details_kept_all"] = _details_kept(truth, text, same & merged)
        low = text.casefold()
        how: dict[str, str] = {}  # removed entry -> the step that removed it
        why: dict[str, str] = {}
        with tables.connect(ws) as conn:
            for r in journal.runs(conn, limit=500):
                for c in journal.changes_of(conn, r["runId"]):
                    if c.action == "remove":
                        how[c.entry_id] = c.step
                        why[c.entry_id] = c.reason
        lost = lost_by_merge = 0
        kinds: dict[str, int] = {}
        for eid in set(truth.texts) - left:
            if not truth.still_true(eid):
                continue
            if how.get(eid) == "merge":
                row = next(r for k, r in truth.pairs.items() if eid in k)
                mine = [
                    d
                    for d in row.get("details") or []
                    if d.casefold() in truth.texts[eid].casefold()
                ]
                if any(not kept(d, low) for d in mine):
                    lost_by_merge += 1  # merged away, and one of its details went with it
                    gone_d = [d for d in mine if not kept(d, low)]
                    out["misses"]["lost"].append(("merge", eid, truth.texts[eid], gone_d))
            else:
                row = next(r for k, r in truth.pairs.items() if eid in k)
                partner = next(x for x in next(k for k in truth.pairs if eid in k) if x != eid)
                if row["label"] == "same" and partner in left:
                    continue  # archived, but its restatement stays
                lost += 1  # archived as superseded or as the loser of a conflict, yet true
                out["misses"]["lost"].append(
                    (
                        how.get(eid, "?"),
                        row["label"],
                        row["category"],
                        truth.texts[eid],
                        truth.texts[partner],
                        why.get(eid, ""),
                    )
                )
                kinds[f"{row['label']}/{row['category']}"] = (
                    kinds.get(f"{row['label']}/{row['category']}", 0) + 1
                )
        out["true_facts_lost_merge"] = lost_by_merge
        out["lost_kinds"] = dict(sorted(kinds.items(), key=lambda kv: -kv[1]))
        out["true_facts_lost_all"] = lost
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", choices=("tune", "holdout", "fresh", "fresh2"), default="tune")
    ap.add_argument("--backends", default="hashing,minilm")
    ap.add_argument(
        "--misses",
        action="store_true",
        help="print the misses (texts) too: development splits only, never a blind one",
    )
    args = ap.parse_args()
    if args.misses and args.split not in ("tune", "holdout", "fresh"):
        ap.error(f"--misses prints texts and results of {args.split}: not for a blind split")
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        try:
            r = run(args.split, backend)
        except Exception as exc:  # the [embed] extra may be missing
            print(f"[{backend}] skipped: {exc}")
            continue
        nm, nf = r["near_false_merges"], r["near_false_flags"]
        print(f"[{args.split}] {r['judge']}: {r['entries']} entries, plan {r['plan_s']:.1f}s")
        print(
            f"  merge precision={r['merge_precision']:.3f} recall={r['merge_recall']:.3f} "
            f"(--auto: {r['auto_merge_precision']:.3f} / {r['auto_merge_recall']:.3f}); "
            f"cross-pair merges={r['cross_pair_merges']}"
        )
        print(
            f"  contradiction precision={r['contra_precision']:.3f} "
            f"recall={r['contra_recall']:.3f}; cross-pair flags={r['cross_pair_flags']}"
        )
        print(f"  near-miss false merges={nm[0]}/{nm[1]} false flags={nf[0]}/{nf[1]}")
        print(
            f"  details kept: --auto {r['details_kept_auto']:.3f}, every suggestion "
            f"{r['details_kept_all']:.3f}; queued {r['queued']} (+{r['overflow']} over the cap)"
        )
        print(
            f"  questions answerable: after --auto {r['answerable_auto']:.3f}, after every "
            f"suggestion {r['answerable_all']:.3f}; true facts lost by every suggestion: "
            f"{r['true_facts_lost_all']} archived + {r['true_facts_lost_merge']} merged with a "
            "detail dropped"
        )
        if r["unanswerable_kinds"]:
            print(
                "  unanswerable after every suggestion, by label/category: "
                f"{r['unanswerable_kinds']}"
            )
        if r["lost_kinds"]:
            print(f"  archived true facts by pair label/category: {r['lost_kinds']}")
        if args.misses:
            for kind, rows in r["misses"].items():
                print(f"  -- {kind} ({len(rows)})")
                for row in rows:
                    print("     " + " | ".join(str(x) for x in row))


if __name__ == "__main__":
    main()
