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


def test_the_quality_bench_takes_a_query_file_with_its_own_workspace(tmp_path: Path) -> None:
    """``--workspace DIR``: the answer paths of the query file are relative to DIR, which is
    copied and indexed afresh (an index left in it is not reused)."""
    ws = tmp_path / "other-ws"
    (ws / "memory" / ".dreams").mkdir(parents=True)
    (ws / "memory" / ".dreams" / "memcore.sqlite").write_bytes(b"not a database")
    (ws / "MEMORY.md").write_text("# Memory\n\n- The boat is moored at pier 7.\n", "utf-8")
    (ws / "memory" / "2026-01-02.md").write_text(
        "# 2026-01-02\n\n- Paid the harbour fee for the whole season.\n", "utf-8"
    )
    rows = [
        ("k1", "keyword", "pier 7 boat", "MEMORY.md", 3),
        ("k2", "keyword", "harbour fee", "memory/2026-01-02.md", 3),
    ]
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        "".join(
            json.dumps(
                {
                    "id": i,
                    "kind": kind,
                    "query": text,
                    "answers": [{"path": path, "startLine": line, "endLine": line}],
                }
            )
            + "\n"
            for i, kind, text, path, line in rows
        ),
        "utf-8",
    )
    bench = EVAL.parent.parent / "bench_search.py"
    args = [sys.executable, str(bench), "--quality", "--split", str(qfile), "--backends", "hashing"]
    proc = subprocess.run([*args, "--workspace", str(ws)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| hashing | keyword | 2 | 1.000 | 1.000 | 1.000 |" in proc.stdout
    assert (ws / "memory" / ".dreams" / "memcore.sqlite").read_bytes() == b"not a database"
    # without it the paths are read against the labelled workspace, which has no such lines
    proc = subprocess.run(args, capture_output=True, text=True)
    assert "| hashing | keyword | 2 | 0.000 | 0.000 | 0.000 |" in proc.stdout
    named = [sys.executable, str(bench), "--quality", "--split", "tune", "--workspace", str(ws)]
    proc = subprocess.run(named, capture_output=True, text=True)
    assert proc.returncode != 0 and "--workspace goes with --split PATH.jsonl" in proc.stderr
