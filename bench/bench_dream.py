"""Consolidation quality and speed figures.

    python bench/bench_dream.py [--backends hashing,minilm] [--n 20000] [--sweep]

Per backend, on the labelled evaluation workspace of bench/eval/: merge precision and recall
over pairs (report level, and what --auto applies), near-miss false merges, contradictions
merged, cross-scope merges, conflicts found, stale items forgotten, pinned items kept, and the
share of questions still answerable from MEMORY.md after ``dream --auto``. With --sweep, a
threshold sweep on the labelled pairs (the calibration). Speed: merge clustering of --n
entries with the hashing backend (time and peak memory), and a whole ``memcore dream --auto``
on examples/workspace.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "eval"))

from build import build, labelled_pairs  # noqa: E402

from memcore.dream import cycle, tables  # noqa: E402
from memcore.dream import plan as planning  # noqa: E402
from memcore.dream.settings import ConsolidationSettings  # noqa: E402
from memcore.judge.contradict import contradiction  # noqa: E402
from memcore.workspace.core import Workspace  # noqa: E402

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def _pairs_of_groups(groups: list[list[str]]) -> set[frozenset[str]]:
    out: set[frozenset[str]] = set()
    for g in groups:
        out.update(frozenset(p) for p in itertools.combinations(g, 2))
    return out


def quality(backend: str, threshold: float | None = None) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="memcore-eval-"))
    try:
        lab = build(tmp / "ws", NOW)
        ws = Workspace(tmp / "ws")
        s = ConsolidationSettings(embedder=backend, merge_threshold=threshold)
        steps = ("merge", "reconcile", "decay", "forget")
        with tables.connect(ws) as conn:
            plan = planning.build_plan(ws, now=NOW, steps=steps, conn=conn, settings=s)
        proposed = _pairs_of_groups([[m.keeper, *m.absorbed] for m in plan.merges])
        auto = _pairs_of_groups([[m.keeper, *m.absorbed] for m in plan.auto_merges()])
        res = {"threshold": plan.threshold}
        for name, pred in (("report", proposed), ("auto", auto)):
            tp = len(pred & lab.dup_pairs)
            res[f"{name}_precision"] = tp / len(pred) if pred else 1.0
            res[f"{name}_recall"] = tp / len(lab.dup_pairs)
            res[f"{name}_near_false"] = len(pred & lab.near_pairs) / len(lab.near_pairs)
            res[f"{name}_contra_merged"] = len(pred & lab.contra_pairs)
            res[f"{name}_xscope_merged"] = len(pred & lab.cross_scope_pairs)
        found = {frozenset((c.a, c.b)) for c in plan.conflicts}
        contra_facts = {lab.role[e][1] for e, (r, _) in lab.role.items() if r == "contra"}
        hit_facts = {
            lab.role[next(iter(p & {e for e in p if lab.role[e][0] == "contra"}))][1]
            for p in found & lab.contra_pairs
        }
        res["conflicts_reported"] = len(found)
        res["conflict_recall"] = len(hit_facts) / len(contra_facts)
        res["conflict_precision"] = len(found & lab.contra_pairs) / len(found) if found else 1.0
        out = cycle.apply_plan(plan, now=NOW, mode="auto")
        text = ws.memory_md.read_text(encoding="utf-8")
        answered = sum(1 for _, ans in lab.questions if ans in text)
        res["answerable"] = answered / len(lab.questions)
        after_ids = {e.id for e in ledger_parse(text)}
        res["stale_forgotten"] = len(lab.stale - after_ids) / len(lab.stale)
        res["pinned_kept"] = len(lab.pinned & after_ids) / len(lab.pinned)
        res["entries_before"] = len(plan.doc.entries)
        res["entries_after"] = out["remaining"]
        res["merged_auto"] = out["merged"]
        res["review_queued"] = out["reviewPending"]
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ledger_parse(text: str):  # type: ignore[no-untyped-def]
    from memcore.workspace.entries import parse

    return parse(text).entries


def sweep(backend: str) -> list[tuple[float, float, float, float, float]]:
    """(threshold, precision, recall, near-miss false-merge rate, paraphrase recall) per
    threshold on the labelled pairs (pair level: cosine >= t, same scope, no contradiction)."""
    tmp = Path(tempfile.mkdtemp(prefix="memcore-sweep-"))
    try:
        lab = build(tmp / "ws", NOW)
        ws = Workspace(tmp / "ws")
        from memcore.workspace.entries import parse

        doc = parse(ws.memory_md.read_text(encoding="utf-8"))
        ids = [e.id for e in doc.entries]
        pos = {e: k for k, e in enumerate(ids)}
        s = ConsolidationSettings(embedder=backend)
        _emb, vecs = planning._embed([e.text for e in doc.entries], s, None, False)
        pairs = labelled_pairs(lab)
        rows = []
        for t100 in range(45, 96, 1):
            t = t100 / 100
            tp = fp = fn = near_fp = para_tp = para_n = 0
            near_n = sum(1 for *_, lbl in pairs if lbl == "near")
            for a, b, lbl in pairs:
                cos = float(vecs[pos[a]] @ vecs[pos[b]])
                merged = (
                    cos >= t
                    and lbl != "xscope"
                    and contradiction(lab.texts[a], lab.texts[b]) is None
                )
                dup = lbl in ("neardup", "para")
                tp += merged and dup
                fp += merged and not dup
                fn += (not merged) and dup
                near_fp += merged and lbl == "near"
                if lbl == "para":
                    para_n += 1
                    para_tp += merged
            prec = tp / (tp + fp) if tp + fp else 1.0
            rows.append((t, prec, tp / (tp + fn), near_fp / near_n, para_tp / max(1, para_n)))
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def synthetic_texts(n: int, templated: bool) -> list[str]:
    """``n`` synthetic memory entries with 4% light-edit duplicates.

    ``templated``: every entry follows one sentence frame over small word lists (an adversarial
    case: about two dozen neighbours above the merge threshold per entry). Otherwise entries
    draw their words from a 4,000-word generated vocabulary, like a real memory's spread.
    """
    import random

    if templated:
        return _templated(n)
    rng = random.Random(5)
    syll = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "qui", "bra", "tor", "ell", "an"]
    vocab = sorted(
        {"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(6000)}
    )[:4000]
    frames = [
        "{A} decided to {b} the {c} {d} before {e}.",
        "The {c} {d} uses {b} {e} on port {n}.",
        "{A} prefers {b} {c} over {d} {e}.",
        "Remember that {c} {d} {b} after {n} days.",
        "Keep {c} and {d} in {e}/{b}.",
        "{A} said the {c} {b} {d} {e} version {n}.",
    ]
    texts = []
    for _ in range(n):
        w = [rng.choice(vocab) for _ in range(5)]
        texts.append(
            rng.choice(frames).format(
                A=w[0].title(), b=w[1], c=w[2], d=w[3], e=w[4], n=rng.randint(2, 9999)
            )
        )
    for k in range(0, n - 1, 25):
        texts[k + 1] = texts[k].rstrip(".") + "!"
    return texts


def _templated(n: int) -> list[str]:
    import random

    rng = random.Random(3)
    people = [
        "Alice",
        "Bob",
        "Carol",
        "Dave",
        "Emma",
        "Frank",
        "Grace",
        "Heidi",
        "Ivan",
        "Judy",
        "Kim",
        "Leo",
        "Mallory",
        "Niaj",
        "Oscar",
        "Peggy",
        "Quinn",
        "Rupert",
        "Sybil",
        "Trent",
    ]
    verbs = [
        "owns",
        "maintains",
        "reviews",
        "deploys",
        "monitors",
        "documents",
        "tests",
        "migrates",
        "configures",
        "benchmarks",
        "refactors",
        "approves",
        "designs",
        "debugs",
        "archives",
    ]
    adjs = [
        "billing",
        "search",
        "payment",
        "login",
        "export",
        "import",
        "staging",
        "nightly",
        "legacy",
        "mobile",
        "public",
        "internal",
        "analytics",
        "audit",
        "cache",
        "backup",
    ]
    nouns = [
        "service",
        "pipeline",
        "dashboard",
        "cluster",
        "database",
        "queue",
        "worker",
        "cron job",
        "API",
        "client",
        "schema",
        "index",
        "report",
        "bucket",
        "gateway",
        "scheduler",
    ]
    tails = [
        "every Monday",
        "after each release",
        "on the first of the month",
        "in eu-west-1",
        "behind nginx",
        "with Terraform",
        "using Python 3.11",
        "on port {n}",
        "since {y}",
        "under /srv/{w}",
        "for team {w}",
        "with a {n} ms budget",
    ]
    texts = []
    for _ in range(n):
        tail = rng.choice(tails).format(
            n=rng.randint(10, 9999), y=rng.randint(2015, 2026), w=rng.choice(adjs)
        )
        texts.append(
            f"{rng.choice(people)} {rng.choice(verbs)} the {rng.choice(adjs)} "
            f"{rng.choice(nouns)} {tail}."
        )
    for k in range(0, n - 1, 25):  # 4% light-edit duplicates
        texts[k + 1] = texts[k].rstrip(".") + "!"
    return texts


def speed_cluster(n: int, templated: bool = False, measure_memory: bool = True) -> dict[str, float]:
    """Merge clustering of ``n`` synthetic entries with the hashing backend."""
    from memcore.dream.merge import Item, candidate_pairs, cluster
    from memcore.search.embeddings.hashing import HashingEmbedder

    texts = synthetic_texts(n, templated)
    emb = HashingEmbedder()
    t0 = time.perf_counter()
    emb.fit(texts)
    vecs = emb.embed(texts)
    t_embed = time.perf_counter() - t0
    items = [Item(f"e{k}", t) for k, t in enumerate(texts)]
    t0 = time.perf_counter()
    pairs = candidate_pairs(vecs, 0.56)
    t_pairs = time.perf_counter() - t0
    groups, _ = cluster(items, pairs, 0.56, vecs)
    t_cluster = time.perf_counter() - t0
    peak = 0.0
    if measure_memory:  # a second pass under tracemalloc (it slows Python code down)
        tracemalloc.start()
        cluster(items, candidate_pairs(vecs, 0.56), 0.56, vecs)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return {
        "n": n,
        "embed_s": t_embed,
        "pairs_s": t_pairs,
        "cluster_s": t_cluster,
        "pairs": len(pairs),
        "groups": len(groups),
        "peak_mb_cluster": peak,
        "vectors_mb": vecs.nbytes / 2**20,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def speed_example() -> dict[str, float]:
    src = ROOT / "examples" / "workspace"
    if not (src / "MEMORY.md").exists():
        return {}
    tmp = Path(tempfile.mkdtemp(prefix="memcore-example-"))
    try:
        dst = tmp / "ws"
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".dreams"))
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "memcore", "-w", str(dst), "dream", "--auto"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        wall = time.perf_counter() - t0
        return {
            "cli_wall_s": wall,
            "rc": proc.returncode,
            "line": proc.stdout.strip().splitlines()[-1:],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="hashing,minilm")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    args = ap.parse_args()
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        try:
            q = quality(backend)
        except Exception as exc:  # the extra may be missing
            print(f"[{backend}] skipped: {exc}")
            continue
        print(
            f"[{backend}] threshold={q['threshold']:.2f} entries "
            f"{q['entries_before']} -> {q['entries_after']}"
        )
        for k in ("report", "auto"):
            print(
                f"  {k:6s} merge precision={q[k + '_precision']:.3f} recall={q[k + '_recall']:.3f} "
                f"near-miss false merges={q[k + '_near_false']:.1%} contradictions merged="
                f"{q[k + '_contra_merged']} cross-scope merged={q[k + '_xscope_merged']}"
            )
        print(
            f"  conflicts reported={q['conflicts_reported']} recall={q['conflict_recall']:.3f} "
            f"precision={q['conflict_precision']:.3f}; review queue={q['review_queued']}"
        )
        print(
            f"  after dream --auto: answerable={q['answerable']:.1%} stale forgotten="
            f"{q['stale_forgotten']:.1%} pinned kept={q['pinned_kept']:.1%} "
            f"merged={q['merged_auto']}"
        )
        if args.sweep:
            print("  sweep: t precision recall near-miss-FM para-recall")
            for t, p, r, nf, pr in sweep(backend):
                print(f"    {t:.2f} {p:.3f} {r:.3f} {nf:.3f} {pr:.3f}")
    if not args.skip_speed:
        for templated in (False, True):
            sp = speed_cluster(args.n, templated=templated, measure_memory=not templated)
            kind = "templated (adversarial)" if templated else "varied"
            mem = f", peak traced {sp['peak_mb_cluster']:.0f} MB" if not templated else ""
            print(
                f"[speed] hashing merge clustering, {kind} n={sp['n']}: candidate pairs "
                f"{sp['pairs_s']:.2f}s + clustering = {sp['cluster_s']:.2f}s ({sp['pairs']} pairs, "
                f"{sp['groups']} groups{mem}; vectors {sp['vectors_mb']:.0f} MB, maxrss "
                f"{sp['maxrss_mb']:.0f} MB); embedding {sp['embed_s']:.2f}s"
            )
        ex = speed_example()
        if ex:
            print(
                f"[speed] memcore dream --auto on examples/workspace: {ex['cli_wall_s']:.2f}s "
                f"wall (rc={ex['rc']}) {ex['line']}"
            )
        else:
            print("[speed] examples/workspace/MEMORY.md not found; skipped")


if __name__ == "__main__":
    replace  # noqa: B018 - keep import for readers extending settings
    main()
