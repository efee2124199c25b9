"""``export --to claude-code`` given a Claude Code project folder (``~/.claude/projects/<p>``,
where the transcripts are) writes into its ``memory/`` folder, the one Claude Code loads, as
``import --from claude-code`` reads that folder's ``memory/``; undo removes what it made."""

from __future__ import annotations

import json
from pathlib import Path

from memcore.workspace.core import Workspace
from tests.conftest import invoke

MEMORY = "# Long-Term Memory\n\n- Deploys go out on Fridays.\n"


def test_export_into_a_claude_code_project_folder_goes_to_its_memory_folder(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.memory_md.write_text(MEMORY)
    project = tmp_path / ".claude" / "projects" / "-home-me-app"
    project.mkdir(parents=True)
    transcript = project / "0f3c2a.jsonl"
    transcript.write_text('{"type": "user", "cwd": "/home/me/app"}\n')
    preview = json.loads(invoke(ws, "export", "--to", "claude-code", str(project), "--json").stdout)
    assert [Path(f["path"]).relative_to(project).as_posix() for f in preview["files"]] == [
        "memory/MEMORY.md",
        "memory/memcore-memory.md",
    ]
    r = invoke(ws, "export", "--to", "claude-code", str(project), "--apply")
    assert r.exit_code == 0, r.output
    assert "Deploys go out on Fridays." in (project / "memory" / "memcore-memory.md").read_text()
    assert sorted(p.name for p in project.iterdir()) == ["0f3c2a.jsonl", "memory"]
    assert invoke(ws, "undo").exit_code == 0
    assert sorted(p.name for p in project.iterdir()) == ["0f3c2a.jsonl"]  # memory/ it made: gone

    plain = tmp_path / "plain"  # any other folder is written as it is
    plain.mkdir()
    preview = json.loads(invoke(ws, "export", "--to", "claude-code", str(plain), "--json").stdout)
    assert [Path(f["path"]).name for f in preview["files"]] == ["MEMORY.md", "memcore-memory.md"]
    assert all(Path(f["path"]).parent == plain for f in preview["files"])
