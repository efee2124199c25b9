"""Input that cannot hurt: paths outside the workspace, integers past SQLite's range, odd files
under memory/, secrets, text that is not the user's knowledge, foreign stores over the cap,
previews that must not write, and folders that are not workspaces."""

from __future__ import annotations

import gzip
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memcore.cli import cli
from memcore.promotion import promote
from memcore.recall import store as recall
from memcore.workspace.core import Workspace
from tests.conftest import write_note

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
NOTE = "# Notes\n\n- The billing cron runs at 02:00 UTC.\n- Staging uses Postgres 16.\n"


def run(ws: Workspace | Path, *args: str, stdin: str | None = None) -> Any:
    root = ws.root if isinstance(ws, Workspace) else ws
    return CliRunner().invoke(cli, ["-w", str(root), *args], input=stdin)


def record(ws: Workspace, results: list[dict[str, Any]], query: str = "q") -> Any:
    return run(ws, "memory", "record", "--query", query, stdin=json.dumps(results))


def hit(path: str = "memory/2026-11-20.md", start: Any = 3, **extra: Any) -> dict[str, Any]:
    return {"path": path, "startLine": start, "endLine": start, "score": 0.9, **extra}


def one_line_error(res: Any, code: int = 1) -> str:
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    return lines[0]


# -- paths and integers at the door ------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/tmp/other/memory/2026-11-20.md", "../x/memory/2026-11-20.md", "memory/../../2026-11-20.md"],
)
def test_paths_outside_the_workspace_are_refused(ws: Workspace, path: str) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    line = one_line_error(record(ws, [hit(path)]))
    assert repr(path) in line and "workspace" in line
    assert not ws.store_path.exists() and not (ws.dreams_dir / "recall-log.jsonl").exists()


def test_a_symlink_leading_out_is_refused(ws: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text(NOTE)
    (ws.memory_dir / "2026-11-19.md").symlink_to(outside)
    line = one_line_error(record(ws, [hit("memory/2026-11-19.md")]))
    assert "resolves outside the workspace" in line


def test_absolute_path_inside_is_made_relative(ws: Workspace) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    res = record(ws, [hit(str(ws.memory_dir / "2026-11-20.md"))])
    assert res.exit_code == 0, res.output
    assert "memory:memory/2026-11-20.md:3:3" in recall.read_store(ws, now=NOW).entries


@pytest.mark.parametrize("value", [1e19, 2**63, -(2**64)])
def test_line_numbers_past_sqlite_are_refused(ws: Workspace, value: Any) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    line = one_line_error(record(ws, [hit(start=value)]))
    assert "startLine" in line and "9223372036854775807" in line


def test_a_foreign_store_with_huge_numbers_is_repaired_and_says_how(ws: Workspace) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    ws.ensure_dreams_dir()
    good = {
        "path": "memory/2026-11-20.md",
        "startLine": 4,
        "endLine": 4,
        "source": "memory",
        "recallCount": 1e30,
        "totalScore": 5.0,
        "maxScore": 0.9,
        "queryHashes": ["a"],
    }
    bad = {**good, "startLine": 1e19, "endLine": 2**70}
    doc = {"version": 1, "entries": {"memory:memory/2026-11-20.md:4:4": good, "big": bad}}
    ws.store_path.write_text(json.dumps(doc))  # fmt: skip
    for args in (("memory", "status"), ("memory", "promote"), ("memory", "promote", "--apply")):
        res = run(ws, *args)
        assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    assert record(ws, [hit(start=4)]).exit_code == 0
    res = run(ws, "memory", "status", "--fix")
    assert res.exit_code == 0 and "1 line number beyond 2^63" in res.stdout, res.stdout
    entries = recall.read_store(ws, now=NOW).entries
    assert list(entries) == ["memory:memory/2026-11-20.md:4:4"]
    assert entries["memory:memory/2026-11-20.md:4:4"]["recallCount"] == 2**53 - 1  # clamped


def test_promotion_never_reads_outside_the_workspace(ws: Workspace, tmp_path: Path) -> None:
    other = tmp_path / "other" / "memory"
    other.mkdir(parents=True)
    (other / "2026-11-20.md").write_text("- secret plans of another project\n")
    ws.ensure_dreams_dir()
    entry = {"key": "k", "path": str(other / "2026-11-20.md"), "startLine": 1, "endLine": 1,
             "source": "memory", "snippet": "- secret plans of another project",
             "recallCount": 9, "totalScore": 8.5, "maxScore": 0.95,
             "lastRecalledAt": "2026-11-21T11:00:00.000Z",
             "queryHashes": ["a", "b", "c", "d", "e"]}  # fmt: skip
    recall.write_store(ws, recall.Store(entries={"k": entry}), NOW)
    res = promote.apply(ws, now=NOW, min_score=0.0)
    assert res.apply is not None and res.apply["appended"] == 0
    assert "another project" not in (ws.memory_md.read_text() if ws.memory_md.exists() else "")


# -- search on odd files and unusable databases --------------------------------------------


def test_search_skips_fifos_devices_and_undecodable_names(ws: Workspace) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    os.mkfifo(ws.memory_dir / "pipe.md")
    (ws.memory_dir / "zero.md").symlink_to("/dev/zero")
    (ws.memory_dir / os.fsdecode(b"bad-\xff.md")).write_text("- billing cron mirror\n")
    res = run(ws, "memory", "search", "billing cron")
    assert res.exit_code == 0 and "2026-11-20.md" in res.stdout, res.output
    assert "memory/pipe.md: not a regular file" in res.stderr
    assert "memory/zero.md: not a regular file" in res.stderr
    assert "not valid UTF-8" in res.stderr


def test_search_answers_on_a_locked_database(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from memcore.search import query

    monkeypatch.setattr(query, "INDEX_BUSY_MS", 50)
    monkeypatch.setattr(recall, "FOLD_BUSY_MS", 50)

    write_note(ws, "2026-11-20.md", NOTE)
    assert run(ws, "memory", "search", "billing", "--no-record").exit_code == 0
    holder = sqlite3.connect(ws.db_path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        res = run(ws, "memory", "search", "billing cron")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert res.exit_code == 0 and "2026-11-20.md" in res.stdout, res.output
    assert "in-memory index" in res.stderr and "locked" in res.stderr
    assert ws.db_path.exists() and not list(ws.dreams_dir.glob("*.corrupt-*"))


def test_search_in_a_read_only_workspace(ws: Workspace) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores file modes")
    write_note(ws, "2026-11-20.md", NOTE)
    ws.memory_dir.chmod(0o555)
    try:
        res = run(ws, "memory", "search", "billing cron")
    finally:
        ws.memory_dir.chmod(0o755)
    assert res.exit_code == 0 and "2026-11-20.md" in res.stdout


# -- secrets -----------------------------------------------------------------------------------

SECRETS = [
    ("key sk-proj-abcdefghijklmnopqrstuvwx123 here", "abcdefghijklmnop"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abc"),
    ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("password = hunter2hunter", "hunter2hunter"),
    ("DB_PASSWORD: 's3cr3t-value'", "s3cr3t-value"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz012345"),
    ("postgres://app:pa55word@db.local/x", "pa55word"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "dozjgNryP4J3"),
]


@pytest.mark.parametrize(("text", "gone"), SECRETS)
def test_no_secret_reaches_the_store_the_log_or_memory_md(
    ws: Workspace, text: str, gone: str
) -> None:
    line = f"- Deploy note: {text}"
    write_note(ws, "2026-11-20.md", f"# Notes\n\n{line}\n")
    for i in range(4):
        res = record(ws, [hit(snippet=line)], query=f"deploy note {i}")
        assert res.exit_code == 0, res.output
    assert gone not in ws.store_path.read_text()
    assert "[REDACTED:" in ws.store_path.read_text()
    res = promote.apply(ws, now=NOW, min_score=0.0)
    assert res.apply is not None and res.apply["appended"] == 1, res.apply
    memory = ws.memory_md.read_text()
    assert gone not in memory and "[REDACTED:" in memory and "Deploy note" in memory
    assert gone not in ws.store_path.read_text()
    for p in ws.dreams_dir.glob("recall-log*"):
        assert gone.encode() not in p.read_bytes()


# -- provenance --------------------------------------------------------------------------------

DREAMY = """# Notes

- The billing cron runs at 02:00 UTC.
<!-- openclaw:dreaming:diary:start -->
- Staging uses Postgres 16 with pgbouncer.
<!-- openclaw:dreaming:diary:end -->
Candidate: staging uses Postgres 16 confidence: 0.8 status: staged
<memcore-memory versions="v1">
- Payments retry three times with backoff.
</memcore-memory>
"""


@pytest.mark.parametrize("line", [5, 7, 9])
def test_dreaming_blocks_candidates_and_recalled_context_are_not_recorded(
    ws: Workspace, line: int
) -> None:
    write_note(ws, "2026-11-20.md", DREAMY)
    text = DREAMY.split("\n")[line - 1]
    res = record(ws, [hit(start=line, snippet=text)])
    assert res.exit_code == 0 and res.stdout.strip() == "Recorded 0 recall(s).", res.output
    assert (
        record(ws, [hit(start=3, snippet="- The billing cron runs at 02:00 UTC.")]).exit_code == 0
    )
    assert list(recall.read_store(ws, now=NOW).entries) == ["memory:memory/2026-11-20.md:3:3"]


# -- a foreign store over the cap ---------------------------------------------------------


def _foreign_store(ws: Workspace, n: int) -> None:
    ws.ensure_dreams_dir()
    entries = {
        f"memory:memory/2026-11-20.md:{i}:{i}": {
            "key": f"memory:memory/2026-11-20.md:{i}:{i}", "path": "memory/2026-11-20.md",
            "startLine": i, "endLine": i, "source": "memory", "snippet": f"line {i}",
            "recallCount": 1, "totalScore": 0.5, "maxScore": 0.5,
            "firstRecalledAt": "2026-11-01T00:00:00.000Z",
            "lastRecalledAt": f"2026-11-{1 + i % 20:02d}T00:00:00.000Z", "queryHashes": ["a"],
        }
        for i in range(10, 10 + n)
    }  # fmt: skip
    ws.store_path.write_text(json.dumps({"version": 1, "updatedAt": None, "entries": entries}))


def test_entries_a_cap_takes_from_a_foreign_store_are_kept_and_restorable(ws: Workspace) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    ws.config_path.write_text("[dreaming]\nmax_entries = 20\n")
    _foreign_store(ws, 30)
    res = record(ws, [hit()])
    assert res.exit_code == 0
    assert res.stderr.count("set aside in") == 1 and "over max_entries = 20" in res.stderr
    (sidecar,) = ws.dreams_dir.glob("evicted-*.json.gz")
    kept = json.loads(gzip.decompress(sidecar.read_bytes()))["entries"]
    assert len(kept) == 11 and len(recall.read_store(ws, now=NOW).entries) == 20
    assert "set aside" not in record(ws, [hit()], query="again").stderr  # said once
    status = run(ws, "memory", "status")
    assert "11 recall entries over max_entries were set aside" in status.stdout
    fixed = run(ws, "memory", "status", "--fix")
    assert fixed.exit_code == 0 and "Restored 11 evicted entries" in fixed.stdout, fixed.output
    assert "Raised [dreaming] max_entries to 31" in fixed.stdout
    assert len(recall.read_store(ws, now=NOW).entries) == 31
    assert not list(ws.dreams_dir.glob("evicted-*")) and "max_entries = 31" in (
        ws.config_path.read_text()
    )


# -- previews write nothing; a folder that is not a workspace ---------------------------------


def test_previews_in_a_pristine_workspace_create_nothing(ws: Workspace) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    ws.memory_md.write_text("# Long-Term Memory\n")
    for args in (("memory", "promote"), ("memory", "status"), ("memory", "promote", "--json")):
        res = run(ws, *args)
        assert res.exit_code == 0, res.output
    assert not ws.dreams_dir.exists()


def test_a_preview_reports_a_corrupt_store_and_leaves_it(ws: Workspace) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    ws.ensure_dreams_dir()
    ws.store_path.write_text("{not json")
    for args in (("memory", "promote"), ("memory", "status"), ("memory", "promote", "--json")):
        res = run(ws, *args)
        assert res.exit_code == 0, res.output
    assert ws.store_path.read_text() == "{not json"
    assert not list(ws.dreams_dir.glob("short-term-recall.json.corrupt-*"))
    assert "left as it is" in run(ws, "memory", "status").stdout
    assert run(ws, "memory", "status", "--fix").exit_code == 0  # a writing command sets it aside
    assert list(ws.dreams_dir.glob("short-term-recall.json.corrupt-*"))


@pytest.mark.parametrize(
    "args",
    [("memory", "status"), ("memory", "promote"), ("memory", "search", "x"), ("dream",)],
)
def test_a_folder_that_is_not_a_workspace_is_refused(tmp_path: Path, args: tuple[str]) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    line = one_line_error(run(folder, *args))
    assert (
        line == f"Error: not a memcore workspace: {folder} (create one with memcore init {folder})"
    )
    assert list(folder.iterdir()) == []
    res = run(folder, "init")
    assert res.exit_code == 0 and (folder / "MEMORY.md").exists()
