"""``memcore import``: JSON/JSONL memories into MEMORY.md and the ledger, one undoable run."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from memcore.cli import cli
from memcore.dream import imports, tables
from memcore.journal import runs as journal
from memcore.recall import ledger
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse

NOW = "2026-06-01T12:00:00Z"
ROWS = [
    {
        "text": "The API listens on port 8080.",
        "type": "fact",
        "scope": "project",
        "importance": 0.8,
        "confidence": 0.9,
        "pinned": False,
        "created_at": "2026-01-05T10:00:00Z",
        "last_accessed_at": "2026-03-01T08:00:00Z",
        "access_count": 3,
    },
    {"memory": "Never   deploy on Fridays.", "pinned": True, "type": "decision", "id": "m-2"},
]


def invoke(ws: Workspace, *args: str) -> object:
    return CliRunner(env={"MEMCORE_NOW": NOW}).invoke(cli, ["-w", str(ws.root), "import", *args])


def test_preview_writes_nothing_then_apply_and_undo(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "export.json"
    src.write_text(json.dumps({"results": ROWS}), encoding="utf-8")
    res = invoke(ws, str(src))
    assert res.exit_code == 0, res.output
    assert "2 valid, 0 invalid" in res.stdout and not ws.memory_md.exists()
    res = invoke(ws, str(src), "--apply", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["imported"] == 2 and out["applied"]
    doc = parse(ws.memory_md.read_text(encoding="utf-8"))
    assert [e.text for e in doc.entries] == [
        "The API listens on port 8080.",
        "Never deploy on Fridays.",
    ]
    with tables.connect(ws) as conn:
        metas = ledger.metas_for(conn, doc, datetime(2026, 6, 1, tzinfo=UTC))
        first, second = (metas[e.id] for e in doc.entries)
        assert (first.type, first.scope, first.importance, first.confidence) == (
            "fact",
            "project",
            0.8,
            0.9,
        )
        assert first.created_at == "2026-01-05T10:00:00.000Z"
        assert first.last_accessed_at == "2026-03-01T08:00:00.000Z" and first.access_count == 3
        assert second.pinned and second.type == "decision"
        assert second.created_at == "2026-06-01T12:00:00.000Z"  # MEMCORE_NOW
        run = journal.runs(conn)[0]
        assert run["kind"] == "import" and run["counters"]["imported"] == 2
    again = invoke(ws, str(src), "--apply", "--json")  # duplicates are skipped
    assert json.loads(again.stdout)["imported"] == 0
    undo = CliRunner(env={"MEMCORE_NOW": NOW}).invoke(cli, ["-w", str(ws.root), "undo"])
    assert undo.exit_code == 0, undo.output
    assert not ws.memory_md.exists() or not parse(ws.memory_md.read_text("utf-8")).entries
    with tables.connect(ws) as conn:
        assert not ledger.load_rows(conn, [e.id for e in doc.entries])


def test_bad_rows_one_line_each_and_nothing_written(ws: Workspace, tmp_path: Path) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n- Existing fact.\n", encoding="utf-8")
    before = ws.memory_md.read_bytes()
    src = tmp_path / "export.jsonl"
    lines = [
        json.dumps(ROWS[0]),
        json.dumps({"text": "x", "scope": "team", "access_count": -1}),
        "{broken",
        json.dumps({"text": "y", "created_at": "last week", "pinned": "yes"}),
        json.dumps({"text": "Existing fact."}),
    ]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = invoke(ws, str(src), "--apply")
    assert res.exit_code == 1
    errs = res.stderr.strip().splitlines()
    assert f"{src}: row 2: scope: 'team' is not allowed; allowed: global, project, session" in errs
    assert any("row 2: access_count: -1" in e for e in errs)
    assert any("row 3: line: not valid JSON" in e for e in errs)
    assert any("row 4: created_at: 'last week' is not allowed" in e for e in errs)
    assert any("row 4: pinned: 'yes' is not allowed; allowed: true, false" in e for e in errs)
    assert errs[-1].startswith("Error: 3 invalid row(s); nothing was imported")
    assert ws.memory_md.read_bytes() == before
    res = invoke(ws, str(src), "--apply", "--skip-invalid", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["imported"] == 1 and out["duplicates"] == [5] and out["invalid"] == 3


def test_secrets_are_redacted_and_unreadable_files_fail(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "m.json"
    src.write_text(
        json.dumps([{"text": "CI token is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"}]), "utf-8"
    )
    plan = imports.read_import(ws, src, now=datetime(2026, 6, 1, tzinfo=UTC))
    assert plan.rows[0].redacted and "ghp_" not in plan.rows[0].text
    (tmp_path / "bad.json").write_text("[1, 2", encoding="utf-8")
    res = invoke(ws, str(tmp_path / "bad.json"))
    assert res.exit_code == 1 and res.stderr.strip().count("\n") == 0
    assert "not valid JSON" in res.stderr
    res = invoke(ws, str(tmp_path / "missing.json"))
    assert res.exit_code == 1 and "no such file" in res.stderr


_KILL_BEFORE_DONE = """
import os, signal, sys
from datetime import UTC, datetime
from pathlib import Path
from memcore.dream import imports
from memcore.recall import ledger
from memcore.workspace.core import Workspace

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

ledger.save = die  # the closing transaction: MEMORY.md is written, the run not yet done
ws = Workspace(Path(sys.argv[1]))
now = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
plan = imports.read_import(ws, Path(sys.argv[2]), now=now)
imports.apply_import(ws, plan, now=now)
"""


def test_apply_after_a_killed_import_rolls_it_back_and_imports_again(
    ws: Workspace, tmp_path: Path
) -> None:
    import signal
    import subprocess
    import sys

    ws.memory_md.write_text("# Long-Term Memory\n\n- Keep it short.\n", encoding="utf-8")
    src = tmp_path / "export.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    before = ws.memory_md.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-c", _KILL_BEFORE_DONE, str(ws.root), str(src)],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert b"port 8080" in ws.memory_md.read_bytes()  # on disk, but its run is pending
    res = invoke(ws, str(src), "--apply")
    assert res.exit_code == 0, res.output
    assert "Imported 2 entries" in res.output  # not mistaken for two duplicates
    with tables.connect(ws) as conn:
        statuses = [r["status"] for r in journal.runs(conn, 10)]
    assert statuses == ["applied", "rolled_back"]
    assert not ws.pending_run_path.exists()
    assert ws.memory_md.read_text(encoding="utf-8").count("port 8080") == 1
    assert invoke(ws, "--apply", str(src)).exit_code == 0  # nothing left to import
    res = CliRunner().invoke(cli, ["-w", str(ws.root), "undo"])
    assert res.exit_code == 0, res.output
    assert ws.memory_md.read_bytes() == before
