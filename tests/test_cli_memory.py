"""The command line for init, memory promote/explain/status and dreaming."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
import pytest

from memcore.errors import LockBusy
from memcore.recall import store as recall
from memcore.workspace.core import Workspace
from tests.conftest import held_lock, invoke, write_note


def seed(ws: Workspace, recalls: int = 4) -> None:
    write_note(ws, "2026-11-20.md", "# Notes\n\n- The staging database is db-stg-02 in eu-west.\n")
    now = datetime.now(UTC)
    res = {
        "path": "memory/2026-11-20.md",
        "startLine": 3,
        "endLine": 3,
        "score": 0.95,
        "snippet": "- The staging database is db-stg-02 in eu-west.",
    }
    for i in range(recalls):
        recall.record_recalls(ws, f"staging db {i}", [res], now=now - timedelta(minutes=i + 1))


def _root() -> click.Group:
    from memcore.cli import cli

    return cli


def _groups(group: click.Group, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    ctx = click.Context(group)
    out = [path]
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if isinstance(sub, click.Group):
            out.extend(_groups(sub, (*path, name)))
    return out


@pytest.mark.parametrize("path", _groups(_root(), ()), ids=lambda p: " ".join(("memcore", *p)))
def test_help_lists_commands(path: tuple[str, ...]) -> None:
    """``--help`` of each group lists exactly its commands, in order, each with the start of
    its own help text (a missing, extra or mislabelled command fails)."""
    r = invoke(None, *path, "--help")
    assert r.exit_code == 0
    section = r.output.split("\nCommands:\n", 1)[1]
    rows = re.findall(r"^  (\S+)\s{2,}(.+)$", section, flags=re.M)
    group = _root()
    ctx = click.Context(group)
    for name in path:
        found = group.get_command(ctx, name)
        assert isinstance(found, click.Group)
        group, ctx = found, click.Context(found, parent=ctx)
    names = group.list_commands(ctx)
    assert [name for name, _ in rows] == names
    for name, shown in rows:
        command = group.get_command(ctx, name)
        assert command is not None
        own = " ".join((command.help or command.short_help or "").split())
        assert own, f"{name} has no help text"
        assert own.startswith(shown.removesuffix("...").rstrip()), (name, shown)


def test_init_creates_and_never_overwrites(tmp_path: Path) -> None:
    root = tmp_path / "new"
    r = invoke(None, "init", str(root))
    assert r.exit_code == 0 and "Created: memory/, MEMORY.md, memcore.toml" in r.output
    assert (root / "MEMORY.md").read_text() == "# Long-Term Memory\n"
    assert "[dreaming]" in (root / "memcore.toml").read_text()
    (root / "MEMORY.md").write_text("mine\n")
    r = invoke(None, "init", str(root))
    assert "Kept (already there): memory/, MEMORY.md, memcore.toml" in r.output
    assert (root / "MEMORY.md").read_text() == "mine\n"


def test_missing_workspace_is_one_line_error(tmp_path: Path) -> None:
    r = invoke(tmp_path / "nope", "memory", "promote")
    assert r.exit_code == 1
    assert r.stderr.strip().count("\n") == 0 and "does not exist" in r.stderr


def test_env_workspace(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(ws)
    monkeypatch.setenv("MEMCORE_WORKSPACE", str(ws.root))
    r = invoke(None, "memory", "promote", "--json")
    assert json.loads(r.stdout)["workspaceDir"] == str(ws.root)


def test_promote_preview_then_apply(ws: Workspace) -> None:
    seed(ws)
    r = invoke(ws, "memory", "promote")
    assert r.exit_code == 0
    assert "memory/2026-11-20.md:3-3" in r.stdout and "recalls=4" in r.stdout
    assert not ws.memory_md.exists()
    r = invoke(ws, "memory", "promote", "--apply")
    assert "appended=1 reconciledExisting=0" in r.stdout
    assert "db-stg-02" in ws.memory_md.read_text()
    r = invoke(ws, "memory", "promote", "--apply")
    assert "No short-term recall candidates." in r.stdout
    assert "No candidates met apply criteria." in r.stdout


def test_promote_json_shape(ws: Workspace) -> None:
    seed(ws)
    doc = json.loads(invoke(ws, "memory", "promote", "--json").stdout)
    assert set(doc) >= {"workspaceDir", "storePath", "lockPath", "candidates", "apply"}
    assert doc["apply"] is None
    c = doc["candidates"][0]
    for field in (
        "key",
        "path",
        "startLine",
        "endLine",
        "source",
        "snippet",
        "recallCount",
        "avgScore",
        "maxScore",
        "uniqueQueries",
        "firstRecalledAt",
        "lastRecalledAt",
        "ageDays",
        "score",
        "components",
    ):
        assert field in c
    assert set(c["components"]) == {"frequency", "relevance", "diversity", "recency"}
    doc = json.loads(invoke(ws, "memory", "promote", "--apply", "--json").stdout)
    assert doc["apply"]["appended"] == 1


def test_no_candidates_explains_exclusions(ws: Workspace) -> None:
    seed(ws, recalls=2)
    r = invoke(ws, "memory", "promote")
    assert "No short-term recall candidates." in r.stdout
    assert "Excluded 1 of 1: recallCount 1" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--min-score", "1.5"],
        ["--min-score", "abc"],
        ["--limit", "-2"],
        ["--min-recall-count", "x"],
    ],
)
def test_bad_flags_are_usage_errors(ws: Workspace, args: list[str]) -> None:
    r = invoke(ws, "memory", "promote", *args)
    assert r.exit_code == 2 and "Invalid value" in r.stderr


def test_bad_config_is_one_line_error(ws: Workspace) -> None:
    seed(ws)
    ws.config_path.write_text('[dreaming]\nmode = "turbo"\n')
    r = invoke(ws, "memory", "promote")
    assert r.exit_code == 1
    assert "mode = 'turbo' is not allowed; allowed: off, core, rem, deep" in r.stderr


def test_explain_exit_codes(ws: Workspace) -> None:
    seed(ws, recalls=2)
    r = invoke(ws, "memory", "explain", "db-stg-02")
    assert r.exit_code == 0 and "FAIL recallCount: 2 vs required 3" in r.stdout
    r = invoke(ws, "memory", "explain", "unrelated")
    assert r.exit_code == 1 and 'No promotion candidate matched "unrelated".' in r.stderr


def test_explain_with_several_matches_lists_them_and_exits_1(ws: Workspace) -> None:
    seed(ws)
    write_note(ws, "2026-11-21.md", "# Notes\n\n- The staging database moved to eu-central.\n")
    hit = {
        "path": "memory/2026-11-21.md",
        "startLine": 3,
        "endLine": 3,
        "score": 0.9,
        "snippet": "- The staging database moved to eu-central.",
    }
    recall.record_recalls(ws, "staging move", [hit], now=datetime.now(UTC))
    r = invoke(ws, "memory", "explain", "staging database")
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.startswith('Error: "staging database" matches 2 entries; give one of these')
    assert "memory:memory/2026-11-20.md:3:3" in r.stderr
    assert "memory:memory/2026-11-21.md:3:3" in r.stderr
    r = invoke(ws, "memory", "explain", "memory:memory/2026-11-21.md:3:3")  # a key from the list
    assert r.exit_code == 0 and "eu-central" in r.stdout


def test_status_prints_index_problems_as_text(ws: Workspace) -> None:
    seed(ws)
    (ws.memory_dir / "2026-11-22.md").write_bytes(b"# Notes\n\n- caf\xe9 not utf-8\n")
    assert invoke(ws, "memory", "search", "staging").exit_code == 0  # builds the index
    r = invoke(ws, "memory", "status")
    assert r.exit_code == 0
    skipped = [ln for ln in r.stdout.splitlines() if ln.startswith("Index skipped:")]
    assert skipped and skipped[0].startswith("Index skipped: memory/2026-11-22.md: ")
    assert "{" not in r.stdout and "'path'" not in r.stdout  # no Python dict shown raw


def test_status_reports_store_and_unreachable_gates(ws: Workspace) -> None:
    seed(ws)
    ws.config_path.write_text('[dreaming]\nmode = "rem"\n')
    r = invoke(ws, "memory", "status")
    assert "Recall store: 1 entries · 0 promoted" in r.stdout
    assert (
        "Mode rem's gates cannot be met" in r.stdout
        and "needs a mean relevance of 1.072" in r.stdout
    )
    doc = json.loads(invoke(ws, "memory", "status", "--json").stdout)
    assert doc["shortTermCount"] == 1 and doc["lock"] == "free"


def test_status_fix_and_quarantine(ws: Workspace) -> None:
    ws.ensure_dreams_dir()
    ws.store_path.write_text("{ truncated")
    r = invoke(ws, "memory", "status", "--fix")
    assert r.exit_code == 0
    assert "A corrupt recall store was set aside" in r.stdout
    assert json.loads(ws.store_path.read_text())["entries"] == {}
    r = invoke(ws, "memory", "status", "--fix")
    assert "Repair: no changes" in r.stdout


def test_lock_held_elsewhere_exits_75(ws: Workspace) -> None:
    seed(ws)
    with held_lock(ws):
        from memcore.promotion import promote

        with pytest.raises(LockBusy) as exc:
            promote.apply(ws, lock_timeout=0.2)
        assert exc.value.exit_code == 75
        proc = subprocess.run(
            [sys.executable, "-m", "memcore", "-w", str(ws.root), "memory", "promote", "--apply"],
            capture_output=True,
            text=True,
            timeout=40,
            env={**os.environ, "MEMCORE_LOCK_TIMEOUT": "0.5"},
        )
        assert proc.returncode == 75 and "holds the lock" in proc.stderr
    assert not ws.memory_md.exists()


def test_dreaming_command(ws: Workspace) -> None:
    r = invoke(ws, "dreaming", "core")
    assert r.stdout.startswith("Dreaming mode set to core.")
    assert 'mode = "core"' in ws.config_path.read_text()
    assert invoke(ws, "dreaming", "status").stdout.startswith("Dreaming status:\n- mode: core")


def test_status_reports_a_failed_recording_until_one_succeeds(ws: Workspace) -> None:
    write_note(
        ws, "2026-11-21.md", "# Notes\n\n- The billing cron runs at 02:00 UTC every night.\n"
    )
    ws.ensure_dreams_dir()
    ws.store_path.mkdir()  # the store cannot be written
    r = invoke(ws, "memory", "search", "billing cron")
    assert r.exit_code == 0 and "2026-11-21.md" in r.stdout
    assert "Recording recalls failed" in invoke(ws, "memory", "status").stdout
    ws.store_path.rmdir()
    invoke(ws, "memory", "search", "billing cron schedule")
    assert "Recording recalls failed" not in invoke(ws, "memory", "status").stdout
