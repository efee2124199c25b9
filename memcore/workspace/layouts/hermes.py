"""The Hermes layout (``~/.hermes/memories/``): MEMORY.md and USER.md, entries separated by
``§``, each file within its character limit (2,200 and 1,375). memcore reads them, appends
promoted and imported entries to MEMORY.md only while it stays within its limit (never USER.md),
and keeps its own files in its own folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memcore.errors import InputError
from memcore.workspace.core import Workspace, atomic_write_text, read_text_checked
from memcore.workspace.layouts import LayoutEntry, own_files

if TYPE_CHECKING:
    from memcore.workspace.layouts import Report

SEPARATOR = "§"
LIMITS = {"MEMORY.md": 2200, "USER.md": 1375}


def split_entries(text: str) -> list[str]:
    """The entries of a Hermes memory file, in order (blank ones dropped)."""
    return [part.strip() for part in text.split(SEPARATOR) if part.strip()]


def join_entries(entries: list[str]) -> str:
    return f"\n{SEPARATOR}\n".join(entries) + "\n"


def entry_text(text: str) -> str:
    """One Hermes entry: the text on one line, a ``§`` in it (which would split it in two)
    written ``(section)``."""
    return " ".join(text.replace(SEPARATOR, "(section)").split())


def appended(text: str, entry: str) -> str:
    """``text`` with ``entry`` added as its last entry; every byte of ``text`` kept (a missing
    final newline is added, a ``§`` already closing it is reused)."""
    if not text.strip():
        return text + entry + "\n"
    base = text if text.endswith("\n") else text + "\n"
    if base.rstrip().endswith(SEPARATOR):
        return base + entry + "\n"
    return base + SEPARATOR + "\n" + entry + "\n"


def without_entries(text: str, entries: list[str]) -> str | None:
    """``text`` with each of ``entries`` (and the separator before it) taken out, the rest
    as written; None when one of them is no longer there as an entry of its own."""
    parts = text.split(SEPARATOR)
    for entry in entries:
        at = next((i for i in range(len(parts) - 1, -1, -1) if parts[i].strip() == entry), None)
        if at is None:
            return None
        del parts[at]
        if at == 0 and parts:
            parts[0] = parts[0].lstrip("\n")
        elif at == len(parts) and parts:  # it was the last: keep one final newline
            parts[-1] = parts[-1].rstrip("\n") + "\n"
    return SEPARATOR.join(parts)


def limit_of(path: Path) -> int | None:
    """Hermes' character limit for ``path`` (MEMORY.md 2,200; USER.md 1,375), else None."""
    return LIMITS.get(path.name)


def limit_problem(path: Path, text: str) -> str | None:
    limit = LIMITS.get(path.name)
    if limit is not None and len(text) > limit:
        return (
            f"{path}: {len(text)} characters, over Hermes' limit of {limit} for {path.name}; "
            f"allowed: at most {limit} characters; memcore adds nothing to it"
        )
    return None


def append_entry(path: Path, entry: str) -> str:
    """Add ``entry`` to a Hermes file; InputError (nothing written) past its limit."""
    text = read_text_checked(path) if path.exists() else ""
    entries = split_entries(text)
    entries.append(" ".join(entry.split()))
    new = join_entries(entries)
    limit = LIMITS.get(path.name)
    if limit is not None and len(new) > limit:
        raise InputError(
            f"{path}: the entry would make it {len(new)} characters; allowed: at most {limit} "
            f"for {path.name}; nothing written"
        )
    atomic_write_text(path, new)
    return new


def describe(ws: Workspace, report: Report) -> None:
    for name, limit in LIMITS.items():
        path = ws.root / name
        if not path.is_file():
            continue
        text = read_text_checked(path)
        report.reads.append(f"{name} ({len(text)}/{limit} characters)")
        why = limit_problem(path, text)
        if why is not None:
            report.warnings.append(why)
        for i, entry in enumerate(split_entries(text), start=1):
            report.entries.append(LayoutEntry(entry, f"{name} §{i}", {"file": name}))
    report.writes.append(
        f"MEMORY.md (promotion, imports: § entries within {LIMITS['MEMORY.md']} characters; "
        "journaled, undoable)"
    )
    report.writes.extend(own_files(ws))
