"""The Codex layout (``~/.codex/memories/``): MEMORY.md (task groups and sections) and
memory_summary.md, whose first line must stay exactly ``v1``. memcore reads both and writes
neither; its own files live in its own folder."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memcore.workspace.core import Workspace, read_text_checked
from memcore.workspace.entries import parse
from memcore.workspace.layouts import LayoutEntry, own_files

if TYPE_CHECKING:
    from memcore.workspace.layouts import Report

SUMMARY = "memory_summary.md"
_LIST_MARK_RE = re.compile(r"^(?:[-*+]|\d{1,9}[.)])\s+")
SUMMARY_VERSION = "v1"
_VERSION_RE = re.compile(r"^\s*v\d+\s*$")


def summary_problem(text: str) -> str | None:
    """Why a memory_summary.md text is not one Codex reads, or None."""
    first = text.split("\n", 1)[0].rstrip("\r")
    if first != SUMMARY_VERSION:
        return f"first line is {first[:40]!r}; allowed: exactly {SUMMARY_VERSION!r}"
    return None


def describe(ws: Workspace, report: Report) -> None:
    if ws.memory_md.is_file():
        report.reads.append("MEMORY.md")
        for e in parse(read_text_checked(ws.memory_md)).entries:
            report.entries.append(
                LayoutEntry(e.text, f"MEMORY.md:{e.start_line}", {"section": e.section})
            )
    summary = ws.root / SUMMARY
    if summary.is_file():
        report.reads.append(SUMMARY)
        text = read_text_checked(summary)
        why = summary_problem(text)
        if why is not None:
            report.warnings.append(f"{summary}: {why}; memcore leaves the file as it is")
        lines = text.splitlines()
        # the version line is no memory; a first line that is no version line is one
        skip = 1 if lines and _VERSION_RE.match(lines[0]) else 0
        for i, line in enumerate(lines[skip:], start=1 + skip):
            text = _LIST_MARK_RE.sub("", line.strip(), count=1)
            if text:
                report.entries.append(LayoutEntry(text, f"{SUMMARY}:{i}", {"summary": True}, True))
    report.writes.extend(own_files(ws))
