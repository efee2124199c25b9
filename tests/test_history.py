"""One journal for every change: ``memcore history``, ``history show --diff``, ``history
versions``, ``restore`` and ``undo`` of every kind of run, byte for byte, through the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from click.testing import Result

from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from tests.conftest import invoke as run_cli

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)

NOTE = "# 2026-11-20\n\n## Standup\n- Deploys go through the blue/green pipeline on Fridays.\n"
LONG_TERM = (
    "# Long-Term Memory\n\n"
    "- The wiki lives at wiki.example.org.\n"
    "- The cache TTL is 300 seconds.\n"
    "- The cache TTL is 300 seconds!\n"
    "- Ana owns billing.\n"
    "- Logs are JSON lines.\n"
)


def invoke(ws: Workspace, *args: str, code: int = 0, stdin: str | None = None) -> Result:
    res = run_cli(ws, *args, input=stdin)
    assert res.exit_code == code, (res.output, res.stderr if res.stderr_bytes else "")
    return res


def as_json(ws: Workspace, *args: str) -> Any:
    return json.loads(invoke(ws, *args, "--json").stdout)


def seed(ws: Workspace) -> str:
    from memcore.recall.store import record_recalls
    from memcore.workspace.clock import utcnow

    (ws.memory_dir / "2026-11-20.md").write_text(NOTE, encoding="utf-8")
    hit = {
        "path": "memory/2026-11-20.md",
        "startLine": 4,
        "endLine": 4,
        "score": 0.95,
        "snippet": NOTE.split("\n")[3],
    }
    base = utcnow().replace(microsecond=0)
    out = None
    for i in range(4):
        out = record_recalls(ws, f"query {i}", [hit], now=base - timedelta(hours=i + 1))
    assert out is not None
    return out.keys[0]


def snapshot(ws: Workspace) -> dict[str, bytes | None]:
    paths = [ws.memory_md, ws.store_path, ws.archive_path, ws.memory_dir / "2026-11-20.md"]
    return {str(p): (p.read_bytes() if p.exists() else None) for p in paths}


def test_every_kind_of_run_is_listed_and_undone_byte_for_byte(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    seed(ws)
    states = [snapshot(ws)]
    promote = as_json(ws, "memory", "promote", "--apply")
    assert promote["apply"]["applied"] == 1
    states.append(snapshot(ws))
    dream = as_json(ws, "dream", "--auto", "--only", "merge,forget")
    assert dream["merged"] == 1
    states.append(snapshot(ws))
    eid = parse(ws.memory_md.read_text(encoding="utf-8")).entries[0].id
    invoke(ws, "memory", "set", eid, "--pin")
    states.append(snapshot(ws))
    runs = as_json(ws, "history")["runs"]
    assert [r["kind"] for r in runs] == ["set", "dream", "promote"]
    assert all(r["trigger"] == "command" and r["status"] == "applied" for r in runs)
    assert runs[2]["files"] == ["MEMORY.md", "memory/.dreams/short-term-recall.json"]
    text = invoke(ws, "history").stdout
    assert "promote/apply  command  applied" in text and "dream/auto" in text
    for expected in reversed(states[:-1]):
        out = as_json(ws, "undo")
        assert out["exact"], out
        assert snapshot(ws) == expected
    assert as_json(ws, "memory", "promote")["candidates"] != []  # promotable again
    invoke(ws, "undo", code=1)  # nothing left to undo (undos are not undone by default)


def test_history_show_diff_and_bad_run_ids(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    res = as_json(ws, "dream", "--auto", "--only", "merge")
    out = invoke(ws, "history", "show", res["runId"], "--diff").stdout
    assert "merge remove" in out and "--- a/MEMORY.md" in out
    assert "-- The cache TTL is 300 seconds!" in out
    shown = as_json(ws, "history", "show", res["runId"])
    assert shown["fileImages"][0]["path"] == "MEMORY.md"
    bad = invoke(ws, "history", "show", "nope", code=1)
    assert bad.stderr.strip() == (
        "Error: no run 'nope' in the journal; allowed: a run id that memcore history lists"
    )
    bad = invoke(ws, "undo", "nope", code=1)
    assert "no run 'nope' in the journal" in bad.stderr and "Traceback" not in bad.output
    assert as_json(ws, "dream", "history")["runs"][0]["runId"] == res["runId"]  # alias


def test_undo_refuses_to_clobber_an_edit_and_names_it(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    as_json(ws, "dream", "--auto", "--only", "merge")
    edited = ws.memory_md.read_text(encoding="utf-8") + "- The cache TTL is 300 seconds!\n"
    ws.memory_md.write_text(edited, encoding="utf-8")
    res = invoke(ws, "undo", code=1)
    assert "is in MEMORY.md again" in res.stderr and "Nothing was changed" in res.stderr
    assert ws.memory_md.read_text(encoding="utf-8") == edited


def test_versions_and_restore_are_a_run_that_undo_takes_back(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    as_json(ws, "dream", "--auto", "--only", "merge")
    after_merge = ws.memory_md.read_bytes()
    vs = as_json(ws, "history", "versions")["versions"]
    assert [v["role"] for v in vs] == ["after", "before"] and vs[0]["current"]
    original = vs[1]["version"]
    out = as_json(ws, "restore", str(original))
    assert out["changed"] and ws.memory_md.read_text(encoding="utf-8") == LONG_TERM
    assert as_json(ws, "history")["runs"][0]["kind"] == "restore"
    assert "already is version" in invoke(ws, "restore", str(original)).stdout
    bad = invoke(ws, "restore", "999", code=1)
    assert "no MEMORY.md version 999; allowed:" in bad.stderr
    # An edit after the restore: undo of the restore refuses, naming the entry.
    ws.memory_md.write_text(LONG_TERM + "- Added by hand.\n", encoding="utf-8")
    res = invoke(ws, "undo", out["runId"], code=1)
    assert "MEMORY.md was edited after the run" in res.stderr
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    assert as_json(ws, "undo", out["runId"])["exact"]
    assert ws.memory_md.read_bytes() == after_merge


def test_an_undo_can_itself_be_undone(ws: Workspace) -> None:
    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    res = as_json(ws, "dream", "--auto", "--only", "merge")
    merged = ws.memory_md.read_bytes()
    undo = as_json(ws, "undo")
    assert ws.memory_md.read_text(encoding="utf-8") == LONG_TERM
    redo = as_json(ws, "undo", undo["undoRunId"])
    assert redo["exact"] and ws.memory_md.read_bytes() == merged
    runs = {r["runId"]: r for r in as_json(ws, "history")["runs"]}
    assert runs[res["runId"]]["status"] == "applied" and runs[undo["undoRunId"]]["status"] == (
        "undone"
    )


def test_a_corrupt_journal_image_gives_one_line_and_changes_nothing(ws: Workspace) -> None:
    import sqlite3

    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    as_json(ws, "dream", "--auto", "--only", "merge")
    before = ws.memory_md.read_bytes()
    conn = sqlite3.connect(ws.db_path)
    conn.execute("UPDATE journal_blobs SET data = x'00ff00ff'")
    conn.commit()
    conn.close()
    res = invoke(ws, "undo", code=1)
    assert res.stderr.count("\n") == 1 and "journal" in res.stderr and "corrupt" in res.stderr
    assert ws.memory_md.read_bytes() == before


def test_a_corrupt_journal_row_gives_one_line(ws: Workspace) -> None:
    import sqlite3

    ws.memory_md.write_text(LONG_TERM, encoding="utf-8")
    as_json(ws, "dream", "--auto", "--only", "merge")
    conn = sqlite3.connect(ws.db_path)
    conn.execute("UPDATE dream_runs SET counters = '{not json'")
    conn.execute("UPDATE dream_changes SET anchor = '[oops'")
    conn.commit()
    conn.close()
    # Counters are a display summary: history still lists the run and says they are unreadable.
    listed = as_json(ws, "history")
    runs = listed["runs"] if isinstance(listed, dict) else listed
    assert runs and runs[0]["counters"] == {"unreadable": True}
    # The changes are what undo works from: a corrupt one is one line and nothing is touched.
    before = ws.memory_md.read_bytes()
    res = invoke(ws, "undo", code=1)
    assert res.stderr.count("\n") == 1 and "the journal in memcore.sqlite is corrupt" in (
        res.stderr
    ), res.output
    assert ws.memory_md.read_bytes() == before
