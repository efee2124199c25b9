"""Recall entries: keys, query hashes, OpenClaw's read normalisation and update rules.

Pure functions over one entry or one search's hits; the store module reads and writes the file.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from memcore.errors import InputError
from memcore.workspace.clock import parse_iso
from memcore.workspace.core import Workspace, is_daily_note_path, normalize_rel_path

MAX_QUERY_HASHES = 32


MAX_SNIPPET_CHARS = 800


def query_hash(query: str) -> str:
    """First 12 hex characters of SHA-1 over the trimmed, lowercased query."""
    return hashlib.sha1(query.strip().lower().encode("utf-8")).hexdigest()[:12]


def normalize_snippet(text: object) -> str:
    """Trim and collapse whitespace runs to one space; cap at MAX_SNIPPET_CHARS."""
    if not isinstance(text, str):
        return ""
    out = " ".join(text.split())  # the same as collapsing \s+ runs, and much faster
    if len(out) > MAX_SNIPPET_CHARS:
        out = out[: MAX_SNIPPET_CHARS - 1].rstrip() + "…"
    return out


def entry_key(path: str, start: int | float, end: int | float, source: str = "memory") -> str:
    return f"{source}:{path}:{start}:{end}"


def coerce_count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(0, math.floor(value))


def _coerce_float(value: Any, lo: float, hi: float | None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return lo
    clamped = max(lo, float(value))
    return min(hi, clamped) if hi is not None else clamped


def normalize_entry(key: str, raw: Any, now_iso: str) -> dict[str, Any] | None:
    """One entry as OpenClaw normalises it on read; None when it must be dropped."""
    if not isinstance(raw, dict):
        return None
    path = raw.get("path")
    if not isinstance(path, str) or not path.strip():
        return None
    start, end = raw.get("startLine"), raw.get("endLine")
    if not _is_int(start) or not _is_int(end):
        return None
    if raw.get("source") != "memory":
        return None
    hashes = raw.get("queryHashes")
    clean_hashes: list[str] = []
    if isinstance(hashes, list):
        seen: set[str] = set()
        for h in hashes:
            if isinstance(h, str) and h and h not in seen:
                seen.add(h)
                clean_hashes.append(h)
        clean_hashes = clean_hashes[-MAX_QUERY_HASHES:]
    out: dict[str, Any] = {
        "key": key,
        "path": normalize_rel_path(path),
        "startLine": max(1, int(start)),
        "endLine": max(1, int(end)),
        "source": "memory",
        "snippet": normalize_snippet(raw.get("snippet")),
        "recallCount": coerce_count(raw.get("recallCount")),
        "totalScore": _coerce_float(raw.get("totalScore"), 0.0, None),
        "maxScore": _coerce_float(raw.get("maxScore"), 0.0, 1.0),
        "firstRecalledAt": _iso_or(raw.get("firstRecalledAt"), now_iso),
        "lastRecalledAt": _iso_or(raw.get("lastRecalledAt"), now_iso),
        "queryHashes": clean_hashes,
    }
    promoted = raw.get("promotedAt")
    if isinstance(promoted, str) and parse_iso(promoted) is not None:
        out["promotedAt"] = promoted
    _keep_extra_fields(raw, out)
    return out


_KNOWN_FIELDS = frozenset(
    [
        "key",
        "path",
        "startLine",
        "endLine",
        "source",
        "snippet",
        "recallCount",
        "totalScore",
        "maxScore",
        "firstRecalledAt",
        "lastRecalledAt",
        "queryHashes",
        "promotedAt",
    ]
)


def _keep_extra_fields(old: dict[str, Any], new: dict[str, Any]) -> None:
    """Carry fields memcore does not use (OpenClaw's later ``recallDays``, ``conceptTags``,
    ``dailyCount``, ``claimHash``…) over unchanged, so rewriting an entry loses nothing."""
    for k, v in old.items():
        if k not in _KNOWN_FIELDS and k not in new:
            new[k] = v


def _is_int(value: object) -> TypeGuard[int | float]:
    """An int, or a float with an integral value (JSON writers differ on ``3`` vs ``3.0``)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def _iso_or(value: Any, fallback: str) -> str:
    return value if isinstance(value, str) and parse_iso(value) is not None else fallback


@dataclass
class Hit:
    """One eligible search result to record."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    key: str


def parse_hits(ws: Workspace, results: Iterable[Any]) -> list[Hit]:
    """Validate result objects and keep the eligible ones (daily notes, source memory).

    Raises InputError naming the first bad field: ``memory record`` gets this from stdin.
    """
    hits: list[Hit] = []
    for i, res in enumerate(results):
        if not isinstance(res, Mapping):
            raise InputError(
                f"result {i} is not an object; "
                "expected {path, startLine, endLine, score, snippet}"
            )
        source = res.get("source", "memory")
        path = res.get("path")
        if not isinstance(path, str) or not path.strip():
            raise InputError(f"result {i}: 'path' must be a non-empty string")
        start = _line_number(i, "startLine", res.get("startLine"))
        end = _line_number(i, "endLine", res.get("endLine"))
        score = res.get("score", 0.0)
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise InputError(f"result {i}: 'score' must be a number, got {score!r}")
        snippet = res.get("snippet", "")
        if snippet is not None and not isinstance(snippet, str):
            raise InputError(f"result {i}: 'snippet' must be a string")
        rel = _workspace_rel(ws, path)
        if source != "memory" or not is_daily_note_path(rel):
            continue
        key = entry_key(rel, _key_num(start), _key_num(end))
        hits.append(
            Hit(
                path=rel,
                start_line=max(1, math.floor(start)),
                end_line=max(1, math.floor(end)),
                score=min(1.0, max(0.0, float(score))),
                snippet=snippet or "",
                key=key,
            )
        )
    return hits


def _line_number(i: int, name: str, value: object) -> int | float:
    """A result's line field: any finite number (a float keeps its fraction in the key)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"result {i}: '{name}' must be a number, got {value!r}")
    return value


def _key_num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _workspace_rel(ws: Workspace, path: str) -> str:
    norm = normalize_rel_path(path)
    if os.path.isabs(norm):
        try:
            return Path(norm).resolve().relative_to(ws.root.resolve()).as_posix()
        except ValueError:
            return norm
    return norm


def apply_hits(
    entries: dict[str, dict[str, Any]], query: str, hits: list[Hit], now_iso: str
) -> None:
    """OpenClaw's update rules for one search call (every hit counts, duplicates too)."""
    qh = query_hash(query)
    for hit in hits:
        old = entries.get(hit.key)
        if not isinstance(old, dict):
            old = {}
        hashes = [h for h in old.get("queryHashes") or [] if isinstance(h, str) and h]
        if qh not in hashes:
            hashes.append(qh)
        snippet = normalize_snippet(hit.snippet) or normalize_snippet(old.get("snippet"))
        entry: dict[str, Any] = {
            "key": hit.key,
            "path": hit.path,
            "startLine": hit.start_line,
            "endLine": hit.end_line,
            "source": "memory",
            "snippet": snippet,
            "recallCount": coerce_count(old.get("recallCount")) + 1,
            "totalScore": _coerce_float(old.get("totalScore"), 0.0, None) + hit.score,
            "maxScore": max(_coerce_float(old.get("maxScore"), 0.0, 1.0), hit.score),
            "firstRecalledAt": _iso_or(old.get("firstRecalledAt"), now_iso),
            "lastRecalledAt": now_iso,
            "queryHashes": hashes[-MAX_QUERY_HASHES:],
        }
        if isinstance(old.get("promotedAt"), str):
            entry["promotedAt"] = old["promotedAt"]
        _keep_extra_fields(old, entry)
        entries[hit.key] = entry
