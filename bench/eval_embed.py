"""How well each embedding backend separates the labelled pairs of bench/eval/judge.

    python bench/eval_embed.py --split tune [--backends hashing,minilm,use-m3] [--k 1,5,8]

Per backend, on one split (``tune`` while choosing; ``holdout`` once, at the end):

* cosine of the two entries per category (mean, min, max);
* ROC AUC of ``same`` pairs (cross-scope pairs left out: their texts are identical) against
  qualifier near misses, against all ``related`` pairs, against ``unrelated`` pairs and against
  every pair that is not ``same``: the chance that a true duplicate scores above the other kind;
* the best single merge threshold (same vs not same): its precision, recall and accuracy;
* recall at top-k in a pool of every entry of the split: the share of pairs whose other entry
  is among an entry's k nearest neighbours (either direction), for translations, for every
  duplicate, and for contradictions (supersedes + conflict) - what a top-k candidate search
  finds with this backend alone;
* translations per language pair (mean cosine).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "eval" / "judge"))

from load import load  # noqa: E402

from memcore.search.embeddings import get_embedder  # noqa: E402


def auc(pos: list[float], neg: list[float]) -> float:
    """P(a positive scores above a negative), ties counting half."""
    if not pos or not neg:
        return float("nan")
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(((p > n).sum() + 0.5 * (p == n).sum()) / (p.size * n.size))


def best_threshold(pos: list[float], neg: list[float]) -> tuple[float, float, float, float]:
    """(threshold, precision, recall, accuracy) of the most accurate cut ``cos >= t``."""
    best = (0.0, 0.0, 0.0, -1.0)
    for t in sorted(set(pos) | set(neg)):
        tp = sum(c >= t for c in pos)
        fp = sum(c >= t for c in neg)
        acc = (tp + len(neg) - fp) / (len(pos) + len(neg))
        if acc > best[3]:
            best = (t, tp / max(1, tp + fp), tp / len(pos), acc)
    return best


def evaluate(backend: str, rows: list[dict], ks: list[int]) -> dict[str, object]:
    texts = sorted({r[side]["text"] for r in rows for side in ("a", "b")})
    index = {t: i for i, t in enumerate(texts)}
    emb = get_embedder(backend)
    fit = getattr(emb, "fit", None)
    if callable(fit):
        fit(texts)  # hashing: IDF over the split's entries, as dream fits it on MEMORY.md
    vecs = np.asarray(emb.embed(texts), dtype=np.float32)
    sims = vecs @ vecs.T
    np.fill_diagonal(sims, -np.inf)
    order = np.argsort(-sims, axis=1)
    rank = np.empty_like(order)
    rank[np.arange(len(texts))[:, None], order] = np.arange(len(texts))[None, :]

    by_cat: dict[str, list[float]] = defaultdict(list)
    by_label: dict[str, list[float]] = defaultdict(list)
    langs: dict[str, list[float]] = defaultdict(list)
    found: dict[str, list[int]] = defaultdict(list)  # group -> best rank per pair
    for r in rows:
        i, j = index[r["a"]["text"]], index[r["b"]["text"]]
        cos = float(vecs[i] @ vecs[j])
        by_cat[r["category"]].append(cos)
        if r["category"] == "cross-scope":
            continue
        by_label[r["label"]].append(cos)
        if r["category"] == "qualifier-near-miss":
            by_label["qualifier-near-miss"].append(cos)
        best_rank = int(min(rank[i, j], rank[j, i]))
        if r["label"] == "same":
            found["duplicates"].append(best_rank)
        if r["label"] in ("supersedes", "conflict"):
            found["contradictions"].append(best_rank)
        if r["category"] == "translation":
            found["translations"].append(best_rank)
            langs[r["note"].split()[0]].append(cos)
    same = by_label["same"]
    not_same = [c for lbl, cs in by_label.items() if lbl not in ("same", "qualifier-near-miss")
                for c in cs]  # fmt: skip
    return {
        "id": emb.id,
        "pool": len(texts),
        "cats": {c: (np.mean(v), np.min(v), np.max(v), len(v)) for c, v in sorted(by_cat.items())},
        "auc": {
            "qualifier-near-miss": auc(same, by_label["qualifier-near-miss"]),
            "related": auc(same, by_label["related"]),
            "unrelated": auc(same, by_label["unrelated"]),
            "supersedes+conflict": auc(same, by_label["supersedes"] + by_label["conflict"]),
            "all not same": auc(same, not_same),
        },
        "threshold": best_threshold(same, not_same),
        "recall": {g: {k: float(np.mean(np.asarray(v) < k)) for k in ks} for g, v in found.items()},
        "counts": {g: len(v) for g, v in found.items()},
        "langs": {lang: float(np.mean(v)) for lang, v in sorted(langs.items())},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", required=True, choices=("tune", "holdout"))
    ap.add_argument("--backends", default="hashing,minilm,use-m3")
    ap.add_argument("--k", default="1,5,8")
    args = ap.parse_args()
    rows = load(args.split)
    ks = [int(k) for k in args.k.split(",")]
    results = {b: evaluate(b, rows, ks) for b in args.backends.split(",") if b}
    names = list(results)
    head = " | ".join(f"{results[b]['id']}" for b in names)
    sep = "|---" * (len(names) + 1) + "|"
    print(f"# Split {args.split}: {len(rows)} pairs, pool of {results[names[0]]['pool']} entries")

    print(f"\n## Cosine per category, mean (min-max)\n| category (pairs) | {head} |\n{sep}")
    for cat, first in results[names[0]]["cats"].items():  # type: ignore[attr-defined]
        cells = []
        for b in names:
            m, lo, hi, _ = results[b]["cats"][cat]  # type: ignore[index]
            cells.append(f"{m:.2f} ({lo:.2f}-{hi:.2f})")
        print(f"| {cat} ({first[3]}) | " + " | ".join(cells) + " |")

    print(f"\n## ROC AUC of same pairs against\n| against | {head} |\n{sep}")
    for what in results[names[0]]["auc"]:  # type: ignore[attr-defined]
        cells = [f"{results[b]['auc'][what]:.3f}" for b in names]  # type: ignore[index]
        print(f"| {what} | " + " | ".join(cells) + " |")

    print(f"\n## Best single merge threshold (same vs not same)\n| figure | {head} |\n{sep}")
    for n, label in enumerate(("threshold", "precision", "recall", "accuracy")):
        cells = [f"{results[b]['threshold'][n]:.3f}" for b in names]  # type: ignore[index]
        print(f"| {label} | " + " | ".join(cells) + " |")

    print(f"\n## Recall at top-k in the pool (either direction)\n| pairs | {head} |\n{sep}")
    for group, count in results[names[0]]["counts"].items():  # type: ignore[attr-defined]
        for k in ks:
            cells = [f"{results[b]['recall'][group][k]:.3f}" for b in names]  # type: ignore[index]
            print(f"| {group} ({count}), k={k} | " + " | ".join(cells) + " |")

    print(f"\n## Translations: mean cosine per language pair\n| languages | {head} |\n{sep}")
    for lang in results[names[0]]["langs"]:  # type: ignore[attr-defined]
        cells = [f"{results[b]['langs'][lang]:.2f}" for b in names]  # type: ignore[index]
        print(f"| {lang} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
