"""OpenClaw's promotion output in MEMORY.md, read as data.

OpenClaw appends promoted recalls under a dated heading, in one of two shapes:

- the first one: ``## Promoted From Short-Term Memory (YYYY-MM-DD)`` and bullets
  ``- <snippet> [score=0.812 recalls=4 avg=0.903 source=memory/2026-04-01.md:10-12]``, with or
  without an ``<!-- openclaw-memory-promotion:<key> -->`` line above each;
- the newest one: ``## Consolidated Memory (YYYY-MM-DD)``, per entry an optional
  ``<!-- openclaw-memory-lineage:<key> -->`` line, a promotion marker line, then
  ``- <snippet> Source: <path>#L<a>-L<b> <!-- trigger: a, b --> <!-- importance: N -->`` and an
  optional ``<!-- project: key -->``.

:func:`promoted_bullets` lists every such bullet with its source, marker key and annotations, so
promotion can recognise what OpenClaw already wrote (even without a marker, after a crash
between its two writes) and the entry parser can give the bullets their metadata.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LEGACY_HEADING = "## Promoted From Short-Term Memory"
CONSOLIDATED_HEADING = "## Consolidated Memory"
PROMOTION_HEADINGS = (LEGACY_HEADING, CONSOLIDATED_HEADING)

PROMOTION_MARKER_RE = re.compile(r"<!--\s*openclaw-memory-promotion:(?P<key>.+?)\s*-->")
LINEAGE_MARKER_RE = re.compile(r"<!--\s*openclaw-memory-lineage:(?P<key>.+?)\s*-->")
#: ``[score=… (signals=…) recalls=… avg=… source=path:a-b]`` at the end of a bullet.
LEGACY_TRAILER_RE = re.compile(
    r"\s*\[score=[0-9.]+(?:\s+\w+=[^\s\]]*)*?\s+source=(?P<src>[^\]]*)\]\s*$"
)
#: ``Source: path#La-Lb`` (the newest format), before any annotations.
SOURCE_RE = re.compile(r"\s*\bSource:\s*(?P<path>\S+?)#L(?P<start>\d+)(?:-L(?P<end>\d+))?\s*$")
#: ``<!-- trigger: … -->``, ``<!-- importance: N -->``, ``<!-- project: … -->`` annotations.
ANNOTATION_RE = re.compile(
    r"\s*<!--\s*(?P<name>trigger|importance|project):\s*(?P<value>.*?)\s*-->"
)
_BULLET_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_HEADING_RE = re.compile(r"^#{1,6}\s")
_WS_RE = re.compile(r"\s+")


@dataclass
class PromotedBullet:
    """One bullet OpenClaw promoted: where it came from and what it says."""

    line: int  # 0-based line of the bullet
    section: str  # the heading line it sits under
    snippet: str  # the text, whitespace-collapsed, list mark, trailer and annotations removed
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    key: str | None = None  # the promotion marker's recall key, when the bullet has one
    lineage: str | None = None
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def consolidated(self) -> bool:
        return self.section.startswith(CONSOLIDATED_HEADING)


def comparable(snippet: str) -> str:
    """A snippet as the bullets compare: whitespace collapsed, a leading list mark dropped."""
    out = _WS_RE.sub(" ", snippet).strip()
    return _BULLET_RE.sub("", out, count=1).strip()


def split_bullet(body: str) -> tuple[str, dict[str, str], tuple[str, int, int] | None]:
    """A bullet's one-line text without list mark: (snippet, annotations, source)."""
    text = _BULLET_RE.sub("", _WS_RE.sub(" ", body).strip(), count=1)
    notes: dict[str, str] = {}
    while True:
        m = ANNOTATION_RE.search(text)
        if m is None:
            break
        notes[m.group("name")] = m.group("value")
        text = (text[: m.start()] + text[m.end() :]).rstrip()
    source: tuple[str, int, int] | None = None
    m2 = LEGACY_TRAILER_RE.search(text)
    if m2 is not None:
        src = m2.group("src").strip()
        text = text[: m2.start()].rstrip()
        path, _, span = src.rpartition(":")
        a, _, b = span.partition("-")
        if path and a.isdigit():
            source = (path, int(a), int(b) if b.isdigit() else int(a))
    else:
        m3 = SOURCE_RE.search(text)
        if m3 is not None:
            text = text[: m3.start()].rstrip()
            a = int(m3.group("start"))
            source = (m3.group("path"), a, int(m3.group("end") or a))
    return text.strip(), notes, source


def promoted_bullets(text: str) -> list[PromotedBullet]:
    """Every top-level bullet under an OpenClaw promotion heading, in file order."""
    out: list[PromotedBullet] = []
    section = ""
    key: str | None = None
    lineage: str | None = None
    in_fence = False
    for i, raw in enumerate(text.splitlines()):
        line = raw.rstrip()
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if _HEADING_RE.match(line):
            section = line.strip()
            key = lineage = None
            continue
        m = PROMOTION_MARKER_RE.fullmatch(line.strip())
        if m is not None:
            key = m.group("key").strip()
            continue
        m = LINEAGE_MARKER_RE.fullmatch(line.strip())
        if m is not None:
            lineage = m.group("key").strip()
            continue
        if not section.startswith(PROMOTION_HEADINGS) or not _BULLET_RE.match(line):
            if line.strip():
                key = lineage = None
            continue
        if line[:1].isspace():
            continue  # nested under another bullet
        snippet, notes, source = split_bullet(line)
        b = PromotedBullet(i, section, snippet, key=key, lineage=lineage, annotations=notes)
        if source is not None:
            b.path, b.start_line, b.end_line = source
        out.append(b)
        key = lineage = None
    return out


def unmarked_promotions(text: str) -> set[tuple[str, str]]:
    """(source path, comparable snippet) of each promoted bullet that has no marker: what
    OpenClaw wrote when it crashed before marking its store (promotion must not add them
    again)."""
    return {
        (b.path, comparable(b.snippet))
        for b in promoted_bullets(text)
        if b.key is None and b.path is not None
    }


_TAG_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{2,}")
_NUMERIC_RE = re.compile(r"^[0-9._/-]+$")
_STOP_WORDS = (
    "the and for with that this from into have has was were are not but you your our their "
    "they them then than when what which who will would should could can did does done also "
    "about after before over under just only very more most some any each other such via "
    "memory notes note daily today yesterday"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
MAX_TAGS = 8
MAX_TRIGGERS = 3
MAX_TRIGGER_CHARS = 64
MAX_SNIPPET_CHARS = 640  # OpenClaw's maxPromotedSnippetTokens (160) x 4


def concept_tags(path: str, snippet: str) -> list[str]:
    """Lowercase concept tags of a snippet and its file's name: 3-32 characters, no dates or
    numbers, no stop words, at most 8, in order of appearance."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    out: list[str] = []
    for raw in _TAG_RE.findall(f"{stem} {snippet}"):
        tag = raw.lower().strip("._/-")
        if not 3 <= len(tag) <= 32 or _NUMERIC_RE.match(tag) or tag in _STOP or tag in out:
            continue
        out.append(tag)
        if len(out) == MAX_TAGS:
            break
    return out


def importance(score: float) -> int:
    """OpenClaw's importance annotation: the score times ten, rounded, from 3 to 10."""
    return max(3, min(10, round(score * 10)))


def consolidated_bullet(
    key: str, snippet: str, path: str, start: int, end: int, score: float
) -> list[str]:
    """The lines of one promoted entry in OpenClaw's newest format: its promotion marker and
    ``- <snippet> Source: <path>#L<a>-L<b> <!-- trigger: … --> <!-- importance: N -->``."""
    text = " ".join(snippet.split()) or "(no snippet captured)"
    if len(text) > MAX_SNIPPET_CHARS:
        text = text[: MAX_SNIPPET_CHARS - 1].rstrip() + "…"
    triggers = [t[:MAX_TRIGGER_CHARS] for t in concept_tags(path, text)[:MAX_TRIGGERS]]
    line = f"- {text} Source: {path}#L{start}-L{end}"
    if triggers:
        line += f" <!-- trigger: {', '.join(triggers)} -->"
    line += f" <!-- importance: {importance(score)} -->"
    return [f"<!-- openclaw-memory-promotion:{key} -->", line]
