"""Sessions bound to projects by their working directory: a Claude Code transcript's ``cwd``
(or the git root above it) names its project; no ``cwd`` means ``unsorted``; ``[sessions] path``
may point at ~/.claude/projects as a whole."""

from __future__ import annotations

import json
from pathlib import Path

from memcore.sessions import status
from memcore.sessions.binding import UNSORTED, bound_dir, claude_name, session_project, unsorted
from memcore.sessions.catalog import session_files
from memcore.workspace.core import Workspace
from tests.conftest import invoke


def transcript(path: Path, cwd: str | None) -> Path:
    lines = []
    for i, (role, text) in enumerate([("user", "How do we deploy?"), ("assistant", "Fridays.")]):
        rec: dict = {
            "type": role,
            "uuid": f"u{i}",
            "timestamp": f"2026-11-27T10:0{i}:00.000Z",
            "message": {"role": role, "content": text},
        }
        if cwd is not None:
            rec["cwd"] = cwd
        lines.append(rec)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def layout(tmp_path: Path) -> tuple[Workspace, Path]:
    app = tmp_path / "code" / "app"
    (app / ".git").mkdir(parents=True)
    (app / "memory").mkdir()
    (app / "web").mkdir()
    other = tmp_path / "code" / "other"
    other.mkdir()
    projects = tmp_path / "home" / ".claude" / "projects"
    transcript(projects / claude_name(str(app)) / "s1.jsonl", str(app))
    transcript(projects / claude_name(str(app / "web")) / "s2.jsonl", str(app / "web"))
    transcript(projects / claude_name(str(other)) / "s3.jsonl", str(other))
    transcript(projects / "-tmp-old" / "s4.jsonl", None)
    return Workspace(app), projects


def test_cwd_and_git_root_bind_a_session(tmp_path: Path) -> None:
    ws, projects = layout(tmp_path)
    files = session_files(projects)
    got = {sid.split("/")[-1]: session_project(p) for sid, p in files.items()}
    assert got == {
        "s1": str(ws.root),
        "s2": str(ws.root),  # the git root above its cwd
        "s3": str(tmp_path / "code" / "other"),
        "s4": UNSORTED,  # never guessed
    }
    assert [s.split("/")[-1] for s in unsorted(ws, projects, files)] == ["s4"]
    assert bound_dir(str(ws.root / "web")) == str(ws.root)


def test_sessions_path_may_be_the_whole_projects_folder(tmp_path: Path) -> None:
    ws, projects = layout(tmp_path)
    ws.config_path.write_text(f'[sessions]\npath = "{projects}"\n')
    st = status(ws)
    assert st["sessions"] == 2  # only the sessions bound to this project


def test_a_claude_memory_folder_takes_its_projects_sessions(tmp_path: Path) -> None:
    ws, projects = layout(tmp_path)
    memory = projects / claude_name(str(ws.root)) / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [Deploys](deploys.md) — how we ship\n")
    mem_ws = Workspace(memory, state=tmp_path / "state")
    mem_ws.state.mkdir()
    (mem_ws.state / "memcore.toml").write_text(f'[sessions]\npath = "{projects}"\n')
    st = status(mem_ws)
    assert st["sessions"] == 2  # bound to the directory Claude Code named this folder after


def test_a_transcript_without_cwd_is_named_in_status_and_dream(tmp_path: Path) -> None:
    ws, projects = layout(tmp_path)
    ws.config_path.write_text(f'[sessions]\npath = "{projects}"\n')
    lost = projects / "-tmp-old" / "s4.jsonl"
    before = lost.read_bytes()
    st = status(ws)
    (u,) = st["unsorted"]
    assert u["session"] == "-tmp-old/s4" and u["file"] == str(lost)
    assert u["warning"].startswith(f'{lost}: no "cwd" in its records; allowed: a "cwd" string')
    assert "\n" not in u["warning"]
    out = invoke(ws, "sessions", "status", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["unsorted"] == [u]
    text = invoke(ws, "sessions", "status")
    assert f"unsorted: {u['warning']}" in text.stdout.splitlines()
    run = invoke(ws, "sessions", "dream", "--model", "extractive", "--json")
    assert run.exit_code == 0, run.output
    assert run.stderr.splitlines() == [f"memcore: warning: unsorted: {u['warning']}"]
    assert json.loads(run.stdout)["unsorted"] == [u]
    assert lost.read_bytes() == before  # nothing rewritten


def test_a_folder_of_one_project_has_nothing_unsorted(tmp_path: Path) -> None:
    ws, projects = layout(tmp_path)
    ws.config_path.write_text(f'[sessions]\npath = "{projects / "-tmp-old"}"\n')
    st = status(ws)
    assert st["sessions"] == 1 and st["unsorted"] == []  # the folder binds its sessions
