"""What a model answer may not put into a short memory, beyond secrets (the prompt forbids
all of it): PR numbers and commit hashes are stripped from an entry, raw transcript quotes
and temporary progress drop the entry. Every change comes back with its reason, so a run
report can say what it removed.

An entry is a bullet line and the lines indented under it. A raw quote is an entry that
carries memcore's transcript markup (``[12 user]``, ``[tool result]``, ``[tool call …]``),
a role prefix (``User:``), a block quote or code fence, or at least ``QUOTE_CHARS``
characters copied verbatim from tool output the call was sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

QUOTE_CHARS = 160
_STEP = 20

_HASH = r"(?<![\w./#-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])"  # not in a uuid
_PR_PATTERNS = [
    re.compile(r"https?://\S+/(?:pull|pulls|merge_requests)/\d+\S*", re.I),
    re.compile(r"\b(?:PR|MR|pull request|merge request)\s*(?:#|!|no\.?\s*)?\d+\b", re.I),
    re.compile(r"(?<![\w&#/])[#!]\d{2,}\b"),
]
_HASH_PATTERNS = [
    re.compile(r"\b(?:commit|sha|rev(?:ision)?)\s+" + _HASH, re.I),
    re.compile(_HASH, re.I),
]
_PROGRESS = re.compile(
    r"\b(?:wip|work in progress|in progress|currently (?:running|working|fixing|testing)|"
    r"still (?:running|working|waiting|failing|pending)|almost (?:done|finished|there)|"
    r"(?:will|to) report back|half[- ]done|todo (?:for )?today|next step(?:s)? (?:is|are)|"
    r"(?:is|are) (?:now )?being (?:fixed|reviewed|tested|deployed)|"
    r"waiting (?:for|on) (?:ci|review|the build|approval)|\d{1,3}\s?% (?:done|complete))\b",
    re.I,
)
_MARKUP = re.compile(
    r"\[\d+\s+(?:user|assistant|tool|system)\]|\[tool (?:result|call)\b|"
    r"^\s*(?:[-*]\s+)?(?:user|assistant|human|system|tool)\s*:|^\s*>|```",
    re.I | re.M,
)
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;]?\s*\)|\[\s*\]")


@dataclass(frozen=True)
class Change:
    """One thing removed from an answer: why, and the text it touched (redacted already)."""

    reason: str
    text: str


def check_memory(memory: str, raw_sources: list[str]) -> tuple[str, list[Change]]:
    """``memory`` without forbidden content, and what was removed. ``raw_sources`` are the
    tool-output texts the call was sent, for spotting verbatim quotes."""
    out: list[str] = []
    changes: list[Change] = []
    for entry in _entries(memory):
        kept = _check_entry(entry, raw_sources, changes)
        if kept:
            out.append(kept)
    return "\n".join(out), changes


def _entries(memory: str) -> list[str]:
    entries: list[str] = []
    for line in memory.splitlines():
        if not line.strip():
            continue
        if entries and line[:1].isspace() and not line.lstrip().startswith(("- ", "* ")):
            entries[-1] += "\n" + line
        else:
            entries.append(line)
    return entries


def _check_entry(entry: str, raw_sources: list[str], changes: list[Change]) -> str | None:
    short = " ".join(entry.split())[:120]
    if _MARKUP.search(entry) or _copied(entry, raw_sources):
        changes.append(Change("raw transcript or tool output quoted; entry dropped", short))
        return None
    if _PROGRESS.search(entry):
        changes.append(Change("temporary progress or status; entry dropped", short))
        return None
    text = entry
    for reason, patterns in (
        ("PR number stripped", _PR_PATTERNS),
        ("commit hash stripped", _HASH_PATTERNS),
    ):
        new = text
        for pattern in patterns:
            new = pattern.sub("", new)
        if new != text:
            changes.append(Change(reason, short))
            text = new
    if text != entry:
        text = _tidy(text)
        if len(re.findall(r"[A-Za-z]{2,}", text)) < 3:
            changes.append(Change("nothing left after stripping; entry dropped", short))
            return None
    return text


def _tidy(text: str) -> str:
    text = _EMPTY_BRACKETS.sub("", text)
    text = re.sub(r"\b(?:see|in|via|from|at)\s+(?=[,.;)]|\s*$|\s+for\b)", "", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"\s+([,.;:)])", r"\1", text)
    text = re.sub(r",\s*(?=[.;)]|$)", "", text)
    return text.rstrip()


def _copied(entry: str, raw_sources: list[str]) -> bool:
    body = entry.lstrip("-* ").strip()
    if len(body) < QUOTE_CHARS or not raw_sources:
        return False
    for start in range(0, len(body) - QUOTE_CHARS + 1, _STEP):
        window = body[start : start + QUOTE_CHARS]
        if any(window in src for src in raw_sources):
            return True
    return False
