"""``memcore memory search`` and ``memcore memory record`` through click's CliRunner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memcore.recall.store import read_store
from memcore.workspace.core import Workspace
from tests.conftest import held_lock, invoke
from tests.test_search import make_ws


@pytest.fixture
def mws(tmp_path: Path) -> Workspace:
    return make_ws(tmp_path / "ws")


def run(ws: Workspace, *args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    return invoke(ws, "memory", *args, input=stdin)


def test_search_text_output(mws: Workspace) -> None:
    res = run(mws, "search", "postgres upgrade staging", "--limit", "2")
    assert res.exit_code == 0, res.stderr
    first = res.stdout.splitlines()[0]
    assert first.startswith("memory/2026-04-01.md:8-8  score=0.")
    assert len(first.split("score=")[1]) == 5  # three decimals
    assert "    - Ran the Postgres 15 upgrade on staging" in res.stdout
    assert res.stdout.count("score=") == 2
    assert read_store(mws).entries  # the daily-note hit was recorded


def test_search_json_shape(mws: Workspace) -> None:
    res = run(mws, "search", "ramen place", "--json", "--no-record")
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert set(doc) == {"query", "results"}
    assert doc["query"] == "ramen place"
    hit = doc["results"][0]
    assert set(hit) == {"path", "startLine", "endLine", "score", "snippet", "source"}
    assert hit["source"] == "memory" and 0.85 <= hit["score"] <= 1
    assert not Workspace(mws.root).store_path.exists()


def test_search_no_matches_and_warnings_go_to_stderr(mws: Workspace) -> None:
    (mws.memory_dir / "2026-04-09.md").write_bytes(b"- bad \xff byte\n")
    res = run(mws, "search", "zyzzyva", "--json")
    assert res.exit_code == 0
    assert json.loads(res.stdout) == {
        "query": "zyzzyva",
        "results": [],
        "warnings": [json.loads(res.stdout)["warnings"][0]],
    }
    assert "memory/2026-04-09.md" in res.stderr and "UTF-8" in res.stderr
    text = run(mws, "search", "zyzzyva")
    assert text.stdout.strip() == "No matches."


def test_search_still_answers_when_recording_fails(mws: Workspace) -> None:
    mws.ensure_dreams_dir()
    mws.store_path.mkdir()
    res = run(mws, "search", "postgres upgrade staging", "--json")
    assert res.exit_code == 0
    assert json.loads(res.stdout)["results"]
    assert "recall recording failed" in res.stderr


def test_search_missing_workspace_is_one_line_error(tmp_path: Path) -> None:
    res = invoke(tmp_path / "nope", "memory", "search", "x")
    assert res.exit_code == 1
    assert res.stderr.startswith("Error: ") and len(res.stderr.strip().splitlines()) == 1


HITS = [
    {
        "path": "memory/2026-04-01.md",
        "startLine": 8,
        "endLine": 8,
        "score": 0.91,
        "snippet": "- Ran the Postgres 15 upgrade on staging",
        "source": "memory",
    },
    {
        "path": "MEMORY.md",
        "startLine": 5,
        "endLine": 5,
        "score": 0.88,
        "snippet": "x",
        "source": "memory",
    },
]


def test_record_list_and_object_forms(mws: Workspace) -> None:
    res = run(mws, "record", "--query", "pg upgrade", stdin=json.dumps(HITS))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.strip() == "Recorded 1 recall(s)."
    res = run(
        mws, "record", "--query", "pg upgrade time", "--json", stdin=json.dumps({"results": HITS})
    )
    assert res.exit_code == 0
    assert json.loads(res.stdout) == {
        "recorded": 1,
        "keys": ["memory:memory/2026-04-01.md:8:8"],
        "folded": True,
    }
    entry = read_store(mws).entries["memory:memory/2026-04-01.md:8:8"]
    assert entry["recallCount"] == 2 and len(entry["queryHashes"]) == 2


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("not json", "not JSON"),
        ('{"hits": []}', "list of results"),
        ("42", "list of results"),
        ('[{"path": "memory/2026-04-01.md", "startLine": "x", "endLine": 8}]', "startLine"),
        ('["just a string"]', "not an object"),
    ],
)
def test_record_bad_stdin_is_one_line_error_and_writes_nothing(
    mws: Workspace, stdin: str, message: str
) -> None:
    res = run(mws, "record", "--query", "q", stdin=stdin)
    assert res.exit_code == 1
    assert res.stderr.startswith("Error: ") and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not mws.store_path.exists()


def test_record_with_the_lock_busy_keeps_the_hits_for_the_next_run(mws: Workspace) -> None:
    with held_lock(mws):
        res = run(mws, "record", "--query", "q", "--timeout", "0.2", stdin=json.dumps(HITS))
        assert res.exit_code == 0, res.stderr
        assert not mws.store_path.exists()  # not folded: the lock is held elsewhere
        assert (mws.dreams_dir / "recall-log.jsonl").stat().st_size > 0
    res = run(mws, "record", "--query", "q2", stdin=json.dumps(HITS))
    entries = json.loads(mws.store_path.read_text())["entries"]
    (entry,) = entries.values()
    assert entry["recallCount"] == 2 and len(entry["queryHashes"]) == 2


def test_cli_module_imports_the_search_library_lazily() -> None:
    code = (
        "import sys, memcore.cli.memory;"
        "heavy = ('memcore.search.query', 'memcore.search.embeddings', 'numpy');"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
