"""Pure scoring: OpenClaw's worked examples, sanitisation, gates, sort, and invariants."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcore.recall import scoring
from memcore.recall.entries import query_hash
from memcore.workspace.clock import iso_ms

NOW = datetime(2026, 4, 10, tzinfo=UTC)


def entry(
    recalls: int,
    avg: float,
    queries: int,
    age_days: float = 0.0,
    path: str = "memory/2026-04-01.md",
    key: str | None = None,
    **extra,
) -> dict:
    last = NOW - timedelta(days=age_days)
    return {
        "key": key or f"memory:{path}:1:1",
        "path": path,
        "startLine": 1,
        "endLine": 1,
        "source": "memory",
        "snippet": "s",
        "recallCount": recalls,
        "totalScore": avg * recalls,
        "maxScore": avg,
        "firstRecalledAt": iso_ms(last),
        "lastRecalledAt": iso_ms(last),
        "queryHashes": [query_hash(f"q{i}") for i in range(queries)],
        **extra,
    }


@pytest.mark.parametrize(
    ("recalls", "avg", "queries", "age", "score"),
    [
        (1, 0.92, 1, 0, 0.603),
        (3, 0.90, 2, 0, 0.727),
        (3, 0.90, 3, 0, 0.757),
        (4, 0.90, 2, 0, 0.760),
        (5, 0.90, 3, 7, 0.773),
        (10, 0.95, 5, 0, 0.983),
    ],
)
def test_worked_examples(recalls: int, avg: float, queries: int, age: float, score: float) -> None:
    c = scoring.score_entry(
        entry(recalls, avg, queries, age), NOW, scoring.Thresholds().sanitized()
    )
    assert c.score == pytest.approx(score, abs=0.0015)


def test_components() -> None:
    assert scoring.frequency(3) == pytest.approx(0.578, abs=1e-3)
    assert scoring.frequency(10) == 1.0 and scoring.frequency(50) == 1.0
    assert scoring.recency(14) == pytest.approx(0.5)
    assert scoring.recency(7) == pytest.approx(0.7071, abs=1e-4)
    assert scoring.recency(14, half_life_days=7) == pytest.approx(0.25)
    assert scoring.recency(-3) == 1.0 and scoring.recency(5, 0) == 1.0
    assert scoring.diversity(7) == 1.0


def test_gates_and_order() -> None:
    th = scoring.Thresholds()
    entries = [
        entry(3, 0.90, 2, key="a"),  # 0.727: fails score
        entry(3, 0.95, 3, key="b", path="memory/2026-04-02.md"),
        entry(3, 0.95, 3, key="c", path="memory/2026-04-01.md"),
        entry(10, 0.95, 5, key="d"),
        entry(2, 1.0, 5, key="e"),  # fails recall count
        entry(9, 1.0, 1, key="f"),  # fails unique queries
        entry(10, 1.0, 5, key="g", promotedAt="2026-04-09T00:00:00.000Z"),
        entry(10, 1.0, 5, key="h", path="memory/network.md"),  # not a daily note
    ]
    ranked = scoring.rank(entries, NOW, th)
    assert [c.key for c in ranked] == ["d", "c", "b"]  # score desc, then path asc
    assert [c.key for c in scoring.rank(entries, NOW, th, limit=1)] == ["d"]
    assert "g" in [c.key for c in scoring.rank(entries, NOW, th, include_promoted=True)]


def test_zero_recalls_never_qualify_even_with_zero_gates() -> None:
    th = scoring.Thresholds(0, 0, 0)
    assert scoring.rank([entry(0, 1.0, 0)], NOW, th) == []


def test_sanitisation_falls_back_to_defaults() -> None:
    th = scoring.Thresholds(
        min_score=1.5,
        min_recall_count=-1,
        min_unique_queries=float("nan"),
        half_life_days=0,
        weights={"frequency": -1},
    ).sanitized()
    assert (th.min_score, th.min_recall_count, th.min_unique_queries, th.half_life_days) == (
        0.75,
        3,
        2,
        14,
    )
    assert th.weights["frequency"] == 0.0
    assert sum(th.weights.values()) == pytest.approx(1.0)


def test_weights_renormalise() -> None:
    w = scoring.normalize_weights({"frequency": 1, "relevance": 1, "diversity": 0, "recency": 0})
    assert w == {"frequency": 0.5, "relevance": 0.5, "diversity": 0.0, "recency": 0.0}
    assert scoring.normalize_weights({k: 0 for k in w}) == pytest.approx(
        scoring.normalize_weights(None)
    )


def test_feasibility_flags_rem_and_deep() -> None:
    rem = scoring.feasibility(scoring.Thresholds(0.85, 4, 3))
    assert rem["feasible"] is False and rem["minRelevanceAtMinimumCounts"] == pytest.approx(
        1.072, abs=1e-3
    )
    assert rem["reachableAt"]["minRelevance"] <= 0.95
    deep = scoring.feasibility(scoring.Thresholds(0.80, 3, 3))
    assert deep["feasible"] is False and deep["minRelevanceAtMinimumCounts"] == pytest.approx(
        1.022, abs=1e-3
    )
    assert scoring.feasibility(scoring.Thresholds())["feasible"] is True


counts = st.integers(min_value=0, max_value=200)
unit = st.floats(min_value=0, max_value=1, allow_nan=False)
ages = st.floats(min_value=0, max_value=400, allow_nan=False)
queries = st.integers(min_value=0, max_value=32)


@given(counts, unit, queries, ages)
def test_components_in_unit_interval(r: int, avg: float, q: int, age: float) -> None:
    c = scoring.score_entry(entry(r, avg, q, age), NOW, scoring.Thresholds().sanitized())
    assert all(0.0 <= v <= 1.0 for v in c.components.values())
    assert 0.0 <= c.score <= 1.0


@given(counts, counts, unit, unit, queries, ages, ages)
def test_score_monotone(
    r1: int, r2: int, a1: float, a2: float, q: int, g1: float, g2: float
) -> None:
    th = scoring.Thresholds().sanitized()
    lo_r, hi_r = sorted((r1, r2))
    lo_a, hi_a = sorted((a1, a2))
    young, old = sorted((g1, g2))
    base = scoring.score_entry(entry(max(lo_r, 1), lo_a, q, old), NOW, th).raw_score
    assert scoring.score_entry(entry(max(hi_r, 1), lo_a, q, old), NOW, th).raw_score >= base - 1e-12
    assert scoring.score_entry(entry(max(lo_r, 1), hi_a, q, old), NOW, th).raw_score >= base - 1e-12
    assert (
        scoring.score_entry(entry(max(lo_r, 1), lo_a, q, young), NOW, th).raw_score >= base - 1e-12
    )


@given(counts, unit, queries, ages, unit, st.integers(0, 10), st.integers(0, 5))
def test_gates_monotone(
    r: int, avg: float, q: int, age: float, ms: float, rc: int, uq: int
) -> None:
    """Loosening any threshold never removes a candidate; tightening never adds one."""
    e = entry(r, avg, q, age)
    strict = scoring.Thresholds(ms, rc, uq)
    loose = scoring.Thresholds(ms / 2, rc // 2, uq // 2)
    if scoring.rank([e], NOW, strict):
        assert scoring.rank([e], NOW, loose)


def test_min_relevance_needed_matches_gate() -> None:
    th = scoring.Thresholds()
    need = scoring.min_relevance_needed(th, 4, 3)
    assert math.isfinite(need)
    assert scoring.rank([entry(4, min(1.0, need + 0.001), 3)], NOW, th)
    assert not scoring.rank([entry(4, need - 0.01, 3)], NOW, th)


def test_frequency_and_diversity_do_not_carry_a_weakly_matched_entry() -> None:
    # 10 recalls from 5 distinct queries, all now: the weighted score alone passes core's 0.75
    # at a mean relevance of 0.29 (hits that more likely than not did not answer the query).
    weak = entry(10, 0.29, 5)
    th = scoring.Thresholds()
    c = scoring.score_entry(weak, NOW, th.sanitized())
    assert c.raw_score >= th.min_score
    assert not scoring.rank([weak], NOW, th)
    failed = [g.name for g in scoring.gate_checks(c, th.sanitized()) if not g.passed]
    assert failed == ["relevance"]
    assert scoring.rank([entry(10, 0.5, 5)], NOW, th)  # at the gate, it passes
    assert scoring.rank([weak], NOW, scoring.Thresholds(min_relevance=0.0))  # the knob works
    assert scoring.min_relevance_needed(th, 10, 5) == th.min_relevance


def test_min_relevance_sanitised_and_read_from_settings() -> None:
    from memcore.workspace.config import DreamingSettings

    assert scoring.Thresholds(min_relevance=1.5).sanitized().min_relevance == 0.5
    assert scoring.Thresholds(min_relevance=math.nan).sanitized().min_relevance == 0.5
    th = scoring.Thresholds.from_settings(DreamingSettings(min_relevance=0.7))
    assert th.min_relevance == 0.7
