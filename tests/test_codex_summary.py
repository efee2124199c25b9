"""A Codex memory_summary.md without its ``v1`` line: the warning names the file and what is
allowed, the file is left as it is, and its first line, when it is not a version line, is a
memory like the others (an import does not drop it without a word)."""

from __future__ import annotations

import json
from pathlib import Path

from memcore.workspace.core import Workspace
from tests.conftest import invoke


def test_a_summary_without_its_version_line_keeps_its_first_memory(
    ws: Workspace, tmp_path: Path
) -> None:
    codex = tmp_path / ".codex" / "memories"
    codex.mkdir(parents=True)
    summary = codex / "memory_summary.md"
    summary.write_text("The user prefers pnpm over npm.\n- Deploys happen on Tuesdays.\n")
    before = summary.read_bytes()
    out = invoke(ws, "import", "--from", "codex", str(codex), "--json")
    assert out.exit_code == 0, out.output
    texts = [e["text"] for e in json.loads(out.stdout)["entries"]]
    assert texts == ["The user prefers pnpm over npm.", "Deploys happen on Tuesdays."]
    assert f"{summary}: first line is 'The user prefers pnpm over npm.'; allowed: exactly 'v1'" in (
        out.stderr
    )
    summary.write_text("v2\n- Deploys happen on Tuesdays.\n")  # another version: not a memory
    out = invoke(ws, "import", "--from", "codex", str(codex), "--json")
    assert [e["text"] for e in json.loads(out.stdout)["entries"]] == ["Deploys happen on Tuesdays."]
    summary.write_bytes(before)
    assert invoke(ws, "import", "--from", "codex", str(codex), "--apply").exit_code == 0
    assert summary.read_bytes() == before  # memcore never writes Codex's files
