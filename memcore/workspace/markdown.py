"""Markdown structure memcore relies on: marker comments, chunks and long-term entries.

A marker is an HTML comment on its own line just above an entry:

    <!-- memcore:entry id="3f2a9c1b7d4e" key="memory:memory/2026-04-01.md:10:12" -->

``id`` names the entry; ``key`` names the recall-store key it was promoted from; humans may add
``pinned="true"``, ``type="decision"``, ``scope="project"``. OpenClaw's
``<!-- openclaw-memory-promotion:<key> -->`` markers are recognised too.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

MARKER_RE = re.compile(r"<!--\s*memcore:entry\b(?P<attrs>[^>]*?)-->")
OPENCLAW_MARKER_RE = re.compile(r"<!--\s*openclaw-memory-promotion:(?P<key>.+?)\s*-->")
ATTR_RE = re.compile(r'([A-Za-z_][\w-]*)="([^"]*)"')


def format_marker(attrs: Mapping[str, str]) -> str:
    """``<!-- memcore:entry a="1" b="2" -->`` with attributes in the given order."""
    body = " ".join(f'{k}="{_escape(str(v))}"' for k, v in attrs.items())
    return f"<!-- memcore:entry {body} -->"


def _escape(value: str) -> str:
    return value.replace('"', "'").replace("-->", "--&gt;")


def parse_marker_attrs(line: str) -> dict[str, str] | None:
    """Attributes of a memcore marker line, or None when the line holds no marker."""
    m = MARKER_RE.search(line)
    if m is None:
        return None
    return dict(ATTR_RE.findall(m.group("attrs")))


def marked_recall_keys(text: str) -> set[str]:
    """Every recall key already named by a marker in ``text`` (memcore's or OpenClaw's)."""
    keys = {m.group("key").strip() for m in OPENCLAW_MARKER_RE.finditer(text)}
    for m in MARKER_RE.finditer(text):
        attrs = dict(ATTR_RE.findall(m.group("attrs")))
        if attrs.get("key"):
            keys.add(attrs["key"])
    return keys


def promoted_entry_id(recall_key: str) -> str:
    """Stable id of an entry promoted from ``recall_key`` (so reruns name the same entry)."""
    return hashlib.sha1(recall_key.encode("utf-8")).hexdigest()[:12]


_NORM_RE = re.compile(r"\s+")


def text_entry_id(text: str) -> str:
    """Id of a hand-written entry: hash of its whitespace-normalised, lowercased text."""
    norm = _NORM_RE.sub(" ", text).strip().lower()
    return hashlib.sha1(norm.encode("utf-8")).hexdigest()[:12]
