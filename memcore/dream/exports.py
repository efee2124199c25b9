"""``memcore export --to TARGET DIR``: a view of MEMORY.md that another agent loads.

Targets: ``agents-md`` (a section of ``DIR/AGENTS.md`` between memcore's markers),
``cursor-rules`` (``DIR/.cursor/rules/memory.mdc`` with Cursor's front matter, always applied),
``claude-code`` (a Claude Code memory folder: a ``MEMORY.md`` index and one topic file with
``name``/``description``/``type`` front matter) and ``codex`` (``MEMORY.md`` and
``memory_summary.md`` whose first line is ``v1``).

A preview lists the files and their new text; :func:`apply_export` writes them as one
journaled run (kind ``export``: ``memcore history`` lists it, ``memcore undo RUN`` removes the
files it created, and the folders it made for them, and gives the files it changed their bytes
back). A file that exists and that memcore did not write (no :data:`STAMP` in it, and not the
bytes an earlier export run left) is never overwritten unless ``force`` is given; in AGENTS.md
and in a Claude Code index memcore did not write, only memcore's own section (between
:data:`BEGIN` and :data:`END`) is ever replaced, and ``force`` appends one keeping the rest.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.errors import InputError
from memcore.recall import ledger
from memcore.workspace.core import Workspace, read_text_checked
from memcore.workspace.entries import parse

TARGETS = ("claude-code", "agents-md", "cursor-rules", "codex")
STAMP = "<!-- written by memcore export; memcore rewrites this -->"
BEGIN = "<!-- memcore:export begin -->"
END = "<!-- memcore:export end -->"
MAX_LINES = 180  # Claude Code loads the first 200 lines of MEMORY.md


@dataclass
class ExportFile:
    path: Path
    text: str
    action: str  # create | update | unchanged | refused
    reason: str = ""


@dataclass
class ExportPlan:
    target: str
    files: list[ExportFile] = field(default_factory=list)
    entries: int = 0
    out_dir: Path = Path()
    force: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "entries": self.entries,
            "files": [
                {"path": str(f.path), "action": f.action, "reason": f.reason, "text": f.text}
                for f in self.files
            ],
        }


def _bullets(ws: Workspace) -> list[str]:
    doc = parse(ledger.read_memory(ws))
    out, seen = [], set()
    for e in doc.entries:
        if e.text and e.text not in seen and not e.text.startswith("#"):
            seen.add(e.text)
            out.append(f"- {e.text}")
    return out[:MAX_LINES]


def _body(bullets: list[str]) -> str:
    head = "Long-term memory kept by memcore (generated from MEMORY.md; edit it there)."
    return head + "\n\n" + ("\n".join(bullets) if bullets else "(no entries yet)") + "\n"


#: Whether memcore wrote a file's current text (an earlier export run left exactly it).
Ours = Callable[[Path, str], bool]


def _never(path: Path, text: str) -> bool:
    return False


def _plain(path: Path, text: str, force: bool, ours: Ours = _never) -> ExportFile:
    """A whole file memcore owns: created, updated when it carries the stamp or is what an
    earlier export wrote, else refused."""
    if not path.exists():
        return ExportFile(path, text, "create")
    old = read_text_checked(path)
    if old == text:
        return ExportFile(path, text, "unchanged")
    if STAMP not in old and not ours(path, old) and not force:
        return ExportFile(
            path, text, "refused", "exists and memcore did not write it (--force replaces it)"
        )
    return ExportFile(path, text, "update")


def _section(
    path: Path, inner: str, force: bool, *, ours: Ours = _never, whole: str | None = None
) -> ExportFile:
    """memcore's section (``inner`` between BEGIN and END) replaced in place, or appended with
    ``force`` when the file has none. ``whole``: the text of a new file, also written over a
    file memcore wrote whole (a Claude Code index with the stamp)."""
    block = f"{BEGIN}\n{inner}{END}\n"
    if not path.exists():
        return ExportFile(path, whole if whole is not None else block, "create")
    old = read_text_checked(path)
    if BEGIN in old and END in old.split(BEGIN, 1)[1]:
        before, rest = old.split(BEGIN, 1)
        after = rest.split(END, 1)[1].removeprefix("\n")
        new = before + block + after
    elif whole is not None and (STAMP in old or ours(path, old)):
        new = whole
    elif force:
        new = old + ("" if old.endswith("\n") or not old else "\n") + "\n" + block
    else:
        return ExportFile(
            path, old, "refused", "has no memcore section; --force appends one, keeping the rest"
        )
    return ExportFile(path, new, "unchanged" if new == old else "update")


def _journal_ours(ws: Workspace) -> Ours:
    """``ours(path, text)``: an applied export run left exactly ``text`` at ``path``."""
    if not ws.db_path.exists():
        return _never
    from memcore.dream import tables
    from memcore.journal import wal

    with tables.connect(ws) as conn:
        left = {
            (r[0], r[1])
            for r in conn.execute(
                "SELECT f.path, f.after_sha1 FROM journal_files f JOIN dream_runs r"
                " ON r.run_id = f.run_id WHERE r.kind = 'export' AND r.status = 'applied'"
                " AND f.after_sha1 IS NOT NULL"
            )
        }
    if not left:
        return _never

    def ours(path: Path, text: str) -> bool:
        sha = hashlib.sha1(text.encode("utf-8")).hexdigest()
        return (wal.rel_path(ws, path), sha) in left

    return ours


def plan_export(ws: Workspace, target: str, out_dir: Path, *, force: bool = False) -> ExportPlan:
    """What an export to ``out_dir`` would write (nothing is written)."""
    if target not in TARGETS:
        raise InputError(f"--to {target!r} is not a target; allowed: {', '.join(TARGETS)}")
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"{out_dir}: not a folder; allowed: a folder to write into")
    bullets = _bullets(ws)
    body = _body(bullets)
    ours = _journal_ours(ws)
    plan = ExportPlan(target, entries=len(bullets), out_dir=out_dir, force=force)
    if target == "agents-md":
        plan.files.append(_section(out_dir / "AGENTS.md", f"## Memory\n\n{body}", force))
    elif target == "cursor-rules":
        text = (
            "---\ndescription: Long-term memory of this project (from memcore)\n"
            f"globs:\nalwaysApply: true\n---\n{STAMP}\n\n{body}"
        )
        plan.files.append(_plain(out_dir / ".cursor" / "rules" / "memory.mdc", text, force, ours))
    elif target == "claude-code":
        out_dir = claude_memory_dir(out_dir)
        topic = (
            "---\nname: memcore memory\n"
            "description: Long-term memory kept by memcore (MEMORY.md)\ntype: project\n---\n"
            f"{STAMP}\n\n{body}"
        )
        link = "- [memcore memory](memcore-memory.md) — long-term memory from memcore\n"
        index = _section(out_dir / "MEMORY.md", link, force, ours=ours, whole=f"{STAMP}\n{link}")
        plan.files.append(index)
        plan.files.append(_plain(out_dir / "memcore-memory.md", topic, force, ours))
    else:  # codex
        summary = "v1\n" + "\n".join(bullets[:40]) + "\n"
        plan.files.append(_plain(out_dir / "memory_summary.md", summary, force, ours))
        handbook = f"{STAMP}\n# Task Group: memcore memory\n\n## Reusable knowledge\n\n{body}"
        plan.files.append(_plain(out_dir / "MEMORY.md", handbook, force, ours))
    return plan


def claude_memory_dir(folder: Path) -> Path:
    """The folder Claude Code loads memory from: ``folder`` itself, or its ``memory/`` when
    ``folder`` is a Claude Code project folder (``~/.claude/projects/<project>``: session
    transcripts or a ``memory/`` folder in it, no MEMORY.md of its own)."""
    if (folder / "MEMORY.md").exists() or not folder.is_dir():
        return folder
    if (folder / "memory").is_dir() or any(folder.glob("*.jsonl")):
        return folder / "memory"
    return folder


def _missing_dirs(path: Path) -> list[str]:
    """Folders above ``path`` that do not exist yet (the write creates them), deepest first."""
    out: list[str] = []
    d = path.parent
    while not d.exists() and d != d.parent:
        out.append(str(d.absolute()))
        d = d.parent
    return out


def apply_export(
    ws: Workspace,
    plan: ExportPlan,
    *,
    now: datetime,
    lock_timeout: float = 10.0,
    trigger: str = "command",
) -> dict[str, Any]:
    """Write the export as one journaled run (kind ``export``); InputError, nothing written,
    when a file is refused. The files are planned again under the workspace lock, so a file
    that appeared or changed since the preview is judged as it is now. Returns the plan (as
    :meth:`ExportPlan.to_json`) with ``runId`` (None when nothing changed) and ``dirs``."""
    from memcore.dream import tables
    from memcore.journal import runs as journal
    from memcore.journal import wal

    with ws.lock(lock_timeout):
        fresh = plan_export(ws, plan.target, plan.out_dir, force=plan.force)
        refused = [f for f in fresh.files if f.action == "refused"]
        if refused:
            f = refused[0]
            raise InputError(f"{f.path}: {f.reason}; nothing written")
        todo = [f for f in fresh.files if f.action in ("create", "update")]
        out = {**fresh.to_json(), "runId": None, "dirs": []}
        if not todo:
            return out
        dirs: list[str] = []
        for f in todo:
            dirs += [d for d in _missing_dirs(f.path) if d not in dirs]
        run_id = journal.new_run_id(now)
        counters = {
            "target": fresh.target,
            "folder": str(plan.out_dir.absolute()),
            "created": sum(1 for f in todo if f.action == "create"),
            "updated": sum(1 for f in todo if f.action == "update"),
            "entries": fresh.entries,
            "createdDirs": dirs,
        }
        with tables.connect(ws) as conn:
            wal.commit_run(
                ws,
                conn,
                wal.RunSpec(run_id, "export", "apply", now, trigger, counters=counters),
                {f.path: f.text.encode("utf-8") for f in todo},
            )
    out.update(runId=run_id, dirs=dirs)
    return out


def remove_created_dirs(dirs: list[str]) -> list[str]:
    """After an export is undone: the folders it created, removed when empty (deepest first;
    one that holds anything now stays). Returns those removed."""
    gone = []
    for d in sorted(dirs, key=lambda p: p.count(os.sep), reverse=True):
        try:
            os.rmdir(d)
        except OSError:
            continue
        gone.append(d)
    return gone
