"""Equality guard for speed work on the judge: dump every verdict and plan, compare two dumps.

    python bench/guard_verdicts.py --out /tmp/before.txt          # before a change
    python bench/guard_verdicts.py --check /tmp/before.txt        # after it: exit 1 on a diff

What is dumped (hashing embedder, offline judge; all deterministic):

* ``judge``: the labelled pairs of the tune split of bench/eval/judge and every candidate pair
  of its pool (as ``bench/bench_judge.py`` judges them): ids, verdict, confidence, newer side,
  reason;
* ``pool``: the candidate pairs and verdicts of bench_judge's synthetic pool (``--pool``
  entries, default 3,000);
* ``dream``: the plan of ``bench/bench_dream_pairs.py`` on the tune split (merges with their
  text, supersessions, conflicts), cold (no cache), then again warm (second plan over the
  same workspace with the caches written by the first), which must be the same plan;
* ``speed``: the plan of bench_dream's synthetic memory (``--dream`` entries, default 2,000).

The dump runs with ``PYTHONHASHSEED=0`` (the script restarts itself so): a few reasons name
one of several qualifiers, the first a set yields. A speed change must leave the dump byte for
byte unchanged; a change of the judge's rules
changes it on purpose (take a new baseline then).
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "eval"))
sys.path.insert(0, str(ROOT / "bench" / "eval" / "judge"))

from load import load  # noqa: E402
from pairs_ws import build_pairs  # noqa: E402

from memcore.dream import plan as planning  # noqa: E402
from memcore.dream import tables  # noqa: E402
from memcore.dream.settings import ConsolidationSettings  # noqa: E402
from memcore.judge.analysis import Analyzer  # noqa: E402
from memcore.judge.candidates import candidates  # noqa: E402
from memcore.judge.offline import OfflineJudge  # noqa: E402
from memcore.judge.protocol import EntryView, Judgement  # noqa: E402
from memcore.search.embeddings import get_embedder  # noqa: E402
from memcore.workspace.core import Workspace  # noqa: E402

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _line(tag: str, a: str, b: str, j: Judgement) -> str:
    v = j.verdict.value if j.verdict else "skipped"
    return f"{tag} {a} {b} {v} {j.confidence:.3f} {j.newer or '-'} {j.reason}"


def _view(row: dict, side: str) -> EntryView:  # type: ignore[type-arg]
    e = row[side]
    return EntryView(
        f"{row['id']}{side}", e["text"], e["type"], e["scope"], e["created"], e["pinned"]
    )


def _judge_pool(tag: str, views: list[EntryView]) -> Iterator[str]:
    texts = [v.text for v in views]
    analyzer = Analyzer.for_texts(texts)
    emb = get_embedder("hashing").fit(texts)  # type: ignore[attr-defined]
    vecs = emb.embed(texts)
    cands = candidates(views, vecs, analyzer)
    judge = OfflineJudge(emb, analyzer)
    judge.remember(texts, vecs)
    pairs = [(views[c.i], views[c.j]) for c in cands]
    yield f"{tag} candidates {len(cands)}"
    for c, (a, b), j in zip(cands, pairs, judge.judge(pairs), strict=True):
        yield _line(tag, a.id, b.id, j) + f" sim={c.sim:.4f} {c.source}"


def judge_lines() -> Iterator[str]:
    rows = load("tune")
    views = [_view(r, s) for r in rows for s in "ab"]
    texts = [v.text for v in views]
    analyzer = Analyzer.for_texts(texts)
    emb = get_embedder("hashing").fit(texts)  # type: ignore[attr-defined]
    vecs = emb.embed(texts)
    judge = OfflineJudge(emb, analyzer)
    judge.remember(texts, vecs)
    labelled = [(_view(r, "a"), _view(r, "b")) for r in rows]
    for (a, b), j in zip(labelled, judge.judge(labelled), strict=True):
        yield _line("judge", a.id, b.id, j)
    yield from _judge_pool("judge-pool", views)


def pool_lines(n: int) -> Iterator[str]:
    from bench_judge import synthetic

    yield from _judge_pool("pool", synthetic(n))


def _plan_lines(tag: str, plan: planning.Plan) -> Iterator[str]:
    yield f"{tag} judge={plan.judge} candidates={plan.candidates} skipped={len(plan.skipped)}"
    for m in plan.merges:
        absorbed = ",".join(m.absorbed)
        yield (
            f"{tag} merge {m.keeper} <- {absorbed} lossy={m.lossy} conf={m.similarity:.3f}"
            f" reason={m.reason!r} text={m.text!r}"
        )
    for s in plan.supersedes:
        yield f"{tag} supersede {s.newer} > {s.older} {s.confidence:.3f} {s.reason}"
    for c in plan.conflicts:
        yield (
            f"{tag} review {c.a} {c.b} {c.verdict} {c.confidence:.3f} {c.suggested}"
            f" sim={c.similarity:.4f} topic={c.topic!r} {c.reason}"
        )


def dump(pool: int, dream: int) -> list[str]:
    out: list[str] = []
    out.extend(judge_lines())
    out.extend(pool_lines(pool))
    for tag, make, n in (("dream", "pairs", 0), ("speed", "synthetic", dream)):
        tmp = Path(tempfile.mkdtemp(prefix="memcore-guard-"))
        try:
            if make == "pairs":
                build_pairs(tmp / "ws", "tune", NOW)
            else:
                from bench_dream import synthetic_texts

                (tmp / "ws" / "memory").mkdir(parents=True)
                body = "".join(f"- {t}\n" for t in synthetic_texts(n, False))
                (tmp / "ws" / "MEMORY.md").write_text("# Long-Term Memory\n\n" + body, "utf-8")
            ws = Workspace(tmp / "ws")
            s = ConsolidationSettings(embedder="hashing", judge="offline", max_loss_fraction=1.0)
            runs = []
            for _ in ("cold", "warm"):
                with tables.connect(ws) as conn:
                    plan = planning.build_plan(
                        ws,
                        now=NOW,
                        steps=("merge", "reconcile"),
                        conn=conn,
                        settings=s,
                        write_cache=True,
                    )
                runs.append(list(_plan_lines(tag, plan)))
            out.extend(runs[0])
            if runs[1] != runs[0]:
                out.append(f"{tag} WARM PLAN DIFFERS FROM THE COLD ONE")
                out.extend(f"{tag} warm: {x}" for x in runs[1])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # Some reasons name the first of several set members (which qualifier separates two
        # entries): fixed string hashing makes that choice the same in every dump.
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, help="write the dump here")
    ap.add_argument("--check", type=Path, help="compare with this dump; exit 1 on a difference")
    ap.add_argument("--pool", type=int, default=3000, help="synthetic judge pool size")
    ap.add_argument("--dream", type=int, default=2000, help="synthetic dream memory size")
    args = ap.parse_args()
    lines = dump(args.pool, args.dream)
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(f"{len(lines)} lines")
    if args.check:
        before = args.check.read_text(encoding="utf-8").splitlines()
        diff = list(difflib.unified_diff(before, lines, "before", "after", lineterm="", n=0))
        if diff:
            print("\n".join(diff[:60]))
            print(f"DIFFERENT: {sum(1 for d in diff if d[:1] in '+-') - 2} changed lines")
            raise SystemExit(1)
        print("identical")


if __name__ == "__main__":
    main()
