"""Session dreaming in a folder another tool owns (a Claude Code memory folder, Codex's or
Hermes' memories) writes its readable copies into memcore's own folder for that workspace,
never into the other tool's folder, and they stay journaled and undoable there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.judge.llm import ExtractiveLLM
from memcore.sessions.export import summaries_dir
from memcore.sessions.run import execute
from memcore.workspace.core import Workspace, resolve_workspace
from memcore.workspace.kinds import state_dir
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, make_session, turns_for
from tests.test_workspace_kinds import claude_folder


def _folder(kind: str, home: Path) -> Path:
    if kind == "claude-code":
        return claude_folder(home)
    root = home / f".{kind}" / "memories"
    root.mkdir(parents=True)
    if kind == "codex":
        (root / "memory_summary.md").write_text("v1\n- Prefers pnpm over npm.\n")
    else:
        (root / "MEMORY.md").write_text("The NAS backs up nightly.\n§\nVPN is wg0.\n")
        (root / "USER.md").write_text("Name is Ana.\n")
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("kind", ["claude-code", "codex", "hermes"])
def test_session_exports_stay_out_of_another_tools_folder(tmp_path: Path, kind: str) -> None:
    root = _folder(kind, tmp_path / "home")
    ws = resolve_workspace(root)
    own = state_dir(root)
    assert ws.dreams_dir == own
    make_session(Workspace(tmp_path), "s0", turns_for(0))  # tmp_path/sessions/s0.jsonl
    own.mkdir(parents=True, exist_ok=True)
    (own / "memcore.toml").write_text(f'[sessions]\npath = "{tmp_path / "sessions"}"\n')
    before = _tree(root)

    report = execute(ws, now=NOW, llm=ExtractiveLLM())
    assert report["status"] == "ok" and "session:s0@v1" in report["wrote"], report
    assert _tree(root) == before  # not one file added or changed in the other tool's folder
    assert summaries_dir(ws).is_relative_to(own)
    sessions_md = summaries_dir(ws) / "sessions.md"
    assert "session:s0@v1" in sessions_md.read_text()
    writes = json.loads(invoke(root, "status", "--json").output)["writes"]
    assert any(w.startswith(f"{summaries_dir(ws)}/ (session short memories") for w in writes)
    history = json.loads(invoke(root, "history", "--json").output)
    run = history["runs"][0] if isinstance(history, dict) else history[0]
    assert str(sessions_md) in json.dumps(run)
    assert invoke(root, "undo").exit_code == 0
    assert not sessions_md.exists() and _tree(root) == before


def test_a_purge_scrubs_the_journal_copies_kept_in_memcores_own_folder(tmp_path: Path) -> None:
    root = _folder("codex", tmp_path / "home")
    ws = resolve_workspace(root)
    make_session(Workspace(tmp_path), "s0", turns_for(1))
    ws.ensure_dreams_dir()
    (ws.dreams_dir / "memcore.toml").write_text(f'[sessions]\npath = "{tmp_path / "sessions"}"\n')
    assert execute(ws, now=NOW, llm=ExtractiveLLM())["status"] == "ok"
    secret = "blue-green"  # stands for a detail found later to be private
    assert secret in (summaries_dir(ws) / "sessions.md").read_text()
    out = invoke(root, "sessions", "forget", "session:s0", "--text", secret, "--purge", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["purgedJournalCopies"] >= 1
    assert all(secret not in p.read_text() for p in summaries_dir(ws).glob("*.md"))
