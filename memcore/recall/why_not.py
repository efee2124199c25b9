"""Why an entry is not promoted yet: which gate holds it back, by how much, and what would pass.

Pure functions over scored entries (``memcore.recall.scoring``); ``now`` comes from the caller.
For one entry, :func:`why_not` names every failing gate in words ("needs 1 more recall",
"needs 1 more distinct query", "score 0.71 of 0.75") and says what the smallest number of
further searches would pass all gates (a mean relevance below ``min_relevance`` is not passed
by more hits at that mean): each further search is assumed to find the entry at
its current mean relevance, now (recency 1), either with a query not seen before (it counts
toward diversity) or repeating one. When no number of searches at that relevance would pass,
it says so, with the relevance the hits would need. :func:`nearest` picks the entries closest
to passing, for ``memory status``, the promotion preview and the Dreams page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from memcore.recall.scoring import (
    Candidate,
    Thresholds,
    diversity,
    frequency,
    gate_checks,
    is_eligible,
    score_entry,
)

MAX_SEARCHES = 20  # further searches considered; past that, "not within 20 searches"


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _score_after(c: Candidate, th: Thresholds, searches: int, distinct: bool) -> float:
    """Raw score of ``c`` after ``searches`` more hits at its mean relevance, now."""
    w = th.weights
    count = c.recall_count + searches
    queries = c.unique_queries + (searches if distinct else 0)
    rel = c.avg_score  # the mean does not move when new hits score the mean
    return (
        w["frequency"] * frequency(count)
        + w["relevance"] * rel
        + w["diversity"] * diversity(queries)
        + w["recency"] * 1.0
    )


def searches_to_pass(c: Candidate, th: Thresholds, distinct: bool = True) -> int | None:
    """Fewest further searches (finding the entry at its mean relevance) that pass every gate;
    None when none up to MAX_SEARCHES would."""
    for k in range(1, MAX_SEARCHES + 1):
        count = c.recall_count + k
        queries = c.unique_queries + (k if distinct else 0)
        if (
            count >= th.min_recall_count
            and queries >= th.min_unique_queries
            and c.avg_score >= th.min_relevance  # hits at the mean do not move the mean
            and _score_after(c, th, k, distinct) >= th.min_score
        ):
            return k
    return None


def _needed_relevance(c: Candidate, th: Thresholds, searches: int) -> float:
    """Mean relevance at which ``searches`` more distinct-query hits would pass the score."""
    w = th.weights
    rest = (
        w["frequency"] * frequency(c.recall_count + searches)
        + w["diversity"] * diversity(c.unique_queries + searches)
        + w["recency"]
    )
    need = (th.min_score - rest) / w["relevance"] if w["relevance"] > 0 else float("inf")
    return max(th.min_relevance, need)


def why_not(c: Candidate, th: Thresholds) -> dict[str, Any]:
    """What holds ``c`` back: ``gates`` (each failing gate with ``actual``, ``required``,
    ``short`` and ``words``), ``searchesNeeded`` (distinct-query searches that would pass, or
    None), and ``summary``, one line of words."""
    th = th.sanitized()
    failing = [g for g in gate_checks(c, th) if not g.passed]
    said = []
    gates: list[dict[str, Any]] = []
    for g in failing:
        if g.name == "recallCount":
            n = int(g.required - g.actual)
            words = f"needs {_plural(n, 'more recall')}"
        elif g.name == "uniqueQueries":
            n = int(g.required - g.actual)
            words = f"needs {_plural(n, 'more distinct query', 'more distinct queries')}"
        elif g.name == "relevance":
            words = f"mean relevance {c.avg_score:.2f} of {th.min_relevance:.2f}"
        else:
            words = f"score {c.raw_score:.2f} of {th.min_score:.2f}"
        gates.append(
            {
                "gate": g.name,
                "actual": g.actual,
                "required": g.required,
                "short": round(g.required - g.actual, 6),
                "words": words,
            }
        )
        said.append(words)
    k = searches_to_pass(c, th, distinct=True)
    same = searches_to_pass(c, th, distinct=False)
    if not failing:
        summary = "passes every gate"
    elif k is None:
        need = _needed_relevance(c, th, 3)
        summary = (
            f"{'; '.join(said)}: its hits score {c.avg_score:.2f} on "
            f"average, too low to pass within {MAX_SEARCHES} searches"
            + (f" (3 more distinct queries at {need:.2f} would)" if need <= 1 else "")
        )
    else:
        more = "one more distinct query" if k == 1 else f"{k} more distinct queries"
        tail = f"{more} would pass"
        if same is not None and same <= k:
            tail = ("one more search" if same == 1 else f"{same} more searches") + " would pass"
        summary = f"{'; '.join(said)}: {tail}"
    return {"gates": gates, "searchesNeeded": k, "summary": summary}


def nearest(
    entries: Iterable[Mapping[str, Any]], now: datetime, th: Thresholds, limit: int = 5
) -> list[dict[str, Any]]:
    """The unpromoted daily-note entries closest to passing (fewest further searches, then
    highest score), each as its candidate JSON plus ``whyNot``; entries that pass are left out
    (they are candidates already)."""
    th = th.sanitized()
    scored: list[tuple[int, float, Candidate]] = []
    for e in entries:
        if not is_eligible(e) or int(e.get("recallCount") or 0) <= 0:
            continue
        c = score_entry(e, now, th)
        if all(g.passed for g in gate_checks(c, th)):
            continue
        k = searches_to_pass(c, th, distinct=True)
        scored.append((k if k is not None else MAX_SEARCHES + 1, -c.raw_score, c))
    scored.sort(key=lambda t: (t[0], t[1], t[2].path, t[2].start_line, t[2].key))
    out = []
    for _, _, c in scored[: max(0, limit)]:  # the words only for those shown
        row = c.to_json()
        row["whyNot"] = why_not(c, th)
        out.append(row)
    return out
