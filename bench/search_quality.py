"""Retrieval quality of memory search on the labelled set in bench/eval/search/.

Used by ``bench/bench_search.py --quality``: every query of one split is searched (nothing
recorded) on a fresh copy of the labelled workspace, once per embedding backend; a hit is right
when its path is an answer's and its line range overlaps the answer's lines.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

EVAL = Path(__file__).resolve().parent / "eval" / "search"
KINDS = ("keyword", "paraphrase", "question", "other", "typo")


#: Queries written by someone who never saw the search code, in their own files (same format
#: as queries.jsonl). Blind when first run; tuned on since, like queries.jsonl.
FRESH = EVAL / "fresh.jsonl"
FRESH3 = EVAL / "fresh3.jsonl"
#: The third such set, on a workspace of its own (development data since its one blind run).
FRESH4 = EVAL / "fresh4" / "fresh4.jsonl"
FRESH4_WORKSPACE = EVAL / "fresh4" / "workspace"


def load_queries(split: str) -> list[dict[str, Any]]:
    """The queries of ``split``: ``tune`` or ``holdout`` (queries.jsonl), ``all`` (both),
    ``fresh`` (fresh.jsonl), ``fresh3`` (fresh3.jsonl), ``dev`` (all of these), ``fresh4``
    (fresh4/fresh4.jsonl, on its own workspace), or the path of another file in the same
    format (a blind set)."""
    if split == "dev":
        return load_queries("all") + load_queries("fresh") + load_queries("fresh3")
    if split in ("fresh", "fresh3", "fresh4") or split.endswith(".jsonl"):
        path = {"fresh": FRESH, "fresh3": FRESH3, "fresh4": FRESH4}.get(split) or Path(split)
        if not path.is_file():
            raise SystemExit(f"{path} does not exist")
        text = path.read_text("utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    rows = [json.loads(line) for line in (EVAL / "queries.jsonl").read_text("utf-8").splitlines()]
    return [q for q in rows if split == "all" or q["split"] == split]


def is_blind(split: str) -> bool:
    """Whether ``split`` is a query file other than the development sets of bench/eval/search
    (a blind set: the tuning aids refuse it)."""
    return split.endswith(".jsonl") and Path(split).resolve() not in (FRESH, FRESH3, FRESH4)


def split_workspace(split: str, workspace: Path | None = None) -> Path:
    """The workspace ``split``'s answer paths are relative to: ``workspace`` when given, the
    fresh4 workspace for fresh4, else the labelled workspace of bench/eval/search."""
    if workspace is not None:
        return workspace
    if split == "fresh4" or (split.endswith(".jsonl") and Path(split).resolve() == FRESH4):
        return FRESH4_WORKSPACE
    return EVAL / "workspace"


def is_answer(hit: dict[str, Any], answers: list[dict[str, Any]]) -> bool:
    return any(
        hit["path"] == a["path"]
        and hit["startLine"] <= a["endLine"]
        and hit["endLine"] >= a["startLine"]
        for a in answers
    )


#: Bench names beyond the backends: the default model searched without its second model.
ALONE = {"use-m3-alone": "use-m3"}


@contextmanager
def backend_env(backend: str) -> Iterator[None]:
    """Searches inside run with ``backend``: a backend name (``use-m3`` with its second model
    when that is installed, as by default) or ``use-m3-alone`` (the second model turned off)."""
    from memcore.search.companion import ENV

    keys = ("MEMCORE_EMBEDDER", ENV)
    old = {k: os.environ.get(k) for k in keys}
    os.environ["MEMCORE_EMBEDDER"] = ALONE.get(backend, backend)
    os.environ[ENV] = "none" if backend in ALONE else "auto"
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def eval_index(backend: str, split: str = "dev") -> Iterator[tuple[Any, Any]]:
    """``(index connection, embedder)`` of a fresh copy of the labelled workspace, indexed
    with ``backend`` (model vectors too when it has them), for the tuning aids that read the
    candidates themselves."""
    from memcore.search.dense import sync_dense, uses_dense
    from memcore.search.query import open_index, search_embedder, update_index
    from memcore.workspace.core import Workspace

    with tempfile.TemporaryDirectory() as tmp, backend_env(backend):
        root = Path(tmp) / "ws"
        shutil.copytree(split_workspace(split), root, ignore=shutil.ignore_patterns(".dreams"))
        ws = Workspace(root)
        emb = search_embedder(ws)
        conn = open_index(ws)
        try:
            update_index(conn, ws)
            if uses_dense(emb):
                sync_dense(conn, emb)
            yield conn, emb
        finally:
            conn.close()


def copy_workspace(source: Path, root: Path) -> None:
    """Copy a labelled workspace to ``root``, without any index or recall store it holds (so
    every run indexes the notes afresh)."""
    if not (source / "MEMORY.md").is_file() and not (source / "memory").is_dir():
        raise SystemExit(f"{source}: not a workspace (no MEMORY.md and no memory/ folder)")
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".dreams"))


def evaluate(
    backend: str, split: str, limit: int = 5, workspace: Path | None = None
) -> dict[str, Any]:
    """recall@1, recall@5 and MRR per kind (and ``all``), plus the score of right top hits and
    of wrong ones (how well a score separates them). ``workspace`` is the folder the split's
    answer paths are relative to (default: the labelled workspace of bench/eval/search)."""
    from memcore.search.query import search
    from memcore.workspace.core import Workspace

    queries = load_queries(split)
    per: dict[str, list[tuple[int, float]]] = {k: [] for k in KINDS}
    right_scores: list[float] = []
    wrong_scores: list[float] = []
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, backend_env(backend):
        root = Path(tmp) / "ws"
        copy_workspace(split_workspace(split, workspace), root)
        ws = Workspace(root)
        t0 = time.perf_counter()
        search(ws, "warm up", record=False)
        index_s = time.perf_counter() - t0
        times = []
        for q in queries:
            t0 = time.perf_counter()
            hits = search(ws, q["query"], record=False, limit=limit).results
            times.append(time.perf_counter() - t0)
            rank = next((i + 1 for i, h in enumerate(hits) if is_answer(h, q["answers"])), 0)
            per[q["kind"]].append((rank, hits[0]["score"] if hits else 0.0))
            for h in hits[:1]:
                (right_scores if is_answer(h, q["answers"]) else wrong_scores).append(h["score"])
            if rank == 0 or rank > 5:
                misses.append(f"{q['id']}: {q['query']!r}")
    out: dict[str, Any] = {"backend": backend, "split": split, "kinds": {}}
    for kind, rows in [*per.items(), ("all", [r for part in per.values() for r in part])]:
        n = len(rows)
        out["kinds"][kind] = {
            "n": n,
            "r1": sum(1 for r, _ in rows if r == 1) / n if n else 0.0,
            "r5": sum(1 for r, _ in rows if 1 <= r <= 5) / n if n else 0.0,
            "mrr": sum(1 / r for r, _ in rows if r) / n if n else 0.0,
        }
    out["rightTopScore"] = statistics.median(right_scores) if right_scores else 0.0
    out["wrongTopScore"] = statistics.median(wrong_scores) if wrong_scores else 0.0
    out["medianMs"] = statistics.median(times) * 1000
    out["firstSearchS"] = index_s
    out["misses"] = misses
    return out


def retrievers(backend: str, split: str) -> dict[str, dict[str, float]]:
    """recall@5 per kind of each retriever alone: the lexical candidates by bm25 place, the
    model's neighbours by cosine place (every backend but hashing), and the fused score; where
    a query's answers rank when each half of the hybrid search ranks alone."""
    from memcore.search.dense import uses_dense
    from memcore.search.query import candidates, query_index

    per: dict[str, dict[str, list[int]]] = {}
    with eval_index(backend, split) as (conn, emb):
        for q in load_queries(split):
            cands = candidates(conn, q["query"], emb)

            def best(place: str, cands: list[Any] = cands, q: dict[str, Any] = q) -> int:
                ranks = [
                    getattr(c, place)
                    for c in cands
                    if getattr(c, place)
                    and is_answer(
                        {"path": c.path, "startLine": c.start_line, "endLine": c.end_line},
                        q["answers"],
                    )
                ]
                return min(ranks) if ranks else 0

            hits = query_index(conn, q["query"], 5, embedder=emb)
            fused = next((i + 1 for i, h in enumerate(hits) if is_answer(h, q["answers"])), 0)
            row = per.setdefault(q["kind"], {"lexical": [], "dense": [], "fused": []})
            row["lexical"].append(best("lexical_rank"))
            row["dense"].append(best("dense_rank") if uses_dense(emb) else -1)
            row["fused"].append(fused)
    return {
        kind: {
            name: (sum(1 for r in ranks if 1 <= r <= 5) / len(ranks) if ranks[0] >= 0 else -1.0)
            for name, ranks in row.items()
        }
        for kind, row in per.items()
    }


def print_retrievers(split: str, backends: list[str]) -> None:
    if is_blind(split):
        raise SystemExit("--retrievers is a tuning aid: not for a blind set")
    print(f"\n# recall@5 of each retriever alone, split {split}")
    print("| backend | kind | lexical (bm25) alone | model neighbours alone | fused |")
    print("|---|---|---|---|---|")
    for b in available_backends(backends):
        for kind, r in retrievers(b, split).items():
            dense = f"{r['dense']:.2f}" if r["dense"] >= 0 else "-"
            print(f"| {b} | {kind} | {r['lexical']:.2f} | {dense} | {r['fused']:.2f} |")


def available_backends(wanted: list[str]) -> list[str]:
    from memcore.search.embeddings import extra_installed

    return [b for b in wanted if b == "hashing" or extra_installed(ALONE.get(b, b))]


def print_quality(
    split: str, backends: list[str], show_misses: bool = False, workspace: Path | None = None
) -> None:
    if show_misses and is_blind(split):
        raise SystemExit("--misses is a tuning aid: not for a blind set")
    if workspace is not None and not split.endswith(".jsonl"):
        raise SystemExit(
            "--workspace goes with --split PATH.jsonl (the named splits are labelled"
            " on bench/eval/search/workspace)"
        )
    load_queries(split)  # a missing file stops here, before any table is printed
    where = f", workspace {workspace}" if workspace is not None else ""
    print(f"\n# search quality, split {split}{where} (load average {os.getloadavg()[0]:.2f})")
    print("| backend | kind | queries | recall@1 | recall@5 | MRR |")
    print("|---|---|---|---|---|---|")
    results = []
    for b in available_backends(backends):
        r = evaluate(b, split, workspace=workspace)
        results.append(r)
        for kind, k in r["kinds"].items():
            print(f"| {b} | {kind} | {k['n']} | {k['r1']:.3f} | {k['r5']:.3f} | {k['mrr']:.3f} |")
    print("\n| backend | median top score, right / wrong | median search ms | first search s |")
    print("|---|---|---|---|")
    for r in results:
        print(
            f"| {r['backend']} | {r['rightTopScore']:.3f} / {r['wrongTopScore']:.3f} |"
            f" {r['medianMs']:.1f} | {r['firstSearchS']:.2f} |"
        )
    if show_misses:
        for r in results:
            print(f"\n## misses at 5, {r['backend']} ({len(r['misses'])})")
            for m in r["misses"]:
                print("-", m)
