"""Which text in a daily note is not the user's knowledge, so it is never recorded or promoted.

Three kinds: OpenClaw's dreaming output (``<!-- openclaw:dreaming:… -->`` fences and the
``Candidate:`` / ``Reflections:`` lines of its dream diary), memcore's own output (promotion
markers and sections, promoted bullets with their ``[score=… recalls=…]`` trailer), and context
an agent was handed as recalled memory (``<memcore-memory>``, ``<relevant-memories>`` and the
like), which an agent may copy into its notes.
"""

from __future__ import annotations

import re

_DREAM_OPEN_RE = re.compile(r"<!--\s*openclaw:dreaming:(?P<name>[\w.-]*?)(?::start)?\s*-->")
_DREAM_CLOSE_RE = re.compile(r"<!--\s*openclaw:dreaming:(?P<name>[\w.-]*?):end\s*-->")
_DREAM_LINE_RE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?(?:Candidate|Reflections?)(?:\*\*)?\s*:")
_CONTEXT_TAGS = ("memcore-memory", "relevant-memories", "recalled-context", "memory-context")
_CONTEXT_OPEN_RE = re.compile(r"<(?P<tag>" + "|".join(_CONTEXT_TAGS) + r")\b[^>]*>")
_OWN_MARKS = (
    "<!-- memcore:entry",
    "<!-- openclaw-memory-promotion:",
    "## Promoted From Short-Term Memory",
    "<!-- openclaw:dreaming",
)
_TRAILER_RE = re.compile(r"\[score=\d[\d.]* recalls=\d+ avg=[\d.]+ source=[^\]]+\]")


def snippet_reason(snippet: str) -> str | None:
    """Why a snippet is not the user's knowledge, judged from its text alone (None: it is)."""
    if any(m in snippet for m in _OWN_MARKS) or _TRAILER_RE.search(snippet):
        return "memcore's or OpenClaw's own output"
    if _DREAM_LINE_RE.match(snippet):
        return "an OpenClaw dream-diary line"
    if _CONTEXT_OPEN_RE.search(snippet) or any(f"</{t}>" in snippet for t in _CONTEXT_TAGS):
        return "recalled context the agent was given"
    return None


def foreign_lines(text: str) -> set[int]:
    """1-based numbers of the lines of ``text`` that are not the user's knowledge."""
    out: set[int] = set()
    lines = text.split("\n")
    in_dream = False
    context_tag: str | None = None
    for i, line in enumerate(lines, start=1):
        if in_dream:
            out.add(i)
            if _DREAM_CLOSE_RE.search(line):
                in_dream = False
            continue
        if context_tag is not None:
            out.add(i)
            if f"</{context_tag}>" in line:
                context_tag = None
            continue
        m = _DREAM_OPEN_RE.search(line)
        if m is not None and not _DREAM_CLOSE_RE.search(line):
            in_dream = True
            out.add(i)
            continue
        cm = _CONTEXT_OPEN_RE.search(line)
        if cm is not None:
            out.add(i)
            if f"</{cm.group('tag')}>" not in line[cm.end() :]:
                context_tag = cm.group("tag")
            continue
        if snippet_reason(line) is not None:
            out.add(i)
    return out


def range_reason(text: str, start: int, end: int) -> str | None:
    """Why lines ``start``..``end`` of ``text`` are not the user's knowledge (None: they are).

    A range counts as foreign when every non-blank line in it is."""
    lines = text.split("\n")
    foreign = foreign_lines(text)
    seen = False
    for n in range(max(1, start), min(len(lines), end) + 1):
        if not lines[n - 1].strip():
            continue
        if n not in foreign:
            return None
        seen = True
    return "text inside an OpenClaw dreaming block or recalled context" if seen else None
