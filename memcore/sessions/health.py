"""The health report of long-term memory, shown by ``memcore sessions status`` and the Dreams
page and passed to the consolidation prompt.

- MEMORY.md size against its load budget (``[sessions] memory_load_budget`` characters);
- links in MEMORY.md to files that do not exist;
- topic files under ``memory/`` that MEMORY.md never links (daily notes and the generated
  ``memory/summaries/`` are not topic files);
- entries never verified, ranked by how often searches hit them. An entry counts as verified
  when its marker carries ``verified="YYYY-MM-DD"``; hits come from the entry ledger
  (``dream_ledger.access_count``) when it exists, else the report says hits are unknown.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from memcore.errors import WorkspaceError
from memcore.redact import redact
from memcore.sessions.settings import SessionsSettings, sessions_settings
from memcore.workspace import safe_read
from memcore.workspace.config import load_config
from memcore.workspace.core import DAILY_NOTE_RE, Workspace
from memcore.workspace.markdown import parse_marker_attrs

_LINK_RE = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SKIP_SCHEMES = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#|//)", re.I)
MAX_LISTED = 50


def memory_links(text: str) -> list[str]:
    """Local link targets of markdown links (no URLs, no pure anchors), without fragments."""
    out = []
    for m in _LINK_RE.finditer(text):
        target = m.group(1)
        if _SKIP_SCHEMES.match(target):
            continue
        target = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if target:
            out.append(target)
    return out


def _topic_files(ws: Workspace) -> list[Path]:
    files = []
    for p in ws.markdown_files():
        if p == ws.memory_md or DAILY_NOTE_RE.match(p.name):
            continue
        rel = p.relative_to(ws.memory_dir)
        if rel.parts and rel.parts[0] == "summaries":
            continue
        files.append(p)
    return files


def _hits(ws: Workspace, ids: list[str]) -> dict[str, int] | None:
    if not ws.db_path.exists():
        return None
    from memcore.workspace.db import connect

    conn = connect(ws.db_path)
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name='dream_ledger'").fetchone() is None:
            return None
        out: dict[str, int] = {}
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in conn.execute(
                f"SELECT id, access_count FROM dream_ledger WHERE id IN ({marks})", part
            ):
                out[row["id"]] = int(row["access_count"] or 0)
        return out
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def health_report(
    ws: Workspace, *, compact: bool = False, settings: SessionsSettings | None = None
) -> dict[str, Any]:
    """The report as a dict (``compact`` keeps only problems, for the prompt); ``settings``
    replaces ``[sessions]`` of memcore.toml."""
    settings = settings or sessions_settings(load_config(ws))
    try:
        text = (
            safe_read.read_text(ws, ws.memory_md, max_bytes=safe_read.MEMORY_MD_MAX_BYTES)
            if ws.memory_md.is_file()
            else ""
        )
    except WorkspaceError as exc:
        return {"error": str(exc)}
    size = {"chars": len(text), "bytes": len(text.encode("utf-8")), "lines": text.count("\n")}
    budget = settings.memory_load_budget
    links = memory_links(text)
    root = ws.root.resolve()
    missing = sorted({t for t in links if not (root / t).exists()})
    linked = {(root / t).resolve() for t in links}
    unlinked = sorted(ws.rel(p) for p in _topic_files(ws) if p.resolve() not in linked)
    unverified, hits_known = _unverified(ws, text)
    report: dict[str, Any] = {
        "memory_md": {
            **size,
            "budget_chars": budget,
            "over_budget": size["chars"] > budget,
            "percent": round(100 * size["chars"] / budget, 1) if budget else None,
        },
        "missing_links": missing,
        "unlinked_topic_files": unlinked,
        "unverified_entries": unverified[:MAX_LISTED],
        "unverified_count": len(unverified),
        "hits_source": "entry ledger" if hits_known else "unknown (no entry ledger yet)",
    }
    if compact:
        return {
            "memory_md_over_budget": report["memory_md"]["over_budget"],
            "memory_md_chars": size["chars"],
            "budget_chars": budget,
            "missing_links": missing[:10],
            "unlinked_topic_files": unlinked[:10],
            # redacted before it is cut: a cut secret would no longer be recognised
            "unverified_most_hit": [redact(e["text"])[:120] for e in unverified[:5]],
        }
    return report


def _unverified(ws: Workspace, text: str) -> tuple[list[dict[str, Any]], bool]:
    if not text:
        return [], False
    from memcore.workspace.entries import parse

    doc = parse(text)
    rows = []
    for e in doc.entries:
        first = e.raw.splitlines()[0] if e.raw else ""
        attrs = parse_marker_attrs(first) if e.has_marker else None
        if attrs and attrs.get("verified"):
            continue
        rows.append(e)
    hits = _hits(ws, [e.id for e in rows])
    counts = hits or {}
    rows.sort(key=lambda e: (-counts.get(e.id, 0), e.start_line))
    out: list[dict[str, Any]] = [
        {
            "id": e.id,
            "text": redact(e.text),  # the report is shown and served: no secret in it
            "section": e.section,
            "line": e.start_line,
            "hits": counts.get(e.id, 0) if hits is not None else None,
        }
        for e in rows
    ]
    return out, hits is not None


def format_health(report: dict[str, Any]) -> str:
    """Human text of a full report."""
    if "error" in report:
        return f"health: {report['error']}"
    m = report["memory_md"]
    lines = [
        f"MEMORY.md: {m['chars']} of {m['budget_chars']} characters ({m['percent']}%)"
        + (" — over the load budget" if m["over_budget"] else ""),
        f"links to missing files: {len(report['missing_links'])}",
        *[f"  - {t}" for t in report["missing_links"][:10]],
        f"topic files MEMORY.md never links: {len(report['unlinked_topic_files'])}",
        *[f"  - {t}" for t in report["unlinked_topic_files"][:10]],
        f"entries never verified: {report['unverified_count']} (hits from {report['hits_source']})",
        *[
            f"  - [{e['hits'] if e['hits'] is not None else '?'} hits] {e['text'][:90]}"
            for e in report["unverified_entries"][:10]
        ],
    ]
    return "\n".join(lines)
