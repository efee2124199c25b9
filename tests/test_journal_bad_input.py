"""Bad input to the journal: a corrupt image or journal table, an unknown run or version, an
undo after an edit, a budget smaller than MEMORY.md already is. One line naming what and what
is allowed, exit 1 (usage errors 2), nothing half-written, and never a failure that stays."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from pathlib import Path

from click.testing import Result

from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from tests.conftest import invoke as run_cli

LONG_TERM = (
    "# Long-Term Memory\n\n"
    "- The wiki lives at wiki.example.org.\n"
    "- The cache TTL is 300 seconds.\n"
    "- The cache TTL is 300 seconds!\n"
    "- Ana owns billing.\n"
    "- Logs are JSON lines.\n"
)


def invoke(ws: Workspace, *args: str, code: int = 0) -> Result:
    res = run_cli(ws, *args)
    assert res.exit_code == code, res.output
    if code:
        assert "Traceback" not in res.output
        assert res.stderr.strip().count("\n") == 0, res.stderr  # one line
    return res


def test_undo_after_an_edit_refuses_naming_the_edited_entry(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    eid = parse(LONG_TERM).entries[4].id
    invoke(ws, "memory", "set", eid, "--pin")
    edited = ws.memory_md.read_text(encoding="utf-8").replace("JSON lines", "JSON lines, gzip")
    ws.memory_md.write_text(edited, encoding="utf-8")
    res = invoke(ws, "undo", code=1)
    assert f"{eid} was edited after the run" in res.stderr and "Nothing was changed" in res.stderr
    assert ws.memory_md.read_text(encoding="utf-8") == edited


def test_unknown_runs_and_versions_are_one_line_and_usage_errors_exit_2(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    for args in (("undo", "nope"), ("history", "show", "nope")):
        res = invoke(ws, *args, code=1)
        assert "no run 'nope' in the journal; allowed: a run id that memcore history lists" in (
            res.stderr
        )
    invoke(ws, "dream", "--auto", "--only", "merge")
    res = invoke(ws, "restore", "999", code=1)
    assert "no MEMORY.md version 999; allowed: 1 to 2" in res.stderr
    assert "'abc' is not an integer" in run_cli(ws, "restore", "abc").output
    assert run_cli(ws, "restore", "abc").exit_code == 2
    assert run_cli(ws, "undo", "a", "b").exit_code == 2


def test_a_corrupt_image_fails_its_undo_once_and_the_next_run_repairs_it(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    invoke(ws, "dream", "--auto", "--only", "merge")
    merged = ws.memory_md.read_bytes()
    conn = sqlite3.connect(ws.db_path)
    conn.execute("UPDATE journal_blobs SET data = x'00ff00ff'")
    conn.commit()
    conn.close()
    res = invoke(
        ws,
        "history",
        "show",
        json.loads(invoke(ws, "history", "--json").stdout)["runs"][0]["runId"],
        "--diff",
        code=1,
    )
    assert "journal" in res.stderr and "corrupt" in res.stderr
    assert ws.memory_md.read_bytes() == merged  # nothing half-written
    # never a failure that stays: later runs work, and store the damaged image afresh
    eid = parse(merged.decode()).entries[0].id
    invoke(ws, "memory", "set", eid, "--pin")
    conn = sqlite3.connect(ws.db_path)
    (data,) = conn.execute(
        "SELECT data FROM journal_blobs WHERE sha1 = ?", (hashlib.sha1(merged).hexdigest(),)
    ).fetchone()
    conn.close()
    assert zlib.decompress(data) == merged  # the set run's preimage, stored whole again
    invoke(ws, "undo")
    assert ws.memory_md.read_bytes() == merged
    invoke(ws, "history")


def test_a_lost_image_table_is_recreated_and_undo_still_reverses_entries(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    invoke(ws, "dream", "--auto", "--only", "merge")
    conn = sqlite3.connect(ws.db_path)
    conn.execute("DROP TABLE journal_blobs")
    conn.commit()
    conn.close()
    invoke(ws, "history", "versions")
    invoke(ws, "undo")  # from the entry-level changes: the merged-away line comes back
    assert ws.memory_md.read_text(encoding="utf-8") == LONG_TERM


def test_a_budget_smaller_than_memory_md_refuses_every_write_in_one_line(
    ws: Workspace, tmp_path: Path
) -> None:
    body = "# Long-Term Memory\n\n" + "".join(f"- Fact number {i} is here.\n" for i in range(80))
    ws.memory_md.write_text(body, encoding="utf-8")
    ws.config_path.write_text("[memory]\nbudget_chars = 1000\n", encoding="utf-8")
    src = tmp_path / "export.jsonl"
    src.write_text('{"text": "The API listens on port 8080."}\n', encoding="utf-8")
    res = invoke(ws, "import", str(src), "--apply", code=1)
    assert f"MEMORY.md is {len(body)} characters, over [memory] budget_chars = 1000" in (res.stderr)
    assert "nothing was imported" in res.stderr
    assert ws.memory_md.read_text(encoding="utf-8") == body
    ws.config_path.write_text(f"[memory]\nbudget_chars = {len(body) + 20}\n", encoding="utf-8")
    res = invoke(ws, "import", str(src), "--apply", code=1)  # it would pass the budget
    assert "importing 1 entries would make MEMORY.md" in res.stderr
    assert ws.memory_md.read_text(encoding="utf-8") == body
    ws.config_path.write_text("[memory]\nbudget_chars = 5\n", encoding="utf-8")
    res = invoke(ws, "import", str(src), "--apply", code=1)
    assert "budget_chars = 5 is out of range" in res.stderr
    assert not (ws.dreams_dir / "journal.pending").exists()
