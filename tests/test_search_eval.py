"""The labelled search set in bench/eval/search/: built from its corpus, complete, and its
labels point at the lines that state each fact."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

EVAL = Path(__file__).resolve().parent.parent / "bench" / "eval" / "search"


def _queries() -> list[dict]:
    return [json.loads(x) for x in (EVAL / "queries.jsonl").read_text("utf-8").splitlines()]


def test_workspace_and_queries_match_the_corpus() -> None:
    proc = subprocess.run(
        [sys.executable, str(EVAL / "build.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_set_has_every_kind_and_two_disjoint_halves() -> None:
    qs = _queries()
    assert len(qs) >= 200
    kinds = Counter(q["kind"] for q in qs)
    assert set(kinds) == {"keyword", "paraphrase", "question", "other", "typo"}
    assert min(kinds.values()) >= 40
    assert {q["lang"] for q in qs if q["kind"] == "other"} == {"fr", "de", "es", "zh", "ja"}
    tune = {q["fact"] for q in qs if q["split"] == "tune"}
    holdout = {q["fact"] for q in qs if q["split"] == "holdout"}
    assert tune and holdout and not tune & holdout
    assert abs(len(tune) - len(holdout)) <= 1
    assert len({q["id"] for q in qs}) == len(qs)


def test_every_answer_is_a_line_of_the_workspace_that_states_the_fact() -> None:
    ws = EVAL / "workspace"
    for q in _queries():
        assert q["answers"], q["id"]
        for a in q["answers"]:
            lines = (ws / a["path"]).read_text("utf-8").split("\n")
            assert 1 <= a["startLine"] <= a["endLine"] <= len(lines), q["id"]
            text = lines[a["startLine"] - 1]
            assert text.startswith("- ") and len(text) > 40, (q["id"], text)
