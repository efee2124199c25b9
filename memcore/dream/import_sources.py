"""``memcore import --from KIND PATH``: another agent's memory folder as import rows.

Each kind's adapter (:mod:`memcore.workspace.layouts`) reads only the memory files of its
layout, never credentials, settings or session transcripts:

- ``claude-code``: an auto-memory folder (topic files: body as text, front matter ``type``
  mapped to memcore's types) and its ``CLAUDE.md`` files; a ``~/.claude/projects/<project>``
  folder means its ``memory/``;
- ``codex``: ``MEMORY.md`` and ``memory_summary.md`` of ``~/.codex/memories``;
- ``hermes``: the ``§`` entries of ``MEMORY.md`` and ``USER.md``;
- ``openclaw``: the MEMORY.md entries of an OpenClaw workspace (its importance annotation kept);
- ``mem0``: a JSON or JSONL export (as a plain ``memcore import FILE``).

The rows go through the same checks, redaction and duplicate detection as any import, and
``--apply`` writes them as one journaled, undoable run.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.dream.imports import MAX_ROWS, ImportPlan, plan_records, read_import
from memcore.errors import InputError
from memcore.workspace.core import Workspace
from memcore.workspace.kinds import Kind
from memcore.workspace.layouts import LayoutEntry, Report

SOURCES = ("claude-code", "codex", "hermes", "openclaw", "mem0")
#: Claude Code's topic types as memcore's entry types.
CLAUDE_TYPES = {
    "user": "preference",
    "feedback": "convention",
    "project": "fact",
    "reference": "fact",
}
#: Files an import never reads, whatever the folder holds.
NEVER = ("settings.json", "settings.local.json", "credentials.json", ".credentials.json")


def _folder(kind: str, path: Path) -> Path:
    if not path.exists():
        raise InputError(f"{path}: no such folder; allowed: a {kind} memory folder")
    if not path.is_dir():
        raise InputError(f"{path}: not a folder; allowed: a {kind} memory folder")
    if kind == "claude-code" and not (path / "MEMORY.md").exists() and (path / "memory").is_dir():
        path = path / "memory"  # ~/.claude/projects/<project>
    if not _holds_memory(kind, path):  # a typo or the wrong level: not an empty import
        raise InputError(
            f"{path}: no {EXPECTED[kind]} there; allowed: a {kind} memory folder ({EXAMPLES[kind]})"
        )
    return path


#: What each kind's folder holds, as the error names it, and where it usually is.
EXPECTED = {
    "claude-code": "MEMORY.md, a topic file or CLAUDE.md",
    "codex": "MEMORY.md or memory_summary.md",
    "hermes": "MEMORY.md or USER.md",
    "openclaw": "MEMORY.md",
}
EXAMPLES = {
    "claude-code": "~/.claude/projects/<project>/memory, or a project with CLAUDE.md",
    "codex": "~/.codex/memories",
    "hermes": "~/.hermes/memories",
    "openclaw": "~/.openclaw/workspace",
}
_FILES = {
    "claude-code": ("MEMORY.md", "CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md"),
    "codex": ("MEMORY.md", "memory_summary.md"),
    "hermes": ("MEMORY.md", "USER.md"),
    "openclaw": ("MEMORY.md",),
}


def _holds_memory(kind: str, path: Path) -> bool:
    if any((path / name).is_file() for name in _FILES[kind]):
        return True
    if kind != "claude-code":
        return False
    for md in path.glob("*.md"):  # a topic file: front matter first
        try:
            with md.open("rb") as fh:
                if fh.read(4).rstrip(b"\r\n") == b"---":
                    return True
        except OSError:
            continue
    return False


def source_entries(kind: str, path: Path) -> tuple[list[LayoutEntry], list[str]]:
    """The entries of the ``kind`` folder at ``path`` and the warnings its adapter gave."""
    from memcore.workspace.layouts import claude_code, codex, hermes, memcore_md

    adapters = {
        "claude-code": claude_code.describe,
        "codex": codex.describe,
        "hermes": hermes.describe,
        "openclaw": memcore_md.describe,
    }
    root = _folder(kind, path)
    report = Report(Kind(kind, "import --from"))
    adapters[kind](Workspace(root, state=root / ".memcore-import-unused"), report)
    return report.entries, report.warnings


def _record(kind: str, e: LayoutEntry) -> dict[str, Any]:
    row: dict[str, Any] = {"text": e.text}
    md = e.metadata
    if kind == "claude-code":
        nested = md.get("metadata") if isinstance(md.get("metadata"), dict) else {}
        t = md.get("type", nested.get("type") if isinstance(nested, dict) else None)
        row["type"] = CLAUDE_TYPES.get(str(t), "convention" if e.read_only else "unknown")
        if e.read_only:
            row["pinned"] = False
    elif kind == "hermes":
        row["type"] = "preference" if md.get("file") == "USER.md" else "fact"
    elif kind == "openclaw":
        imp = md.get("openclaw.importance")
        if isinstance(imp, str) and imp.isdigit():
            row["importance"] = min(1.0, int(imp) / 10)
    return row


def read_from(
    ws: Workspace, kind: str, path: Path, *, now: datetime
) -> tuple[ImportPlan, list[str]]:
    """The import plan of ``kind``'s memory at ``path`` into ``ws`` (nothing written) and the
    warnings about the source's files."""
    if kind not in SOURCES:
        raise InputError(f"--from {kind!r} is not a source; allowed: {', '.join(SOURCES)}")
    if kind == "mem0":
        return read_import(ws, path, now=now), []
    if path.name in NEVER:
        raise InputError(f"{path}: settings and credentials are never imported")
    entries, warnings = source_entries(kind, path)
    entries = [e for e in entries if e.text]
    if len(entries) > MAX_ROWS:
        raise InputError(f"{path}: {len(entries)} entries; allowed: at most {MAX_ROWS}")
    records = [(i, _record(kind, e)) for i, e in enumerate(entries, start=1)]
    plan = plan_records(ws, f"{kind}:{path}", records, now=now)
    return plan, warnings
