"""Consolidation quality and speed figures.

    python bench/bench_dream.py [--backends hashing,minilm] [--n 20000] [--skip-speed]
    python bench/bench_dream.py --only-speed [--speed-backends hashing,use-m3] [--runs 2]

Per backend, on the labelled evaluation workspace of bench/eval/: merge precision and recall
over pairs (report level, and what --auto applies), near-miss false merges, contradictions
merged, cross-scope merges, conflicts found, stale items forgotten, pinned items kept, and the
share of questions still answerable from MEMORY.md after ``dream --auto``, with the offline
judge. Speed: a whole ``dream --auto`` (candidates, judge, merges) on 300 and --n synthetic
entries per speed backend, in a fresh process, --runs times over the same workspace (run 1
cold, later runs warm: the caches of the earlier runs, MEMORY.md as they left it): wall and CPU
time, peak RSS, the time of each step and the load average; and ``memcore dream --auto`` on
examples/workspace.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "eval"))

from facts_ws import build  # noqa: E402

from memcore.dream import cycle, tables  # noqa: E402
from memcore.dream import plan as planning  # noqa: E402
from memcore.dream.settings import ConsolidationSettings  # noqa: E402
from memcore.workspace.core import Workspace  # noqa: E402

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def _pairs_of_groups(groups: list[list[str]]) -> set[frozenset[str]]:
    out: set[frozenset[str]] = set()
    for g in groups:
        out.update(frozenset(p) for p in itertools.combinations(g, 2))
    return out


def quality(backend: str) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="memcore-eval-"))
    try:
        lab = build(tmp / "ws", NOW)
        ws = Workspace(tmp / "ws")
        s = ConsolidationSettings(embedder=backend, judge="offline")
        steps = ("merge", "reconcile", "decay", "forget")
        with tables.connect(ws) as conn:
            plan = planning.build_plan(ws, now=NOW, steps=steps, conn=conn, settings=s)
        proposed = _pairs_of_groups([[m.keeper, *m.absorbed] for m in plan.merges])
        auto = _pairs_of_groups([[m.keeper, *m.absorbed] for m in plan.auto_merges()])
        res: dict[str, Any] = {"judge": plan.judge}
        for name, pred in (("report", proposed), ("auto", auto)):
            tp = len(pred & lab.dup_pairs)
            res[f"{name}_precision"] = tp / len(pred) if pred else 1.0
            res[f"{name}_recall"] = tp / len(lab.dup_pairs)
            res[f"{name}_near_false"] = len(pred & lab.near_pairs) / len(lab.near_pairs)
            res[f"{name}_contra_merged"] = len(pred & lab.contra_pairs)
            res[f"{name}_xscope_merged"] = len(pred & lab.cross_scope_pairs)
        found = {frozenset((c.a, c.b)) for c in plan.conflicts}
        found |= {frozenset((x.newer, x.older)) for x in plan.supersedes}
        res["superseded"] = len(plan.supersedes)
        contra_facts = {lab.role[e][1] for e, (r, _) in lab.role.items() if r == "contra"}
        hit_facts = {
            lab.role[next(iter(p & {e for e in p if lab.role[e][0] == "contra"}))][1]
            for p in found & lab.contra_pairs
        }
        res["conflicts_reported"] = len(found)
        res["conflict_recall"] = len(hit_facts) / len(contra_facts)
        res["conflict_precision"] = len(found & lab.contra_pairs) / len(found) if found else 1.0
        out = cycle.apply_plan(plan, now=NOW, mode="auto", allow_loss=True)
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


_SPEED_CODE = r"""
import json, resource, sys, time
from pathlib import Path

from memcore.dream import cycle, judging, merge, plan, reconcile
from memcore.judge import analysis, candidates

steps = {}
cpu_steps = {}


def timed(owner, name, label):
    fn = getattr(owner, name)

    def wrap(*a, **k):
        t, c = time.perf_counter(), time.process_time()
        try:
            return fn(*a, **k)
        finally:
            steps[label] = steps.get(label, 0.0) + time.perf_counter() - t
            cpu_steps[label] = cpu_steps.get(label, 0.0) + time.process_time() - c

    setattr(owner, name, wrap)


timed(cycle, "build_plan", "plan (all)")
timed(plan, "parse", "parse MEMORY.md")
timed(analysis.Analyzer, "for_texts", "aliases and names")
timed(analysis.Analyzer, "_analyse", "per-entry analysis (uncached)")
timed(plan, "_embed", "embedding (+ vector cache)")
timed(candidates, "topk_neighbours", "top-k search")
timed(candidates, "candidates", "candidates (all)")
timed(judging.RunJudge, "run", "judging (+ verdict cache)")
timed(reconcile, "reconcile", "reconcile")
timed(merge, "clusters", "merge clusters")
timed(merge, "draft", "merge texts and checks")
timed(cycle, "apply_plan", "apply and journal")
ws = Path(sys.argv[1])
out = []
if sys.argv[3] == "preview":  # a preview keeps its caches only in an existing memcore.sqlite
    from memcore.dream import tables
    from memcore.workspace.core import Workspace

    with tables.connect(Workspace(ws)):
        pass
for run in range(int(sys.argv[2])):
    steps.clear()
    cpu_steps.clear()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    kids0 = kids.ru_utime + kids.ru_stime  # worker processes count too
    cpu, t = time.process_time(), time.perf_counter()
    res = cycle.run_cycle(
        __import__("memcore.workspace.core").workspace.core.Workspace(ws),
        mode=sys.argv[3],
        steps=("merge", "reconcile"),
    )
    res.setdefault("reviewOverflow", 0)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    out.append({"wall_s": time.perf_counter() - t,
        "cpu_s": time.process_time() - cpu + kids.ru_utime + kids.ru_stime - kids0,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "merged": res["merged"], "superseded": res["superseded"],
        "conflicts": res["conflicts"], "queued": res["reviewPending"],
        "overflow": res["reviewOverflow"], "candidates": res["candidates"],
        "backend": res["backend"], "steps": dict(steps), "cpu_steps": dict(cpu_steps)})
print(json.dumps(out))
"""


def speed_dream(
    n: int, templated: bool = False, backend: str = "hashing", runs: int = 2, mode: str = "auto"
) -> list[dict[str, Any]]:
    """``dream --auto`` (merge and reconcile with the offline judge) on ``n`` synthetic entries
    in a fresh process, ``runs`` times over the same workspace (the first run is cold: no
    cache; the later ones find the vector, verdict and analysis caches of the earlier ones and
    MEMORY.md as the earlier run left it; ``mode`` "preview": nothing is applied, so every
    later run finds the memory unchanged): wall and CPU time, peak RSS of the process so far,
    and the time of each step (wall; a step inside another is counted in both)."""
    tmp = Path(tempfile.mkdtemp(prefix="memcore-speed-"))
    try:
        ws = tmp / "ws"
        (ws / "memory").mkdir(parents=True)
        body = "".join(f"- {t}\n" for t in synthetic_texts(n, templated))
        (ws / "MEMORY.md").write_text("# Long-Term Memory\n\n" + body, encoding="utf-8")
        (ws / "memcore.toml").write_text(
            f'[consolidation]\nembedder = "{backend}"\njudge = "offline"\nmax_loss_fraction = 1\n',
            encoding="utf-8",
        )
        proc = subprocess.run(
            [sys.executable, "-c", _SPEED_CODE, str(ws), str(runs), mode],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip().splitlines()[-1])
        out: list[dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
        for r in out:
            r["n"] = n
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def print_speed(n: int, backend: str, runs: int, mode: str = "auto") -> None:
    load0 = _load()
    res = speed_dream(n, backend=backend, runs=runs, mode=mode)
    for k, sp in enumerate(res):
        print(
            f"[speed] dream {'--auto' if mode == 'auto' else '(preview)'} (merge, reconcile; "
            f"offline judge, {sp['backend']}) n={n} "
            f"run {k + 1} ({'cold' if k == 0 else 'warm'}): {sp['wall_s']:.2f}s wall, "
            f"{sp['cpu_s']:.2f}s CPU, peak RSS {sp['maxrss_mb']:.0f} MB; "
            f"{sp['candidates']} candidate pairs, merged {sp['merged']}, superseded "
            f"{sp['superseded']}, conflicts {sp['conflicts']} (queued {sp['queued']}, "
            f"over the cap {sp['overflow']}); load average {load0} -> {_load()}"
        )
        print(
            "        "
            + ", ".join(
                f"{k2} {v:.2f}s ({sp['cpu_steps'].get(k2, 0.0):.2f}s CPU)"
                for k2, v in sp["steps"].items()
            )
        )


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
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--only-speed", action="store_true", help="skip the quality figures")
    ap.add_argument(
        "--speed-backends", default="hashing", help="embedders of the speed runs (comma list)"
    )
    ap.add_argument("--runs", type=int, default=2, help="runs per speed workspace (1 cold)")
    ap.add_argument(
        "--mode", choices=("auto", "preview"), default="auto", help="speed runs apply or not"
    )
    ap.add_argument("--sizes", default="", help="speed sizes (comma list; default 300 and --n)")
    args = ap.parse_args()
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        if args.only_speed:
            break
        try:
            q = quality(backend)
        except Exception as exc:  # the extra may be missing
            print(f"[{backend}] skipped: {exc}")
            continue
        print(
            f"[{backend}] judge={q['judge']} entries {q['entries_before']} -> {q['entries_after']}"
        )
        for k in ("report", "auto"):
            print(
                f"  {k:6s} merge precision={q[k + '_precision']:.3f} recall={q[k + '_recall']:.3f} "
                f"near-miss false merges={q[k + '_near_false']:.1%} contradictions merged="
                f"{q[k + '_contra_merged']} cross-scope merged={q[k + '_xscope_merged']}"
            )
        print(
            f"  contradictions (superseded {q['superseded']} + review) reported="
            f"{q['conflicts_reported']} recall={q['conflict_recall']:.3f} "
            f"precision={q['conflict_precision']:.3f}; review queue={q['review_queued']}"
        )
        print(
            f"  after dream --auto: answerable={q['answerable']:.1%} stale forgotten="
            f"{q['stale_forgotten']:.1%} pinned kept={q['pinned_kept']:.1%} "
            f"merged={q['merged_auto']}"
        )
    if not args.skip_speed:
        for backend in [b.strip() for b in args.speed_backends.split(",") if b.strip()]:
            sizes = [int(x) for x in args.sizes.split(",") if x] or sorted({300, args.n})
            for n in sizes:
                print_speed(n, backend, args.runs, args.mode)
        ex = speed_example()
        if ex:
            print(
                f"[speed] memcore dream --auto on examples/workspace: {ex['cli_wall_s']:.2f}s "
                f"wall (rc={ex['rc']}) {ex['line']}"
            )
        else:
            print("[speed] examples/workspace/MEMORY.md not found; skipped")


if __name__ == "__main__":
    main()
