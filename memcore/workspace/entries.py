"""MEMORY.md as a list of entries with ids, sections, markers and line ranges.

An entry is a top-level bullet (with its indented continuation and nested lines) or a paragraph,
under its section heading. A marker comment directly above it
(``<!-- memcore:entry id="…" key="…" pinned="true" type="decision" scope="project" -->``) gives it
its id and the metadata humans set; an OpenClaw promotion marker gives it the id of its recall
key; otherwise its id is a hash of its normalised text.

Edits are expressed on the parsed document: :func:`render` rebuilds the file from the original
lines, replacing only the spans of changed entries, so every other byte stays as it was.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from memcore.workspace.markdown import (
    ATTR_RE,
    MARKER_RE,
    OPENCLAW_MARKER_RE,
    format_marker,
    promoted_entry_id,
    text_entry_id,
)
from memcore.workspace.openclaw_md import LINEAGE_MARKER_RE, split_bullet

TYPES = (
    "decision",
    "convention",
    "preference",
    "fact",
    "session_state",
    "compact_summary",
    "task_learning",
    "unknown",
)
SCOPES = ("global", "project", "session")
KNOWN_ATTRS = ("id", "key", "pinned", "type", "scope", "created", "confidence")

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET_RE = re.compile(r"^([-*+]|\d{1,9}[.)])(\s+|$)")
_RULE_RE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_COMMENT_LINE_RE = re.compile(r"^\s*<!--.*-->\s*$")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
_TRAILER_RE = re.compile(
    r"\s*\[score=(?P<score>[0-9.]+)\s+recalls=\d+\s+avg=[0-9.]+\s+source=[^\]]*\]\s*$"
)
_WS_RE = re.compile(r"\s+")
_BULLET_PREFIX_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")


@dataclass
class Entry:
    """One entry of MEMORY.md. ``start``/``end`` are 0-based line indexes, end exclusive,
    covering the marker line (if any) and the entry's own lines."""

    id: str
    section: str
    start: int
    end: int
    body_start: int  # first line of the entry itself (after the marker)
    raw: str  # exact text of lines [start, end), marker included
    text: str  # clean one-line text: bullet prefix, promotion trailer and extra spaces removed
    attrs: dict[str, str] = field(default_factory=dict)  # valid marker attributes
    has_marker: bool = False
    id_source: str = "text"  # marker | openclaw | text
    promotion_score: float | None = None
    #: What OpenClaw's newest format says about the entry: ``source`` (path#La-Lb),
    #: ``trigger``, ``importance``, ``project`` (its annotations) and ``lineage`` (the key of
    #: the entry it descends from).
    openclaw: dict[str, str] = field(default_factory=dict)

    @property
    def start_line(self) -> int:
        """1-based first line of the entry body (what search hits point at)."""
        return self.body_start + 1

    @property
    def end_line(self) -> int:
        """1-based last line of the entry."""
        return self.end

    @property
    def pinned(self) -> bool | None:
        v = self.attrs.get("pinned")
        return None if v is None else v == "true"


@dataclass
class Document:
    """A parsed MEMORY.md: the original lines (with their endings) and the entries."""

    source: str
    lines: list[str]
    entries: list[Entry]
    warnings: list[str]

    @property
    def sha1(self) -> str:
        return content_hash(self.source)

    def by_id(self) -> dict[str, Entry]:
        return {e.id: e for e in self.entries}


def content_hash(text: str) -> str:
    """SHA-1 of the file text (compare-and-swap between preview and apply)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def clean_text(body: str) -> tuple[str, float | None]:
    """One-line text of an entry body and the promotion score its trailer carries, if any.
    OpenClaw's ``Source: path#La-Lb`` and ``<!-- trigger/importance/project -->`` annotations
    are metadata, not text (:func:`openclaw_meta`)."""
    text, score = _clean_text(body)
    if "<!--" in text or "Source:" in text:
        text = split_bullet(text)[0]
    return text, score


def openclaw_meta(body: str) -> dict[str, str]:
    """The annotations and source of an entry in OpenClaw's newest format."""
    if "<!--" not in body and "Source:" not in body:
        return {}
    lines = [ln for ln in body.splitlines() if not _COMMENT_LINE_RE.match(ln)]
    _, notes, src = split_bullet(" ".join(ln.strip() for ln in lines))
    out = dict(notes)
    if src is not None:
        out["source"] = f"{src[0]}#L{src[1]}-L{src[2]}"
    return out


def _clean_text(body: str) -> tuple[str, float | None]:
    lines = [ln for ln in body.splitlines() if not _COMMENT_LINE_RE.match(ln)]
    joined = " ".join(ln.strip() for ln in lines)
    joined = _BULLET_PREFIX_RE.sub("", joined, count=1)
    joined = _WS_RE.sub(" ", joined).strip()
    score = None
    m = _TRAILER_RE.search(joined)
    if m:
        try:
            score = float(m.group("score"))
        except ValueError:
            score = None
        joined = joined[: m.start()].rstrip()
    return joined, score


def _valid_attrs(raw: dict[str, str], line_no: int, warnings: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in raw.items():
        where = f"MEMORY.md:{line_no}: marker attribute {k}={v!r}"
        if k not in KNOWN_ATTRS:
            warnings.append(f"{where} is unknown; ignored")
            continue
        ok = True
        if k == "id":
            ok = bool(_ID_RE.match(v))
        elif k == "pinned":
            ok = v.lower() in ("true", "false")
            v = v.lower()
        elif k == "type":
            ok = v.lower() in TYPES
            v = v.lower()
        elif k == "scope":
            ok = v.lower() in SCOPES
            v = v.lower()
        elif k == "confidence":
            try:
                ok = 0.0 <= float(v) <= 1.0
            except ValueError:
                ok = False
        elif k == "created":
            from memcore.workspace.clock import parse_iso

            ok = parse_iso(v) is not None
        if not ok:
            warnings.append(f"{where} is invalid; ignored")
            continue
        out[k] = v
    return out


def parse(source: str) -> Document:
    """Split MEMORY.md text into entries. Never raises on odd markdown; odd markers warn."""
    lines = source.splitlines(keepends=True)
    warnings: list[str] = []
    entries: list[Entry] = []
    for start, i, j, section, pending, lineage in _spans(lines, warnings):
        body = "".join(lines[i:j])
        text, score = clean_text(body)
        attrs: dict[str, str] = {}
        id_source = "text"
        eid = ""
        if pending is not None:
            attrs = dict(pending[1])
            if pending[2] is not None:
                eid, id_source = promoted_entry_id(pending[2]), "openclaw"
                attrs.setdefault("key", pending[2])
            elif "id" in attrs:
                eid, id_source = attrs["id"], "marker"
            elif "key" in attrs:
                eid, id_source = promoted_entry_id(attrs["key"]), "marker"
        if not eid:
            eid = text_entry_id(text)
        oc_meta = openclaw_meta(body)
        if lineage is not None:
            oc_meta["lineage"] = lineage
        entries.append(
            Entry(
                id=eid,
                section=section,
                start=start,
                end=j,
                body_start=i,
                raw="".join(lines[start:j]),
                text=text,
                attrs=attrs,
                has_marker=pending is not None and pending[2] is None,
                id_source=id_source,
                promotion_score=score,
                openclaw=oc_meta,
            )
        )
    _dedupe_ids(entries, warnings)
    return Document(source=source, lines=lines, entries=entries, warnings=warnings)


def count_entries(source: str) -> int:
    """``len(parse(source).entries)``, without building the entries (their text, ids and
    annotations): what ``memory status`` shows of a big MEMORY.md."""
    return sum(1 for _ in _spans(source.splitlines(keepends=True), []))


_Pending = tuple[int, dict[str, str], str | None]  # (line, attrs, openclaw key) of a marker


def _spans(
    lines: list[str], warnings: list[str]
) -> Iterator[tuple[int, int, int, str, _Pending | None, str | None]]:
    """Each entry of ``lines`` as (start line with its marker, body start, end, section, the
    marker above it, the OpenClaw lineage key above it); odd markers warn in ``warnings``."""
    section = ""
    pending: _Pending | None = None
    lineage: str | None = None  # an OpenClaw lineage marker just above
    i = 0
    n = len(lines)
    # Front matter at the very top is not an entry.
    if n and lines[0].rstrip("\r\n") == "---":
        for j in range(1, n):
            if lines[j].rstrip("\r\n") in ("---", "..."):
                i = j + 1
                break
    while i < n:
        line = lines[i].rstrip("\r\n")
        stripped = line.strip()
        if not stripped:
            if pending is not None:
                warnings.append(
                    f"MEMORY.md:{pending[0] + 1}: marker is not directly above an entry; ignored"
                )
                pending = None
            i += 1
            continue
        m_head = _HEADING_RE.match(line)
        if m_head and not line.startswith((" ", "\t")):
            if pending is not None:
                warnings.append(
                    f"MEMORY.md:{pending[0] + 1}: marker is not directly above an entry; ignored"
                )
                pending = None
            section = m_head.group(2).strip()
            i += 1
            continue
        m_marker = MARKER_RE.search(line) if _COMMENT_LINE_RE.match(line) else None
        m_oc = OPENCLAW_MARKER_RE.search(line) if _COMMENT_LINE_RE.match(line) else None
        if m_marker or m_oc:
            if pending is not None:
                warnings.append(
                    f"MEMORY.md:{pending[0] + 1}: marker followed by another marker; ignored"
                )
            if m_marker:
                raw_attrs = dict(ATTR_RE.findall(m_marker.group("attrs")))
                pending = (i, _valid_attrs(raw_attrs, i + 1, warnings), None)
            else:
                pending = (i, {}, m_oc.group("key").strip() if m_oc else None)
            i += 1
            continue
        if _is_broken_marker(line):
            warnings.append(
                f"MEMORY.md:{i + 1}: broken memcore marker (not one closed comment); ignored"
            )
            i += 1
            continue
        if _COMMENT_LINE_RE.match(line) or _RULE_RE.match(line):
            m_lin = LINEAGE_MARKER_RE.search(line)
            if m_lin is not None:
                lineage = m_lin.group("key").strip()
            i += 1
            continue
        # An entry starts here.
        is_bullet = bool(_BULLET_RE.match(line)) and not line.startswith((" ", "\t"))
        j = _entry_end(lines, i, is_bullet)
        yield (pending[0] if pending is not None else i), i, j, section, pending, lineage
        pending = None
        lineage = None
        i = j
    if pending is not None:
        warnings.append(
            f"MEMORY.md:{pending[0] + 1}: marker is not directly above an entry; ignored"
        )


def _is_broken_marker(line: str) -> bool:
    return (
        line.lstrip().startswith("<!--")
        and "memcore:entry" in line
        and not _COMMENT_LINE_RE.match(line)
    )


def _entry_end(lines: list[str], i: int, is_bullet: bool) -> int:
    """Index one past the last line of the entry starting at ``i``."""
    n = len(lines)
    j = i
    in_fence: str | None = None
    while j < n:
        line = lines[j].rstrip("\r\n")
        if j > i and in_fence is None:
            if not line.strip():
                # A blank line ends a paragraph; a bullet continues if indented text follows.
                k = j
                while k < n and not lines[k].strip():
                    k += 1
                if (
                    is_bullet
                    and k < n
                    and lines[k].startswith((" ", "\t"))
                    and not _COMMENT_LINE_RE.match(lines[k])
                ):
                    j = k
                    continue
                return j
            if not line.startswith((" ", "\t")) and (
                _HEADING_RE.match(line)
                or _COMMENT_LINE_RE.match(line)
                or _is_broken_marker(line)
                or _BULLET_RE.match(line)
                or _RULE_RE.match(line)
            ):
                return j
        fence = _FENCE_RE.match(line)
        if fence:
            mark = fence.group(1)[0]
            if in_fence is None:
                in_fence = mark
            elif in_fence == mark:
                in_fence = None
        j += 1
    return j


def _dedupe_ids(entries: list[Entry], warnings: list[str]) -> None:
    seen: dict[str, int] = {}
    for e in entries:
        base = e.id
        if base not in seen:
            seen[base] = 1
            continue
        seen[base] += 1
        new = f"{base}-{seen[base]}"
        while new in seen:
            seen[base] += 1
            new = f"{base}-{seen[base]}"
        seen[new] = 1
        if e.id_source != "text":
            warnings.append(
                f"MEMORY.md:{e.start + 1}: id {base!r} is used by another entry too; "
                f"this one is treated as {new!r}"
            )
        e.id = new


# -- rendering edits ----------------------------------------------------------------------


def entry_raw(body: str, attrs: Mapping[str, str] | None, eol: str = "\n") -> str:
    """Raw text of an entry: its marker line (when ``attrs``) and its body, ending in ``eol``
    (pass the file's line ending, so a CRLF file stays CRLF)."""
    if not body.endswith("\n"):
        body += eol
    if not attrs:
        return body
    return format_marker(attrs) + eol + body


def eol_of(entry: Entry) -> str:
    """The line ending the entry's lines use."""
    return "\r\n" if entry.raw.split("\n", 1)[0].endswith("\r") else "\n"


def body_of(entry: Entry) -> str:
    """The entry's own lines without the marker line."""
    if entry.body_start == entry.start:
        return entry.raw
    first_nl = entry.raw.find("\n")
    return entry.raw[first_nl + 1 :]


def marker_attrs_for(entry: Entry, **changes: str | None) -> dict[str, str]:
    """Marker attributes of ``entry`` with ``changes`` applied (None removes a key); ``id`` first.

    An entry that gets a marker keeps its current id, so its ledger metadata stays attached.
    """
    attrs: dict[str, str] = {"id": entry.id}
    for k, v in entry.attrs.items():
        if k != "id":
            attrs[k] = v
    for k, new in changes.items():
        if new is None:
            attrs.pop(k, None)
        else:
            attrs[k] = new
    return attrs


def render(doc: Document, replace: Mapping[int, str | None]) -> str:
    """The file with entries (by index in ``doc.entries``) replaced by new raw text or removed.

    Lines outside changed entries are kept byte for byte. Removing an entry that stood between
    blank lines also drops one of the two blank lines, so no double gap is left behind.
    """
    out: list[str] = []
    pos = 0
    lines = doc.lines
    skip_blank_at = -1
    for idx in sorted(replace):
        e = doc.entries[idx]
        out.extend(lines[pos : e.start])
        new = replace[idx]
        if new is not None:
            if e.end == len(lines) and not lines[-1].endswith("\n") and new.endswith("\n"):
                new = new[:-1]  # keep a file that did not end in a newline that way
            out.append(new)
        else:
            before_blank = e.start == 0 or not lines[e.start - 1].strip()
            if before_blank and e.end < len(lines) and not lines[e.end].strip():
                skip_blank_at = e.end
        pos = e.end
        if skip_blank_at == pos:
            pos += 1
            skip_blank_at = -1
    out.extend(lines[pos:])
    return "".join(out)


def insert_at(source: str, line_index: int, raw: str) -> str:
    """``source`` with ``raw`` inserted before 0-based line ``line_index`` (clamped)."""
    lines = source.splitlines(keepends=True)
    line_index = max(0, min(line_index, len(lines)))
    if line_index == len(lines) and lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if not raw.endswith("\n"):
        raw += "\n"
    return "".join([*lines[:line_index], raw, *lines[line_index:]])


def entries_for_lines(doc: Document, start_line: int, end_line: int) -> list[Entry]:
    """Entries overlapping the 1-based inclusive line range (what a search hit points at)."""
    lo, hi = start_line - 1, end_line  # to 0-based half-open
    return [e for e in doc.entries if e.start < hi and e.end > lo]
