"""``memcore import --from KIND PATH``: another agent's memory folder, previewed, applied as one
journaled run, undone byte for byte; never its settings, credentials or sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.workspace.core import Workspace
from tests.conftest import invoke
from tests.test_workspace_kinds import claude_folder


def sources(home: Path) -> dict[str, Path]:
    claude = claude_folder(home)
    project = claude.parent
    (project / "settings.local.json").write_text('{"text": "SETTINGS-NEVER-IMPORTED"}')
    (project / "0f3c.jsonl").write_text('{"cwd": "/x", "message": "SESSION-NEVER-IMPORTED"}\n')
    (claude / "settings.json").write_text('{"text": "SETTINGS-NEVER-IMPORTED"}')
    codex = home / ".codex" / "memories"
    codex.mkdir(parents=True)
    (codex / "memory_summary.md").write_text("v1\n- Prefers pnpm over npm.\n")
    (codex / "MEMORY.md").write_text(
        "# Task Group: api\n\n## Reusable knowledge\n\n- CI runs on Node 22.\n"
    )
    hermes = home / ".hermes" / "memories"
    hermes.mkdir(parents=True)
    (hermes / "MEMORY.md").write_text("The NAS backs up nightly.\n§\nVPN is wg0.\n")
    (hermes / "USER.md").write_text("Name is Ana.\n")
    oc = home / "oc"
    (oc / "memory").mkdir(parents=True)
    (oc / "MEMORY.md").write_text(
        "# Long-Term Memory\n\n## Consolidated Memory (2026-11-20)\n\n"
        "<!-- openclaw-memory-promotion:memory:memory/2026-11-19.md:4:4 -->\n"
        "- Billing runs on Postgres 16. Source: memory/2026-11-19.md#L4-L4 "
        "<!-- importance: 8 -->\n"
    )
    return {"claude-code": project, "codex": codex, "hermes": hermes, "openclaw": oc}


@pytest.mark.parametrize(
    ("kind", "texts"),
    [
        ("claude-code", {"We deploy with blue/green on Fridays.": "fact"}),
        ("codex", {"Prefers pnpm over npm.": "unknown", "CI runs on Node 22.": "unknown"}),
        (
            "hermes",
            {
                "The NAS backs up nightly.": "fact",
                "VPN is wg0.": "fact",
                "Name is Ana.": "preference",
            },
        ),
        ("openclaw", {"Billing runs on Postgres 16.": "unknown"}),
    ],
)
def test_import_from_preview_apply_undo(
    ws: Workspace, tmp_path: Path, kind: str, texts: dict[str, str]
) -> None:
    src = sources(tmp_path / "home")[kind]
    ws.memory_md.write_text("# Long-Term Memory\n\n- Hand written.\n")
    before = ws.memory_md.read_bytes()
    preview = invoke(ws, "import", "--from", kind, str(src), "--json")
    assert preview.exit_code == 0, preview.output
    plan = json.loads(preview.stdout)
    assert {e["text"]: e["meta"]["type"] for e in plan["entries"]} == texts
    assert ws.memory_md.read_bytes() == before  # a preview writes nothing
    applied = json.loads(invoke(ws, "import", "--from", kind, str(src), "--apply", "--json").stdout)
    assert applied["imported"] == len(texts)
    text = ws.memory_md.read_text()
    assert all(t in text for t in texts) and "NEVER-IMPORTED" not in text
    if kind == "openclaw":
        assert '"importance": 0.8' in preview.stdout
    again = json.loads(invoke(ws, "import", "--from", kind, str(src), "--json").stdout)
    assert again["valid"] == 0 and len(again["duplicates"]) == len(texts)
    assert invoke(ws, "undo", applied["runId"]).exit_code == 0
    assert ws.memory_md.read_bytes() == before


def test_import_from_a_missing_or_wrong_path_is_one_line(ws: Workspace, tmp_path: Path) -> None:
    out = invoke(ws, "import", "--from", "hermes", str(tmp_path / "nope"))
    assert out.exit_code != 0
    (line,) = out.output.strip().splitlines()
    assert "no such folder; allowed: a hermes memory folder" in line
    settings = tmp_path / "settings.json"
    settings.write_text("{}")
    out = invoke(ws, "import", "--from", "claude-code", str(settings))
    assert out.exit_code != 0 and "settings and credentials are never imported" in out.output
    out = invoke(ws, "import", "--from", "nonsense", str(tmp_path))
    assert out.exit_code == 2 and "claude-code" in out.output


@pytest.mark.parametrize(
    ("kind", "named"),
    [
        ("claude-code", "MEMORY.md, a topic file or CLAUDE.md"),
        ("codex", "MEMORY.md or memory_summary.md"),
        ("hermes", "MEMORY.md or USER.md"),
        ("openclaw", "MEMORY.md"),
    ],
)
def test_import_from_a_folder_without_that_kinds_files_is_refused(
    ws: Workspace, tmp_path: Path, kind: str, named: str
) -> None:
    """A wrong folder (a typo, the parent of the right one) is not an empty import that exits
    0: the one line names the folder, the files the kind reads, and nothing is written."""
    wrong = tmp_path / "somewhere"
    wrong.mkdir()
    (wrong / "notes.txt").write_text("not memory\n")
    ws.memory_md.write_text("# Memory\n")
    out = invoke(ws, "import", "--from", kind, str(wrong), "--apply")
    assert out.exit_code == 1, out.output
    (line,) = out.output.strip().splitlines()
    assert f"{wrong}: no {named} there; allowed: a {kind} memory folder" in line
    assert ws.memory_md.read_text() == "# Memory\n"
