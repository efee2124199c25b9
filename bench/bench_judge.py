"""Measure the judge: candidates, verdicts, merged texts, and time at 20,000 entries.

    python bench/bench_judge.py --split tune
    python bench/bench_judge.py --split holdout      # the held-out figures (run it once)

Per judge (offline with the hashing embedder; offline with MiniLM when ``memcore[embed]`` is
installed; the model judge is skipped: tests/chat_server.py has no model behind it, and a
scripted answer would only measure the script), on the labelled pairs of bench/eval/judge:

* candidates: all entries of the split in one pool (scopes as labelled), top-k neighbours
  plus rare shared tokens; recall of the true duplicate and contradiction pairs, candidate
  pairs per entry (and partners per entry, each pair counted for both entries);
* verdicts, pair by pair: merge precision / recall (``same``; cross-scope pairs must never be
  merged), contradiction precision / recall (``supersedes`` + ``conflict`` together),
  near-miss false merges and false flags (on qualifier-near-miss and
  same-subject-different-fact), cross-scope merges (must be 0), end-to-end recall (the pair
  is a candidate and judged right);
* merged texts: for true duplicates judged ``same``, how many get an offline lossless text,
  and the share of the labelled detail tokens it keeps;
* verdicts the judge gives on unlabelled candidate pairs of the pool (entries of different
  pairs were written not to contradict each other: every ``same`` / ``supersedes`` /
  ``conflict`` there is a likely false positive);
* wall time, and a synthetic 20,000-entry pool (candidates + judging, hashing embedder).
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "eval" / "judge"))

from load import load  # noqa: E402

from memcore.judge.analysis import Analyzer  # noqa: E402
from memcore.judge.candidates import candidates  # noqa: E402
from memcore.judge.merge_text import choose_keeper, merge_text  # noqa: E402
from memcore.judge.offline import OfflineJudge  # noqa: E402
from memcore.judge.protocol import EntryView  # noqa: E402
from memcore.judge.validate import check_pair  # noqa: E402
from memcore.search.embeddings import get_embedder  # noqa: E402

CONTRA = {"supersedes", "conflict"}
NEAR = {"qualifier-near-miss", "same-subject-different-fact"}


def _view(row: dict, side: str) -> EntryView:
    e = row[side]
    return EntryView(
        f"{row['id']}{side}", e["text"], e["type"], e["scope"], e["created"], e["pinned"]
    )


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3f} ({a}/{b})" if b else "n/a"


def embedders(texts: list[str]) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = [("hashing", get_embedder("hashing").fit(texts))]  # type: ignore[attr-defined]
    try:
        out.append(("minilm", get_embedder("minilm")))
    except Exception as exc:  # the extra is not installed
        print(f"offline+minilm: skipped ({exc})")
    return out


def measure(split: str, k: int, per_entry: int) -> None:
    rows = load(split)
    views = [_view(r, s) for r in rows for s in "ab"]
    texts = [v.text for v in views]
    index = {v.id: i for i, v in enumerate(views)}
    t0 = time.perf_counter()
    analyzer = Analyzer.for_texts(texts)
    t_an = time.perf_counter() - t0
    print(f"split={split}: {len(rows)} labelled pairs, pool of {len(views)} entries")
    print("model judge: skipped (no model behind tests/chat_server.py; a script would be measured)")
    for name, emb in embedders(texts):
        t0 = time.perf_counter()
        vecs = emb.embed(texts)  # type: ignore[attr-defined]
        t_emb = time.perf_counter() - t0
        t0 = time.perf_counter()
        cands = candidates(views, vecs, analyzer, k=k, per_entry=per_entry)
        t_cand = time.perf_counter() - t0
        cset = {(c.i, c.j) for c in cands}
        judge = OfflineJudge(emb, analyzer)  # type: ignore[arg-type]
        judge.remember(texts, vecs)  # the vectors the candidates used (dream: the vector cache)
        t0 = time.perf_counter()
        js = judge.judge([(_view(r, "a"), _view(r, "b")) for r in rows])
        t_judge = time.perf_counter() - t0
        labelled = set()
        c: Counter[str] = Counter()
        per_cat: dict[str, Counter[str]] = {}
        for r, j in zip(rows, js, strict=True):
            lab, v, cat = r["label"], j.verdict.value if j.verdict else "skipped", r["category"]
            pair = tuple(sorted((index[f"{r['id']}a"], index[f"{r['id']}b"])))
            labelled.add(pair)
            is_cand = pair in cset
            per_cat.setdefault(cat, Counter())["n"] += 1
            if cat == "cross-scope":
                merged = v == "same" and check_pair(j, _view(r, "a"), _view(r, "b")).ok
                c["xscope_merges"] += merged
                per_cat[cat]["ok"] += not merged
                continue
            per_cat[cat]["ok"] += (v == lab) or (
                lab in ("related", "unrelated") and v in ("related", "unrelated")
            )
            c["pred_same"] += v == "same"
            c["pred_contra"] += v in CONTRA
            if lab == "same":
                c["true_same"] += 1
                c["tp_same"] += v == "same"
                c["cand_same"] += is_cand
                c["e2e_same"] += is_cand and v == "same"
            if lab in CONTRA:
                c["true_contra"] += 1
                c["tp_contra"] += v in CONTRA
                c["cand_contra"] += is_cand
                c["e2e_contra"] += is_cand and v in CONTRA
                c["exact_contra"] += v == lab
            if cat in NEAR:
                c["near"] += 1
                c["near_merge"] += v == "same"
                c["near_flag"] += v in CONTRA
            if lab == "same" and v == "same":
                a, b = _view(r, "a"), _view(r, "b")
                keep = choose_keeper([a, b], analyzer)
                other = b if keep is a else a
                text = merge_text(keep.text, [other.text], analyzer)
                c["merges"] += 1
                if text is not None:
                    c["written"] += 1
                    c["details"] += len(r["details"])
                    c["kept"] += sum(d.casefold() in text.casefold() for d in r["details"])
        # verdicts on unlabelled candidate pairs of the pool
        extra = [(views[p.i], views[p.j]) for p in cands if (p.i, p.j) not in labelled]
        ej = judge.judge(extra)
        ev = Counter(j.verdict.value if j.verdict else "skipped" for j in ej)
        print(f"\n== offline+{name} (judge id {judge.judge_id})")
        print(
            f"candidates (k={k}, token partners={per_entry}): duplicate recall "
            f"{_ratio(c['cand_same'], c['true_same'])}, contradiction recall "
            f"{_ratio(c['cand_contra'], c['true_contra'])}; {len(cands) / len(views):.2f} "
            f"pairs/entry ({2 * len(cands) / len(views):.2f} partners/entry)"
        )
        print(
            f"merge precision {_ratio(c['tp_same'], c['pred_same'])}, recall "
            f"{_ratio(c['tp_same'], c['true_same'])}; end-to-end recall "
            f"{_ratio(c['e2e_same'], c['true_same'])}"
        )
        print(
            f"contradiction precision {_ratio(c['tp_contra'], c['pred_contra'])}, recall "
            f"{_ratio(c['tp_contra'], c['true_contra'])} (exact label "
            f"{_ratio(c['exact_contra'], c['true_contra'])}); end-to-end recall "
            f"{_ratio(c['e2e_contra'], c['true_contra'])}"
        )
        print(
            f"near-miss false merges {_ratio(c['near_merge'], c['near'])}, false flags "
            f"{_ratio(c['near_flag'], c['near'])}; cross-scope merges {c['xscope_merges']}"
        )
        print(
            f"merged texts written offline {_ratio(c['written'], c['merges'])}, details kept "
            f"{_ratio(c['kept'], c['details'])}"
        )
        print(
            f"unlabelled candidate pairs: {len(extra)} judged: "
            + ", ".join(f"{k2} {n}" for k2, n in sorted(ev.items()))
        )
        print(
            f"time: analysis {t_an:.2f}s, embed {t_emb:.2f}s, candidates {t_cand:.2f}s, "
            f"judging {len(rows)} pairs {t_judge:.2f}s + {len(extra)} pairs"
        )
        print(
            "per category (right/total): "
            + ", ".join(f"{cat} {pc['ok']}/{pc['n']}" for cat, pc in sorted(per_cat.items()))
        )


# -- the synthetic 20,000-entry pool ------------------------------------------------------

_PROJECTS = [f"proj{i}" for i in range(40)]
_THINGS = ["API", "worker", "cache", "scheduler", "frontend", "gateway", "exporter", "indexer"]
_VERBS = [
    "listens on port {n}",
    "keeps {n} days of logs",
    "runs {n} replicas",
    "times out after {n} seconds",
    "is owned by {p}",
    "deploys from branch rel-{n}",
    "stores blobs in bucket {x}-{n}",
    "is on version 1.{n}",
]
_PEOPLE = ["Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun"]


def synthetic(n: int, seed: int = 11) -> list[EntryView]:
    """``n`` entries of a coding agent's memory: facts about 40 projects' components, with a
    share of restatements, changed values and qualifier twins."""
    rng = random.Random(seed)
    out: list[EntryView] = []
    for i in range(n):
        proj = rng.choice(_PROJECTS)
        thing = rng.choice(_THINGS)
        verb = rng.choice(_VERBS).format(n=rng.randint(1, 9000), p=rng.choice(_PEOPLE), x=proj)
        env = rng.choice(["", "", "staging ", "production "])
        text = f"{proj.capitalize()}'s {env}{thing} {verb}."
        if rng.random() < 0.1 and out:
            prev = out[rng.randrange(len(out))]
            text = prev.text.replace("'s ", " ", 1).replace(".", " now.")
        scope = "global" if rng.random() < 0.2 else f"project:{proj}"
        out.append(EntryView(f"s{i}", text, "fact", scope, f"2026-{1 + i % 12:02d}-01"))
    return out


def synthetic_timing(n: int, k: int, per_entry: int) -> None:
    views = synthetic(n)
    texts = [v.text for v in views]
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    analyzer = Analyzer.for_texts(texts)
    for t in texts:
        analyzer.analyse(t)
    t_an = time.perf_counter() - t0
    t0 = time.perf_counter()
    emb = get_embedder("hashing").fit(texts)  # type: ignore[attr-defined]
    vecs = emb.embed(texts)
    t_emb = time.perf_counter() - t0
    t0 = time.perf_counter()
    cands = candidates(views, vecs, analyzer, k=k, per_entry=per_entry)
    t_cand = time.perf_counter() - t0
    t0 = time.perf_counter()
    judge = OfflineJudge(emb, analyzer)
    judge.remember(texts, vecs)
    js = judge.judge([(views[c.i], views[c.j]) for c in cands])
    t_judge = time.perf_counter() - t0
    verdicts = Counter(j.verdict.value for j in js if j.verdict)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    total = t_an + t_emb + t_cand + t_judge
    cpu = time.process_time() - cpu0
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"\n== synthetic pool of {n} entries (hashing, cold: nothing cached; the generator")
    print("   writes many same-attribute pairs with random values: most verdicts are flags)")
    print(
        f"analysis {t_an:.2f}s, embed {t_emb:.2f}s, candidates {t_cand:.2f}s "
        f"({len(cands)} pairs, {len(cands) / n:.2f}/entry), judging {t_judge:.2f}s; "
        f"total {total:.2f}s wall, {cpu:.2f}s CPU; peak RSS {peak:.0f} MB; load average {load}"
    )
    print("verdicts: " + ", ".join(f"{k2} {v}" for k2, v in sorted(verdicts.items())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("tune", "holdout", "fresh"), default="tune")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--per-entry", type=int, default=3)
    ap.add_argument("--pool", type=int, default=20000, help="synthetic pool size (0: skip)")
    ap.add_argument("--only-pool", action="store_true", help="only the synthetic timing")
    args = ap.parse_args()
    if not args.only_pool:
        measure(args.split, args.k, args.per_entry)
    if args.pool:
        synthetic_timing(args.pool, args.k, args.per_entry)


if __name__ == "__main__":
    main()
