"""Which project a session belongs to, from its working directory.

A Claude Code transcript records the ``cwd`` it ran in; that directory, or the git root above
it, binds the session to a project. A session with no ``cwd`` goes to ``unsorted``: a project
is never guessed from what the session talks about.

``[sessions] path`` may point at ``~/.claude/projects`` as a whole (a folder of project folders
holding transcripts): a workspace then takes only the sessions bound to it, those whose bound
directory is the workspace's root (or its git root), or, for a Claude Code memory folder
``~/.claude/projects/<project>/memory``, whose directory Claude Code names ``<project>``.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from memcore.errors import WorkspaceError
from memcore.workspace.core import Workspace, read_regular_head

UNSORTED = "unsorted"
_CLAUDE_NAME_RE = re.compile(r"[^A-Za-z0-9]")
_HEAD_BYTES = 256 * 1024


def transcript_cwd(path: Path) -> str | None:
    """The first ``cwd`` a transcript records (read from its head), or None."""
    try:
        head = read_regular_head(path, _HEAD_BYTES)  # a FIFO there now: refused, not waited on
    except (OSError, WorkspaceError):
        return None
    for raw in head.split(b"\n"):
        if b'"cwd"' not in raw:
            continue
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        cwd = rec.get("cwd") if isinstance(rec, dict) else None
        if isinstance(cwd, str) and cwd.strip():
            return cwd.strip()
    return None


@lru_cache(maxsize=4096)
def bound_dir(cwd: str) -> str:
    """The git root above ``cwd`` (``cwd`` included), else ``cwd`` itself."""
    p = Path(cwd)
    for d in (p, *p.parents):
        if (d / ".git").exists():
            return str(d)
    return str(p)


def claude_name(directory: str) -> str:
    """The folder name Claude Code gives a project directory under ~/.claude/projects."""
    return _CLAUDE_NAME_RE.sub("-", directory)


def session_project(path: Path) -> str:
    """The directory a session is bound to, or ``unsorted``."""
    cwd = transcript_cwd(path)
    return bound_dir(cwd) if cwd else UNSORTED


def is_projects_root(directory: Path) -> bool:
    """True for Claude Code's ``~/.claude/projects`` folder (project folders of transcripts)."""
    return directory.absolute().parts[-2:] == (".claude", "projects")


def workspace_keys(ws: Workspace) -> set[str]:
    """The bound directories (and Claude Code folder names) that mean this workspace."""
    root = ws.root.absolute()
    keys = {str(root), bound_dir(str(root))}
    parts = root.parts
    if len(parts) >= 2 and parts[-1] == "memory":  # ~/.claude/projects/<project>/memory
        keys.add("claude:" + parts[-2])
    return keys


def belongs(ws: Workspace, path: Path, keys: set[str] | None = None) -> bool:
    """True when the session at ``path`` is bound to ``ws``."""
    keys = keys if keys is not None else workspace_keys(ws)
    project = session_project(path)
    if project == UNSORTED:
        return False
    return project in keys or "claude:" + claude_name(project) in keys


def bound_files(ws: Workspace, directory: Path, files: dict[str, Path]) -> dict[str, Path]:
    """``files`` of the sessions folder, kept to those bound to ``ws`` when the folder is a
    whole projects root; unchanged otherwise."""
    return split_files(ws, directory, files)[0]


def split_files(
    ws: Workspace, directory: Path, files: dict[str, Path]
) -> tuple[dict[str, Path], dict[str, Path]]:
    """(the ``files`` bound to ``ws``, those of no project: ``unsorted``), one read of each
    transcript's head. Only a whole projects root sorts sessions by ``cwd``; in a folder of
    one project every session is the workspace's and none is unsorted."""
    if not is_projects_root(directory):
        return files, {}
    keys = workspace_keys(ws)
    bound: dict[str, Path] = {}
    lost: dict[str, Path] = {}
    for sid, p in files.items():
        project = session_project(p)
        if project == UNSORTED:
            lost[sid] = p
        elif project in keys or "claude:" + claude_name(project) in keys:
            bound[sid] = p
    return bound, lost


def unsorted_warning(path: Path) -> str:
    """The one line naming a transcript that no project takes, its key and what is allowed."""
    return (
        f'{path}: no "cwd" in its records; allowed: a "cwd" string naming the directory the '
        "session ran in (Claude Code writes it); the session goes to unsorted, no workspace "
        "reads it, the file is left as it is"
    )


def unsorted(ws: Workspace, directory: Path, files: dict[str, Path]) -> list[str]:
    """Session ids of a projects root with no ``cwd``: what a status lists under
    ``unsorted``."""
    return list(split_files(ws, directory, files)[1])
