"""``memcore export --to TARGET DIR``: a MEMORY.md view another agent loads; preview unless
--apply; a file memcore did not write is never replaced without --force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.workspace.core import Workspace
from memcore.workspace.layouts.claude_code import read_topic
from memcore.workspace.layouts.codex import summary_problem
from tests.conftest import invoke

MEMORY = "# Long-Term Memory\n\n- Deploys go out on Fridays.\n- Billing runs on Postgres 16.\n"


@pytest.mark.parametrize(
    ("target", "files"),
    [
        ("agents-md", ["AGENTS.md"]),
        ("cursor-rules", [".cursor/rules/memory.mdc"]),
        ("claude-code", ["MEMORY.md", "memcore-memory.md"]),
        ("codex", ["memory_summary.md", "MEMORY.md"]),
    ],
)
def test_export_preview_then_apply(
    ws: Workspace, tmp_path: Path, target: str, files: list[str]
) -> None:
    ws.memory_md.write_text(MEMORY)
    out = tmp_path / "out"
    preview = json.loads(invoke(ws, "export", "--to", target, str(out), "--json").stdout)
    assert [Path(f["path"]).relative_to(out).as_posix() for f in preview["files"]] == files
    assert not out.exists()  # a preview writes nothing
    r = invoke(ws, "export", "--to", target, str(out), "--apply")
    assert r.exit_code == 0, r.output
    texts = "".join((out / f).read_text() for f in files)
    assert "Deploys go out on Fridays." in texts and "Postgres 16" in texts
    if target == "cursor-rules":
        assert (out / files[0]).read_text().startswith("---\ndescription: ")
        assert "alwaysApply: true\n---\n" in (out / files[0]).read_text()
    if target == "claude-code":
        meta, _ = read_topic(out / "memcore-memory.md")
        assert meta["type"] == "project" and meta["name"]
    if target == "codex":
        assert summary_problem((out / "memory_summary.md").read_text()) is None
    again = json.loads(invoke(ws, "export", "--to", target, str(out), "--json").stdout)
    assert {f["action"] for f in again["files"]} == {"unchanged"}


def test_export_never_replaces_a_file_it_did_not_write(ws: Workspace, tmp_path: Path) -> None:
    ws.memory_md.write_text(MEMORY)
    out = tmp_path / "out"
    (out / ".cursor" / "rules").mkdir(parents=True)
    mine = out / ".cursor" / "rules" / "memory.mdc"
    mine.write_text("---\nalwaysApply: true\n---\nMy own rules.\n")
    r = invoke(ws, "export", "--to", "cursor-rules", str(out), "--apply")
    assert r.exit_code == 1
    (line,) = r.output.strip().splitlines()
    assert "memory.mdc: exists and memcore did not write it (--force replaces it); nothing" in line
    assert mine.read_text() == "---\nalwaysApply: true\n---\nMy own rules.\n"
    assert (
        invoke(ws, "export", "--to", "cursor-rules", str(out), "--apply", "--force").exit_code == 0
    )
    assert "Deploys" in mine.read_text()


def test_agents_md_section_is_the_only_part_replaced(ws: Workspace, tmp_path: Path) -> None:
    ws.memory_md.write_text(MEMORY)
    agents = tmp_path / "AGENTS.md"
    agents.write_text("# Project rules\n\nRun make test.\n")
    r = invoke(ws, "export", "--to", "agents-md", str(tmp_path), "--apply")
    assert r.exit_code == 1 and "has no memcore section" in r.output
    assert (
        invoke(ws, "export", "--to", "agents-md", str(tmp_path), "--apply", "--force").exit_code
        == 0
    )
    text = agents.read_text()
    assert text.startswith("# Project rules\n\nRun make test.\n\n<!-- memcore:export begin -->")
    agents.write_text(text + "\n## Later\n\nKept.\n")
    ws.memory_md.write_text(MEMORY + "- The VPN is wg0.\n")
    assert invoke(ws, "export", "--to", "agents-md", str(tmp_path), "--apply").exit_code == 0
    new = agents.read_text()
    assert "The VPN is wg0." in new and new.endswith("## Later\n\nKept.\n")
    assert new.startswith("# Project rules\n\nRun make test.\n")
