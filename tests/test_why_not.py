""" "Why not yet": the gate that holds each near candidate back, in words, in status, the
promotion preview, the page's candidates and the reply to a mode change."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from memcore import recall
from memcore.recall.scoring import Thresholds, score_entry
from memcore.recall.why_not import nearest, searches_to_pass, why_not
from memcore.workspace.core import Workspace
from tests.conftest import invoke, write_note

NOW = datetime(2026, 4, 2, 12, 0, tzinfo=UTC)
NOTE = "# 2026-04-01\n\n- The tram depot moved to Nordhafen in March.\n- Lunch was soup.\n"


def entry(count: int, queries: int, mean: float, key: str = "a") -> dict:
    return {
        "key": f"memory:memory/2026-04-01.md:{key}",
        "path": "memory/2026-04-01.md",
        "startLine": 3,
        "endLine": 3,
        "source": "memory",
        "snippet": "- The tram depot moved to Nordhafen in March.",
        "recallCount": count,
        "totalScore": mean * count,
        "maxScore": mean,
        "userQueryHashes": [f"q{i}" for i in range(queries)],
        "queryHashes": [f"q{i}" for i in range(queries)],
        "firstRecalledAt": NOW.isoformat(),
        "lastRecalledAt": NOW.isoformat(),
    }


def test_three_distinct_queries_at_076_need_one_more_distinct_query() -> None:
    th = Thresholds()
    c = score_entry(entry(3, 3, 0.76), NOW, th)
    info = why_not(c, th)
    assert [g["gate"] for g in info["gates"]] == ["score"]
    assert info["summary"] == "score 0.71 of 0.75: one more distinct query would pass"
    assert info["searchesNeeded"] == 1
    assert (
        searches_to_pass(c, th, distinct=False) is None
        or searches_to_pass(c, th, distinct=False) > 1
    )  # repeating a query is not enough


def test_count_gates_in_words_and_unreachable_relevance() -> None:
    th = Thresholds()
    c = score_entry(entry(2, 2, 0.95), NOW, th)
    info = why_not(c, th)
    assert info["gates"][0]["words"] == "needs 1 more recall"
    assert info["summary"].startswith("needs 1 more recall")
    one = score_entry(entry(1, 1, 0.9), NOW, th)
    assert "needs 1 more distinct query" in why_not(one, th)["summary"]
    low = score_entry(entry(4, 1, 0.05), NOW, th)
    assert why_not(low, th)["searchesNeeded"] is None
    assert "too low to pass" in why_not(low, th)["summary"]


def test_a_weakly_matched_entry_is_held_back_by_its_mean_relevance() -> None:
    th = Thresholds()
    c = score_entry(entry(10, 5, 0.29), NOW, th)  # the weighted score alone would pass
    info = why_not(c, th)
    assert [g["gate"] for g in info["gates"]] == ["relevance"]
    assert info["gates"][0]["words"] == "mean relevance 0.29 of 0.50"
    assert info["searchesNeeded"] is None  # more hits at the same mean never pass
    assert info["summary"].startswith("mean relevance 0.29 of 0.50: its hits score 0.29")


def test_nearest_orders_by_searches_needed_and_leaves_out_passing_entries() -> None:
    th = Thresholds()
    entries = [
        entry(1, 1, 0.9, "far"),
        entry(3, 3, 0.76, "close"),
        entry(5, 4, 0.95, "passes"),
        {**entry(3, 3, 0.76, "promoted"), "promotedAt": NOW.isoformat()},
    ]
    got = nearest(entries, NOW, th, 5)
    assert [e["key"].rsplit(":", 1)[1] for e in got] == ["close", "far"]
    assert got[0]["whyNot"]["searchesNeeded"] == 1


def _seed(ws: Workspace, recalls: int, score: float) -> None:
    write_note(ws, "2026-04-01.md", NOTE)
    hit = {
        "path": "memory/2026-04-01.md",
        "startLine": 3,
        "endLine": 3,
        "score": score,
        "snippet": "- The tram depot moved to Nordhafen in March.",
    }
    for i in range(recalls):
        recall.record_recalls(ws, f"depot question {i}", [hit], now=NOW - timedelta(hours=i))


def test_status_and_promote_preview_say_why_not_yet(ws: Workspace) -> None:
    _seed(ws, 2, 0.9)
    env = {"MEMCORE_NOW": NOW.isoformat()}
    st = json.loads(invoke(ws, "memory", "status", "--json", env=env).output)
    assert st["nearest"][0]["whyNot"]["gates"][0]["words"] == "needs 1 more recall"
    text = invoke(ws, "memory", "status", env=env).output
    assert "Not yet promoted (nearest to the gates):" in text
    assert "memory/2026-04-01.md:3-3  needs 1 more recall" in text
    pj = json.loads(invoke(ws, "memory", "promote", "--json", env=env).output)
    assert pj["candidates"] == [] and pj["nearest"][0]["whyNot"]["searchesNeeded"] == 1
    pt = invoke(ws, "memory", "promote", env=env).output
    assert "needs 1 more recall; score 0.69 of 0.75: one more distinct query would pass" in pt


def test_choosing_a_mode_warns_when_nothing_can_reach_its_gates(ws: Workspace) -> None:
    env = {"MEMCORE_NOW": NOW.isoformat()}
    empty = invoke(ws, "dreaming", "core", "--json", env=env)
    out = json.loads(empty.output)
    assert out["changed"] and any("no recalls" in w for w in out["warnings"])
    _seed(ws, 3, 0.2)  # hits far too weak for rem
    rem = json.loads(invoke(ws, "dreaming", "rem", "--json", env=env).output)
    assert any("rem's gates cannot be met at their minimum counts" in w for w in rem["warnings"])
    assert any("within 20 searches" in w for w in rem["warnings"])
    assert "Warning: rem's gates" in invoke(ws, "dreaming", "rem", env=env).output
    _seed(ws, 2, 0.95)  # now one strong entry is close to core's gates
    core = json.loads(invoke(ws, "dreaming", "core", "--json", env=env).output)
    assert core["warnings"] == []
