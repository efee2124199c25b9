"""Recall entries: keys, query hashes, OpenClaw's read normalisation and update rules.

Pure functions over one entry or one search's hits; the store module reads and writes the file.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeGuard

from memcore.errors import InputError, MemcoreError
from memcore.redact import redact
from memcore.workspace.clock import parse_iso
from memcore.workspace.core import Workspace, is_daily_note_path, normalize_rel_path

MAX_QUERY_HASHES = 32
#: Largest line number or count memcore keeps: SQLite's INTEGER range.
MAX_INT = 2**63 - 1
#: Counts are clamped to the largest integer a JavaScript number holds exactly (OpenClaw).
MAX_COUNT = 2**53 - 1

#: What issued a recorded search. Only ``interactive`` ones count toward the query-diversity
#: gate (``userQueryHashes``); every kind counts as a recall.
ORIGINS = ("interactive", "agent", "schedule", "backfill")


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


def clean_snippet(text: object) -> str:
    """The snippet memcore stores: normalised, then secrets replaced by ``[REDACTED:<kind>]``."""
    out = normalize_snippet(text)
    return _redacted(out) if out else out


@functools.lru_cache(maxsize=4096)
def _redacted(text: str) -> str:
    """``redact`` remembered per text: the same chunks come back in search after search."""
    return redact(text)


def entry_key(path: str, start: int | float, end: int | float, source: str = "memory") -> str:
    return f"{source}:{path}:{start}:{end}"


def coerce_count(value: Any) -> int:
    """A non-negative whole count; huge values are clamped to MAX_COUNT."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    if value >= MAX_COUNT:
        return MAX_COUNT
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
    if not _is_line(start) or not _is_line(end):
        return None
    if raw.get("source") != "memory":
        return None
    clean_hashes = _clean_hashes(raw.get("queryHashes"))
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
    if isinstance(raw.get("userQueryHashes"), list):
        out["userQueryHashes"] = _clean_hashes(raw["userQueryHashes"])
    if isinstance(raw.get("promotedAt"), str):  # kept as written; only a non-empty one counts
        out["promotedAt"] = raw["promotedAt"]
    _keep_extra_fields(raw, out)
    return out


def is_promoted(entry: Mapping[str, Any]) -> bool:
    """OpenClaw's rule: an entry is promoted when ``promotedAt`` is a non-empty string (a
    number, ``null`` or ``""`` is not a promotion)."""
    value = entry.get("promotedAt")
    return isinstance(value, str) and bool(value)


_JS_INT_LIMIT = 2**63  # orjson writes integers up to 64 bits; larger floats stay floats


def js_numbers(value: Any) -> Any:
    """``value`` with every integral float as an int, the way ``JSON.stringify`` prints it
    (``1``, ``3``, ``-0`` as ``0``); other values unchanged (orjson already prints
    the shortest round-trip digits and ``1e-7`` / ``1e+21`` as JavaScript does)."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < _JS_INT_LIMIT:
            return int(Decimal(repr(value)))
        return value
    if isinstance(value, dict):
        if not any(isinstance(v, float | dict | list) for v in value.values()):
            return value
        return {k: js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        if not any(isinstance(v, float | dict | list) for v in value):
            return value
        return [js_numbers(v) for v in value]
    return value


def _clean_hashes(hashes: Any) -> list[str]:
    clean: list[str] = []
    if isinstance(hashes, list):
        seen: set[str] = set()
        for h in hashes:
            if isinstance(h, str) and h and h not in seen:
                seen.add(h)
                clean.append(h)
    return clean[-MAX_QUERY_HASHES:]


def invalid_reason(raw: Any) -> str:
    """Why normalize_entry drops an entry, in a few words (for repair reports)."""
    if not isinstance(raw, dict):
        return "not an object"
    path = raw.get("path")
    if not isinstance(path, str) or not path.strip():
        return "no path"
    for name in ("startLine", "endLine"):
        v = raw.get(name)
        if _is_int(v) and not _is_line(v):
            return "line number beyond 2^63"
        if not _is_int(v):
            return f"{name} not a whole number"
    if raw.get("source") != "memory":
        return "source is not memory"
    return "invalid"


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
        "userQueryHashes",
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


def _is_line(value: object) -> TypeGuard[int | float]:
    """A whole number SQLite can hold (values below 1 are clamped to line 1 by the caller)."""
    return _is_int(value) and -MAX_INT <= value <= MAX_INT


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

    Raises InputError naming the first bad field: ``memory record`` gets this from stdin. A
    path must name a file inside the workspace (no ``..``, no absolute path elsewhere, no
    symlink leading out); line numbers must fit SQLite's integers. Hits on other files of the
    workspace (MEMORY.md, topic files) are left out, as is text that is not the user's
    knowledge (OpenClaw's dreaming output, memcore's own, recalled context).
    """
    hits: list[Hit] = []
    real_root: str | None = None  # resolved once for all the results
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
        if source != "memory":
            continue
        if real_root is None:
            real_root = os.path.realpath(ws.root.absolute())
        rel = workspace_rel(ws, path, f"result {i}", real_root)
        if not is_daily_note_path(rel):
            continue
        text = clean_snippet(snippet or "")
        if _not_knowledge(ws, rel, text, max(1, math.floor(start)), max(1, math.floor(end))):
            continue
        key = entry_key(rel, _key_num(start), _key_num(end))
        hits.append(
            Hit(
                path=rel,
                start_line=max(1, math.floor(start)),
                end_line=max(1, math.floor(end)),
                score=min(1.0, max(0.0, float(score))),
                snippet=text,
                key=key,
            )
        )
    return hits


def _line_number(i: int, name: str, value: object) -> int | float:
    """A result's line field: any finite number (a float keeps its fraction in the key)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"result {i}: '{name}' must be a number, got {value!r}")
    if not -MAX_INT <= value <= MAX_INT:
        raise InputError(
            f"result {i}: '{name}' = {value!r} is out of range; "
            f"allowed: a line number from 1 to {MAX_INT}"
        )
    return value


def _not_knowledge(ws: Workspace, rel: str, snippet: str, start: int, end: int) -> bool:
    """True when the hit is OpenClaw's or memcore's own output or recalled context."""
    from memcore.workspace.core import read_regular_bytes
    from memcore.workspace.provenance import range_reason, snippet_reason

    if snippet and snippet_reason(snippet) is not None:
        return True
    path = ws.root / rel
    try:
        st = os.stat(path)
    except OSError:
        return False  # the note is gone or unreadable: promotion re-checks it
    key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, start, end)
    known = _range_verdicts.get(key)
    if known is not None:
        return known
    try:
        text = read_regular_bytes(path, 4 * 1024 * 1024).decode("utf-8", "replace")
    except (OSError, MemcoreError):
        return False
    verdict = range_reason(text, start, end) is not None
    if len(_range_verdicts) >= 4096:
        _range_verdicts.clear()
    _range_verdicts[key] = verdict
    return verdict


#: (path, device, inode, size, mtime_ns, start, end) -> whether those lines are not knowledge:
#: a note unchanged since is not read again for the same lines (search after search).
_range_verdicts: dict[tuple[str, int, int, int, int, int, int], bool] = {}


def _key_num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def workspace_rel(
    ws: Workspace, path: str, what: str = "path", real_root: str | None = None
) -> str:
    """``path`` as a workspace-relative POSIX path; InputError when it is not inside the
    workspace (``..``, an absolute path elsewhere, a symlink resolving outside, a NUL).
    ``real_root`` is the workspace folder's ``os.path.realpath`` when the caller has it (many
    paths checked at once)."""
    allowed = f"a daily note memory/[<sub>/]YYYY-MM-DD[-HHMM].md inside {ws.root}"
    if "\x00" in path or any(ord(ch) < 32 for ch in path):
        raise InputError(f"{what}: 'path' {path!r} holds control characters; allowed: {allowed}")
    norm = normalize_rel_path(path)
    root = ws.root.absolute()
    if os.path.isabs(norm):
        full = Path(os.path.normpath(norm))
        try:
            rel = full.relative_to(root).as_posix()
        except ValueError:
            try:
                rel = full.resolve().relative_to(root.resolve()).as_posix()
            except (ValueError, OSError):
                raise InputError(
                    f"{what}: 'path' {path!r} is outside the workspace; allowed: {allowed}"
                ) from None
    else:
        if ".." in norm.split("/"):
            raise InputError(f"{what}: 'path' {path!r} leaves the workspace; allowed: {allowed}")
        rel = norm
    # os.path on strings: a search records a few hits per call, and Path.resolve cost more
    # than the rest of checking them
    if real_root is None:
        real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(root, rel))
    try:
        os.stat(real)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            real = ""  # a symlink loop leads nowhere inside
    if not (real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)):
        raise InputError(
            f"{what}: 'path' {path!r} resolves outside the workspace (a symlink?); "
            f"allowed: {allowed}"
        )
    return rel


def apply_hits(
    entries: dict[str, dict[str, Any]],
    query: str,
    hits: list[Hit],
    now_iso: str,
    origin: str = "interactive",
) -> None:
    """OpenClaw's update rules for one search call (every hit counts, duplicates too)."""
    apply_hashed(entries, query_hash(query), hits, now_iso, origin)


def apply_hashed(
    entries: dict[str, dict[str, Any]],
    qh: str,
    hits: Iterable[Hit],
    now_iso: str,
    origin: str = "interactive",
) -> None:
    """apply_hits for a query already hashed (the recall log keeps only the hash).

    ``userQueryHashes`` gains the hash only for interactive searches; an entry that never had
    the field (OpenClaw wrote it) starts it from its ``queryHashes``, which OpenClaw counted."""
    for hit in hits:
        old = entries.get(hit.key)
        if not isinstance(old, dict):
            old = {}
        hashes = _clean_hashes(old.get("queryHashes"))
        user = old.get("userQueryHashes")
        user_hashes = _clean_hashes(user) if isinstance(user, list) else list(hashes)
        if qh not in hashes:
            hashes.append(qh)
        if origin == "interactive" and qh not in user_hashes:
            user_hashes.append(qh)
        snippet = clean_snippet(hit.snippet) or clean_snippet(old.get("snippet"))
        entry: dict[str, Any] = {
            "key": hit.key,
            "path": hit.path,
            "startLine": hit.start_line,
            "endLine": hit.end_line,
            "source": "memory",
            "snippet": snippet,
            "recallCount": min(MAX_COUNT, coerce_count(old.get("recallCount")) + 1),
            "totalScore": _coerce_float(old.get("totalScore"), 0.0, None) + hit.score,
            "maxScore": max(_coerce_float(old.get("maxScore"), 0.0, 1.0), hit.score),
            "firstRecalledAt": _iso_or(old.get("firstRecalledAt"), now_iso),
            "lastRecalledAt": now_iso,
            "queryHashes": hashes[-MAX_QUERY_HASHES:],
            "userQueryHashes": user_hashes[-MAX_QUERY_HASHES:],
        }
        if isinstance(old.get("promotedAt"), str):
            entry["promotedAt"] = old["promotedAt"]
        _keep_extra_fields(old, entry)
        entries[hit.key] = entry


def unique_user_queries(entry: Mapping[str, Any]) -> int:
    """Distinct queries that count toward the diversity gate: ``userQueryHashes`` when the
    entry has the field (memcore wrote it), else ``queryHashes`` (OpenClaw's entries)."""
    user = entry.get("userQueryHashes")
    if isinstance(user, list):
        return len(user)
    return len(entry.get("queryHashes") or ())
