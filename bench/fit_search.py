"""Fit the score calibration of memory search (memcore/search/fusion.py) on the development
queries.

    python bench/fit_search.py [--backends hashing,minilm,use-m3,use-m3-alone] [--split dev]

For every query of the split, every candidate chunk (lexical and model neighbours) is one
example: its signals (lexical, hashed, dense) and whether it answers the query. A logistic
regression (Newton's method, a small L2 penalty) gives the coefficients; they are printed as
the ``CALIBRATIONS`` entries to paste into fusion.py, with the log loss and how the fitted
score separates right from wrong top hits. ``dev`` is every labelled query of the repository
(queries.jsonl's two halves, fresh.jsonl and fresh3.jsonl, all used while tuning); a blind set
written later is never fitted on. ``use-m3`` is fitted with its second model (MiniLM, when
installed: the ``use-m3+minilm`` entry, on the queries it is asked about), ``use-m3-alone``
without it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_quality import EVAL, available_backends, eval_index, is_answer, load_queries

FEATURES = (
    "lexical",
    "hashed",
    "dense",
    "lexical_rank",
    "dense_rank",
    "specificity",
    "single_term",
    "second",
    "second_rank",
)
NO_MODEL = ("dense", "dense_rank", "single_term")  # not in the hashing backend's calibration
PAIR = ("second", "second_rank")  # only with a second model
# single_term is fitted last, alone (fit_offset)


def examples(backend: str, split: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Signals of every candidate of every query of the split (and of the broad queries, as
    hits that answer nothing), whether each answers its query, and the calibration's name."""
    sys.path.insert(0, str(EVAL))
    from corpus import BROAD

    from memcore.search.companion import companion_for
    from memcore.search.fusion import place
    from memcore.search.query import candidates

    xs, ys = [], []
    with eval_index(backend) as (conn, emb):
        second = companion_for(emb)
        name = backend.removesuffix("-alone")
        if second is not None:
            name += "+" + second.id.split("-")[0]
        queries = load_queries(split) + [{"query": b, "answers": []} for b in BROAD]
        for q in queries:
            cands = candidates(conn, q["query"], emb)
            if second is not None and cands and cands[0].second is None:
                continue  # a query the second model is not asked about: use-m3 alone scores it
            for c in cands:
                hit = {"path": c.path, "startLine": c.start_line, "endLine": c.end_line}
                xs.append(
                    [
                        c.lexical,
                        c.hashed,
                        c.dense if c.dense is not None else 0.0,
                        place(c.lexical_rank),
                        place(c.dense_rank),
                        c.specificity,
                        1.0 if c.single_term else 0.0,
                        c.second if c.second is not None else 0.0,
                        place(c.second_rank),
                    ]
                )
                ys.append(1.0 if is_answer(hit, q["answers"]) else 0.0)
    return np.array(xs), np.array(ys), name


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-2) -> np.ndarray:
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) + l2 * np.r_[0, w[1:]]
        hess = (a * (p * (1 - p))[:, None]).T @ a + l2 * np.diag(np.r_[0, np.ones(len(w) - 1)])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit_offset(z: np.ndarray, on: np.ndarray, y: np.ndarray, l2: float = 1e-2) -> float:
    """The coefficient of one 0/1 feature added to fitted logits ``z`` (the others held): how
    the single-term coefficient is fitted, after the rest, so that it moves only the scores
    of one-word queries (it is constant within a query: no ranking changes) and leaves the
    other coefficients as the multi-word queries set them."""
    s = 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-(z + s * on)))
        step = ((on * (p - y)).sum() + l2 * s) / ((on * p * (1 - p)).sum() + l2)
        s -= step
        if abs(step) < 1e-10:
            break
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="hashing,minilm,use-m3")
    ap.add_argument("--split", default="dev", choices=("tune", "dev"))
    args = ap.parse_args()
    for b in available_backends(args.backends.split(",")):
        x, y, name = examples(b, args.split)
        single = FEATURES.index("single_term")
        cols = [
            i
            for i, f in enumerate(FEATURES)
            if f != "single_term"
            and (b != "hashing" or f not in NO_MODEL)
            and ("+" in name or f not in PAIR)
        ]
        w = fit(x[:, cols], y)
        coef = dict.fromkeys(FEATURES, 0.0)
        coef.update({FEATURES[i]: float(v) for i, v in zip(cols, w[1:], strict=True)})
        z = w[0] + x @ np.array([coef[f] for f in FEATURES])
        if b != "hashing":
            coef["single_term"] = fit_offset(z, x[:, single], y)
            z = z + coef["single_term"] * x[:, single]
        p = np.clip(1 / (1 + np.exp(-z)), 1e-9, 1 - 1e-9)
        loss = float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
        args_text = ", ".join(f"{f}={coef[f]:.3f}" for f in FEATURES if coef[f])
        print(f'    "{name}": Calibration(bias={w[0]:.3f}, {args_text}),')
        print(f"    # {len(y)} examples, {int(y.sum())} right, log loss {loss:.4f}")
        for lo in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9):
            sel = (p >= lo) & (p < lo + (0.1 if lo < 0.9 else 0.11))
            if sel.any():
                print(f"      score {lo:.1f}+: {int(sel.sum())} hits, {y[sel].mean():.2f} right")


if __name__ == "__main__":
    main()
