"""One small adapter per workspace kind: which files memcore reads and writes there, the
entries they hold (with their metadata) and what is wrong with them.

``describe(ws)`` picks the adapter of the workspace's kind (:mod:`memcore.workspace.kinds`);
``memcore status`` prints its report.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcore.workspace.core import Workspace
from memcore.workspace.kinds import Kind, kind_of


@dataclass
class LayoutEntry:
    """One memory entry as the kind's files hold it."""

    text: str
    source: str  # workspace-relative file (and line) it comes from
    metadata: dict[str, Any] = field(default_factory=dict)
    read_only: bool = False  # a file memcore never rewrites (CLAUDE.md)


@dataclass
class Report:
    """What memcore reads and writes in one workspace, and what it found there."""

    kind: Kind
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    entries: list[LayoutEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.name,
            "kindSource": self.kind.source,
            "reads": self.reads,
            "writes": self.writes,
            "entries": len(self.entries),
            "warnings": self.warnings,
        }


def summaries_path(ws: Workspace) -> Path:
    """Where session dreaming keeps its readable copies: ``memory/summaries/``, or
    ``summaries/`` of memcore's own folder when that is outside the workspace (a folder another
    tool owns gets no file from memcore)."""
    if ws.state is not None:
        return ws.dreams_dir / "summaries"
    return ws.memory_dir / "summaries"


def own_files(ws: Workspace) -> list[str]:
    """memcore's own files, wherever the kind puts them (the session copies once written)."""
    out = [
        str(ws.store_path),
        str(ws.db_path) + " (journal, ledger, index)",
        str(ws.lock_path),
    ]
    summaries = summaries_path(ws)
    if summaries.is_dir():
        out.append(f"{summaries}/ (session short memories, readable copies: journaled, undoable)")
    return out


def shown(ws: Workspace, path: Path) -> str:
    return ws.rel(path) if path.is_relative_to(ws.root) else str(path)


def indexed_files(ws: Workspace) -> list[str]:
    """Workspace-relative files of the kind's long-term memory beyond MEMORY.md and memory/,
    which the search index covers too: a Claude Code folder's topic files and CLAUDE.md
    files, Codex's memory_summary.md, Hermes' USER.md. Empty for memcore and OpenClaw."""
    from memcore.workspace.layouts import claude_code, codex, hermes

    name = kind_of(ws.root).name
    root = ws.root
    if name == "claude-code":
        files = [p.name for p in claude_code.topic_files(root)]
        files += [n for n in claude_code.INSTRUCTION_FILES if os.path.lexists(root / n)]
        return files
    if name == "codex":
        return [codex.SUMMARY] if os.path.lexists(root / codex.SUMMARY) else []
    if name == "hermes":
        return [n for n in hermes.LIMITS if n != "MEMORY.md" and os.path.lexists(root / n)]
    return []


def describe(ws: Workspace) -> Report:
    """The report of ``ws`` by its kind's adapter."""
    from memcore.workspace.layouts import claude_code, codex, hermes, memcore_md

    kind = kind_of(ws.root)
    adapters = {
        "memcore": memcore_md.describe,
        "openclaw": memcore_md.describe,
        "claude-code": claude_code.describe,
        "codex": codex.describe,
        "hermes": hermes.describe,
    }
    report = Report(kind)
    adapters[kind.name](ws, report)
    return report


def status(ws: Workspace) -> dict[str, Any]:
    """The kind, memcore's own folder, which configuration wins, every file read and
    written, the entry count and the warnings (a second scheduler on one MEMORY.md among
    them). Never writes."""
    from memcore.errors import ConfigError
    from memcore.workspace.config import dreaming_settings, load_config
    from memcore.workspace.kinds import openclaw_config_path
    from memcore.workspace.openclaw_config import read_dreaming

    report = describe(ws)
    out = report.to_json()
    out["workspace"] = str(ws.root)
    out["stateDir"] = str(ws.dreams_dir)
    config: dict[str, Any] = {"memcoreToml": str(ws.config_path), "dreamingFrom": None}
    try:
        cfg = load_config(ws)
        settings = dreaming_settings(cfg)
    except ConfigError as exc:
        out["warnings"].append(str(exc))
        out["config"] = config
        return out
    out["warnings"].extend(cfg.notes)
    oc_path = openclaw_config_path(ws.root)
    config["openclawJson"] = str(oc_path) if oc_path else None
    config["dreamingFrom"] = cfg.dreaming_source or "defaults"
    config["mode"] = settings.mode
    if oc_path is not None:
        oc = read_dreaming(oc_path)
        if cfg.dreaming_source == ws.config_path.name and oc.found:
            config["ignored"] = f"{oc_path} dreaming (memcore.toml [dreaming] wins)"
        if settings.enabled and oc.schedules:
            out["warnings"].append(
                f"both memcore (mode {settings.mode}) and OpenClaw ({oc_path} dreaming mode "
                f"{oc.table.get('mode')}) would schedule dreaming on {ws.memory_md}; keep one: "
                "`memcore dreaming off`, or set dreaming.mode to off in openclaw.json"
            )
    out["config"] = config
    return out
