"""The memcore and OpenClaw layouts: MEMORY.md (long-term) and memory/ daily notes; for
OpenClaw also its promotion sections (their source, markers and annotations as metadata) and
openclaw.json (read for the dreaming settings, never written)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.workspace.core import Workspace, read_text_checked
from memcore.workspace.entries import parse
from memcore.workspace.kinds import openclaw_config_path
from memcore.workspace.layouts import LayoutEntry, own_files, shown
from memcore.workspace.openclaw_md import promoted_bullets

if TYPE_CHECKING:
    from memcore.workspace.layouts import Report


def describe(ws: Workspace, report: Report) -> None:
    notes = ws.daily_notes()
    if ws.memory_md.is_file():
        report.reads.append("MEMORY.md")
        report.writes.append("MEMORY.md (promotion, consolidation: journaled, undoable)")
        text = read_text_checked(ws.memory_md)
        meta = {b.line: b for b in promoted_bullets(text)}
        for e in parse(text).entries:
            md: dict[str, object] = dict(e.attrs)
            b = meta.get(e.body_start)
            if b is not None:
                md.update({f"openclaw.{k}": v for k, v in b.annotations.items()})
                if b.path:
                    md["source"] = f"{b.path}#L{b.start_line}-L{b.end_line}"
                if b.key:
                    md["promotionKey"] = b.key
                if b.lineage:
                    md["lineage"] = b.lineage
            report.entries.append(LayoutEntry(e.text, f"MEMORY.md:{e.start_line}", md))
    if notes:
        first, last = shown(ws, notes[0]), shown(ws, notes[-1])
        report.reads.append(f"{len(notes)} daily notes ({first} … {last})")
    oc = openclaw_config_path(ws.root)
    if oc is not None:
        report.reads.append(f"{shown(ws, oc)} (dreaming settings; never written)")
    report.writes.extend(own_files(ws))
