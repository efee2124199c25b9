"""``memcore export --to TARGET DIR``: a view of MEMORY.md that another agent loads.

Targets: ``agents-md`` (a section of ``DIR/AGENTS.md`` between memcore's markers),
``cursor-rules`` (``DIR/.cursor/rules/memory.mdc`` with Cursor's front matter, always applied),
``claude-code`` (a Claude Code memory folder: a ``MEMORY.md`` index and one topic file with
``name``/``description``/``type`` front matter) and ``codex`` (``MEMORY.md`` and
``memory_summary.md`` whose first line is ``v1``).

A preview lists the files and their new text; ``apply`` writes them atomically. A file that
exists and that memcore did not write (no :data:`STAMP` in it) is never overwritten unless
``force`` is given; in AGENTS.md only memcore's own section is replaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcore.errors import InputError
from memcore.recall import ledger
from memcore.workspace.core import Workspace, atomic_write_text, read_text_checked
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


def _plain(path: Path, text: str, force: bool) -> ExportFile:
    """A whole file memcore owns: created, updated when it carries the stamp, else refused."""
    if not path.exists():
        return ExportFile(path, text, "create")
    old = read_text_checked(path)
    if old == text:
        return ExportFile(path, text, "unchanged")
    if STAMP not in old and not force:
        return ExportFile(
            path, text, "refused", "exists and memcore did not write it (--force replaces it)"
        )
    return ExportFile(path, text, "update")


def _section(path: Path, section: str, force: bool) -> ExportFile:
    """AGENTS.md: memcore's section replaced in place, or appended when it is not there."""
    block = f"{BEGIN}\n## Memory\n\n{section}{END}\n"
    if not path.exists():
        return ExportFile(path, block, "create")
    old = read_text_checked(path)
    if BEGIN in old and END in old.split(BEGIN, 1)[1]:
        before, rest = old.split(BEGIN, 1)
        after = rest.split(END, 1)[1].removeprefix("\n")
        new = before + block + after
    elif force:
        new = old + ("" if old.endswith("\n") or not old else "\n") + "\n" + block
    else:
        return ExportFile(
            path, old, "refused", "has no memcore section; --force appends one, keeping the rest"
        )
    return ExportFile(path, new, "unchanged" if new == old else "update")


def plan_export(ws: Workspace, target: str, out_dir: Path, *, force: bool = False) -> ExportPlan:
    """What an export to ``out_dir`` would write (nothing is written)."""
    if target not in TARGETS:
        raise InputError(f"--to {target!r} is not a target; allowed: {', '.join(TARGETS)}")
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"{out_dir}: not a folder; allowed: a folder to write into")
    bullets = _bullets(ws)
    body = _body(bullets)
    plan = ExportPlan(target, entries=len(bullets))
    if target == "agents-md":
        plan.files.append(_section(out_dir / "AGENTS.md", body, force))
    elif target == "cursor-rules":
        text = (
            "---\ndescription: Long-term memory of this project (from memcore)\n"
            f"globs:\nalwaysApply: true\n---\n{STAMP}\n\n{body}"
        )
        plan.files.append(_plain(out_dir / ".cursor" / "rules" / "memory.mdc", text, force))
    elif target == "claude-code":
        topic = (
            "---\nname: memcore memory\n"
            "description: Long-term memory kept by memcore (MEMORY.md)\ntype: project\n---\n"
            f"{STAMP}\n\n{body}"
        )
        index = f"{STAMP}\n- [memcore memory](memcore-memory.md) — long-term memory from memcore\n"
        plan.files.append(_plain(out_dir / "MEMORY.md", index, force))
        plan.files.append(_plain(out_dir / "memcore-memory.md", topic, force))
    else:  # codex
        summary = "v1\n" + "\n".join(bullets[:40]) + "\n"
        plan.files.append(_plain(out_dir / "memory_summary.md", summary, force))
        handbook = f"{STAMP}\n# Task Group: memcore memory\n\n## Reusable knowledge\n\n{body}"
        plan.files.append(_plain(out_dir / "MEMORY.md", handbook, force))
    return plan


def apply_export(plan: ExportPlan) -> ExportPlan:
    """Write the files of ``plan``; InputError (nothing written) when one is refused."""
    refused = [f for f in plan.files if f.action == "refused"]
    if refused:
        f = refused[0]
        raise InputError(f"{f.path}: {f.reason}; nothing written")
    for f in plan.files:
        if f.action in ("create", "update"):
            f.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(f.path, f.text)
    return plan
