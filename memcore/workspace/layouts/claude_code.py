"""The Claude Code layout: an auto-memory folder (``~/.claude/projects/<project>/memory/``)
with a MEMORY.md index (``- [Title](file.md) — hook`` lines) and topic files whose YAML front
matter holds ``name``, ``description`` and ``type`` (user, feedback, project, reference; some
tools nest them under ``metadata:``). Each topic file is an entry with its front matter as
metadata, read and written with python-frontmatter; when only the body changes, the front
matter is kept byte for byte. CLAUDE.md files are long-term memory memcore reads and never
rewrites. memcore's own files live in its own folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcore.errors import InputError
from memcore.workspace.core import Workspace, atomic_write_text, read_text_checked
from memcore.workspace.entries import parse
from memcore.workspace.layouts import LayoutEntry, own_files

if TYPE_CHECKING:
    from memcore.workspace.layouts import Report

TYPES = ("user", "feedback", "project", "reference")
INSTRUCTION_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
_FENCE_RE = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.S)
_LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+\.md)\)")


def split_front_matter(text: str) -> tuple[str, str]:
    """(the front matter block with its fences, exactly as written; the body)."""
    m = _FENCE_RE.match(text)
    if m is None:
        return "", text
    return text[: m.end()], text[m.end() :]


def read_topic(path: Path) -> tuple[dict[str, Any], str]:
    """A topic file's front matter and body (its exact text); InputError naming the file
    when the front matter is not YAML or not a mapping."""
    import frontmatter

    text = read_text_checked(path)
    try:
        post = frontmatter.loads(text)
    except Exception as exc:  # yaml.YAMLError and friends (PyYAML ships no type hints)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"{path}: front matter is not YAML ({first}); allowed: YAML `key: value` lines "
            "between --- lines"
        ) from None
    if not isinstance(post.metadata, dict):
        raise InputError(
            f"{path}: front matter is not a YAML mapping; allowed: YAML `key: value` lines "
            "between --- lines"
        )
    return dict(post.metadata), split_front_matter(text)[1]  # the body as written


def topic_problems(path: Path, meta: dict[str, Any]) -> list[str]:
    """What Claude Code would not understand in a topic file's front matter."""
    raw = meta.get("metadata")
    nested: dict[str, Any] = raw if isinstance(raw, dict) else {}
    kind = meta.get("type", nested.get("type"))
    out = []
    if kind is not None and kind not in TYPES:
        out.append(f"{path}: front matter 'type' = {kind!r}; allowed: {', '.join(TYPES)}")
    for key in ("name", "description"):
        if key not in meta and key not in nested:
            out.append(f"{path}: front matter has no '{key}'; allowed: a '{key}: …' line")
    return out


def write_topic(path: Path, body: str, metadata: dict[str, Any] | None = None) -> None:
    """Write a topic file. The existing front matter stays byte for byte unless ``metadata``
    differs from it; a new file (or new metadata) gets python-frontmatter's YAML."""

    if path.exists():
        old_meta, _ = read_topic(path)
        front, _ = split_front_matter(read_text_checked(path))
        if metadata is None or metadata == old_meta:
            atomic_write_text(path, front + body)
            return
    from frontmatter.default_handlers import YAMLHandler

    yaml_text = YAMLHandler().export(metadata or {}, sort_keys=False)
    atomic_write_text(path, f"---\n{yaml_text.rstrip()}\n---\n{body}")


def topic_files(root: Path) -> list[Path]:
    """Topic files of an auto-memory folder (one with a MEMORY.md index): every markdown file
    beside the index but the CLAUDE files. A project folder with only CLAUDE.md has none (its
    README.md is not a topic)."""
    if not (root / "MEMORY.md").is_file():
        return []
    skip = {"MEMORY.md", "CLAUDE.md", "CLAUDE.local.md"}
    return sorted(p for p in root.glob("*.md") if p.is_file() and p.name not in skip)


def describe(ws: Workspace, report: Report) -> None:
    root = ws.root
    if ws.memory_md.is_file():
        index = read_text_checked(ws.memory_md)
        report.reads.append("MEMORY.md (index)")
        for target in _LINK_RE.findall(index):
            if not (root / target).is_file():
                report.warnings.append(f"{ws.memory_md}: links {target}, which does not exist")
    for path in topic_files(root):
        report.reads.append(path.name)
        try:
            meta, body = read_topic(path)
        except InputError as exc:
            report.warnings.append(f"{exc}; the file is left as it is")
            continue
        report.warnings.extend(topic_problems(path, meta))
        text = " ".join(body.split())
        report.entries.append(LayoutEntry(text, path.name, meta))
    for name in INSTRUCTION_FILES:
        path = root / name
        if path.is_file():
            report.reads.append(f"{name} (long-term memory, read-only)")
            for e in parse(read_text_checked(path)).entries:
                report.entries.append(
                    LayoutEntry(e.text, f"{name}:{e.start_line}", {"section": e.section}, True)
                )
    report.writes.extend(own_files(ws))
