"""Markdown chunks for the search index, and the text FTS5 indexes for each.

Chunks are markdown blocks with 1-based inclusive line ranges: every top-level list item (with
its continuation and sub-items) is its own chunk, so each MEMORY.md bullet is one chunk; other
paragraphs, tables and code fences are one chunk each, split at line boundaries past ~700
characters. Headings and ``Label:`` lines are not chunk text; the nearest one is indexed with
the chunks below it as context. Marker comments are skipped, and so is front matter unless
asked for (a topic file's ``name`` and ``description`` are worth finding).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHUNK_CHARS = 700

# Scripts written without spaces between words: FTS5's unicode61 tokenizer would make a whole
# run one token, so each such character is indexed as a token of its own (queries then match
# character bigrams as phrases, the usual way to search Chinese and Japanese).
CJK_RE = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")


def fts_text(text: str) -> str:
    """The text as FTS5 indexes it: CJK characters spaced apart, everything else unchanged."""
    return CJK_RE.sub(r" \1 ", text) if CJK_RE.search(text) else text


_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_LIST_RE = re.compile(r"^\s{0,1}(?:[-*+]|\d{1,9}[.)])\s+")
_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")
_COMMENT_RE = re.compile(r"^\s*<!--.*-->\s*$")
_RULE_RE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LABEL_MAX = 60


@dataclass(frozen=True)
class Chunk:
    start_line: int
    end_line: int
    text: str  # the lines of the range, as written
    context: str = ""  # nearest heading or label, indexed with the chunk

    @property
    def body(self) -> str:
        return f"{self.context}\n{self.text}" if self.context else self.text


def chunk_markdown(text: str, *, front_matter: bool = False) -> list[Chunk]:
    """Split markdown into chunks with 1-based inclusive line ranges (see module docstring).

    A YAML front matter block is skipped, or with ``front_matter`` indexed as one chunk of its
    lines between the fences (a Claude Code topic file's ``name`` and ``description``). A line
    that is only ``§`` (Hermes' entry separator) ends a chunk."""
    lines = text.split("\n")
    chunks: list[Chunk] = []
    block: list[tuple[int, str]] = []
    context = ""
    fence: str | None = None

    def flush() -> None:
        nonlocal block
        if block:
            chunks.extend(_split_block(block, context))
        block = []

    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        for j in range(1, len(lines)):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                if front_matter:
                    block = [(n + 1, lines[n].rstrip("\r")) for n in range(1, j)]
                    block = [(n, line) for n, line in block if line.strip()]
                    flush()
                break
    for n in range(i, len(lines)):
        raw = lines[n].rstrip("\r")
        line_no = n + 1
        if fence is not None:
            block.append((line_no, raw))
            if raw.strip().startswith(fence):
                fence = None
                flush()
            continue
        m = _FENCE_RE.match(raw)
        if m:
            flush()
            fence = m.group(1)
            block.append((line_no, raw))
            continue
        stripped = raw.strip()
        if not stripped or stripped == "§" or _COMMENT_RE.match(raw) or _RULE_RE.match(raw):
            flush()
            continue
        h = _HEADING_RE.match(raw)
        if h:
            flush()
            title = h.group(1).strip()
            context = "" if _DATE_RE.match(title) else title
            continue
        if _LIST_RE.match(raw):
            if block and len(block) == 1 and _is_label(block[0][1]):
                context = block[0][1].strip().rstrip(":")
                block = []
            flush()
        block.append((line_no, raw))
    flush()
    return chunks


def _is_label(line: str) -> bool:
    s = line.strip()
    return s.endswith(":") and len(s) <= _LABEL_MAX and not _LIST_RE.match(line)


def _split_block(block: list[tuple[int, str]], context: str) -> list[Chunk]:
    out: list[Chunk] = []
    part: list[tuple[int, str]] = []
    size = 0
    for line_no, line in block:
        if part and size + len(line) > MAX_CHUNK_CHARS:
            out.append(_make_chunk(part, context))
            part, size = [], 0
        part.append((line_no, line))
        size += len(line) + 1
    if part:
        out.append(_make_chunk(part, context))
    return out


def _make_chunk(part: list[tuple[int, str]], context: str) -> Chunk:
    return Chunk(part[0][0], part[-1][0], "\n".join(line for _, line in part).strip(), context)
