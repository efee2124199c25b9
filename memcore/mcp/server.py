"""The MCP server (``memcore mcp``): memory tools for agents over stdio, official ``mcp`` SDK.

Tools: ``memory_search`` (search and record recalls, as the CLI does), ``memory_record`` (record
the hits of the agent's own search, as ``memory record``), ``memory_get`` (a line
range of a markdown file inside the workspace; anything else is refused), ``dreaming`` (the
``/dreaming`` chat command), ``promote_preview``, ``recall`` (short memories of sessions), and
``dream_pending`` / ``dream_decide`` (the agent judges consolidation: :mod:`memcore.dream.agent`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, ParamSpec, TypeVar

from memcore.errors import InputError, MemcoreError
from memcore.workspace.clock import utcnow
from memcore.workspace.core import Workspace, read_text_checked
from memcore.workspace.jsonkeys import camel_keys

MAX_LINES = 500
DEFAULT_LINES = 200
_DRIVE_RE = re.compile(r"^[A-Za-z]:")
P = ParamSpec("P")
R = TypeVar("R")


def resolve_inside(ws: Workspace, path: str) -> Path:
    """The markdown file ``path`` names inside the workspace; InputError for anything else.

    Refused: empty or NUL-containing paths, absolute paths (POSIX, drive letters, UNC), any
    ``..`` part, paths that resolve outside the workspace (symlinks included), memcore's own
    ``memory/.dreams/`` and files that are not markdown.
    """
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise InputError(
            "path must be a non-empty workspace-relative path like memory/2026-04-01.md"
        )
    norm = path.strip().replace("\\", "/")
    pure = PurePosixPath(norm)
    if pure.is_absolute() or _DRIVE_RE.match(norm) or norm.startswith("//"):
        raise InputError(f"absolute path {path!r} refused: give a path relative to the workspace")
    if ".." in pure.parts:
        raise InputError(f"path {path!r} refused: '..' is not allowed")
    root = ws.root.resolve()
    full = (root / pure).resolve()
    if not full.is_relative_to(root):
        raise InputError(f"path {path!r} refused: it leads outside the workspace")
    if full.is_relative_to(ws.dreams_dir.resolve()):
        raise InputError(f"path {path!r} refused: memory/.dreams/ holds memcore's own data")
    if full.suffix.lower() != ".md":
        raise InputError(f"path {path!r} refused: only markdown (.md) files can be read")
    if not full.is_file():
        raise InputError(f"no file {pure.as_posix()} in the workspace")
    return full


def read_lines(
    ws: Workspace, path: str, start_line: int = 1, end_line: int | None = None
) -> dict[str, Any]:
    """Lines ``start_line``..``end_line`` (1-based, inclusive) of a workspace markdown file."""
    full = resolve_inside(ws, path)
    if start_line < 1:
        raise InputError(f"start_line must be 1 or more, got {start_line}")
    if end_line is not None and end_line < start_line:
        raise InputError(f"end_line ({end_line}) must not be before start_line ({start_line})")
    lines = read_text_checked(full).splitlines()
    last = start_line + DEFAULT_LINES - 1 if end_line is None else end_line
    last = min(last, start_line + MAX_LINES - 1, len(lines))
    chosen = lines[start_line - 1 : last] if start_line <= len(lines) else []
    return {
        "path": ws.rel(full),
        "startLine": start_line,
        "endLine": start_line + len(chosen) - 1 if chosen else None,
        "totalLines": len(lines),
        "truncated": end_line is not None and last < end_line,
        "text": "\n".join(chosen),
    }


def build_server(ws: Workspace) -> Any:
    """The MCPServer with memcore's tools bound to ``ws``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from memcore import __version__

    server = MCPServer(
        name="memcore",
        version=__version__,
        instructions=(
            "Long-term and daily memory of this agent's workspace. Use memory_search before "
            "answering questions about earlier work; read exact lines with memory_get."
        ),
        log_level="WARNING",
    )

    def guarded(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """``fn``'s answer with camelCase keys, or its domain error as a tool error."""
        try:
            return camel_keys(fn(*args, **kwargs))
        except MemcoreError as exc:
            # The class and its HTTP status tell an agent whether to fix the call (4xx), try
            # again later (409: a run holds the workspace) or give up (5xx).
            raise ToolError(f"{type(exc).__name__} ({exc.http_status}): {exc}") from None

    @server.tool()
    def memory_search(query: str, limit: int = 10, origin: str = "interactive") -> dict[str, Any]:
        """Search MEMORY.md and the daily notes; hits on daily notes are recorded as recalls
        (they feed promotion into long-term memory). Returns path, line range, score, snippet.
        ``origin``: interactive (answering someone, the default), agent (a search of your own,
        e.g. automatic recall), schedule or backfill; only interactive searches count toward
        the distinct-queries gate."""
        from memcore.recall.entries import ORIGINS
        from memcore.search.query import search

        if not query.strip():
            raise ToolError("query must not be empty")
        if not 1 <= limit <= 100:
            raise ToolError("limit must be from 1 to 100")
        if origin not in ORIGINS:
            raise ToolError(f"origin must be one of {', '.join(ORIGINS)}")
        res = guarded(search, ws, query, limit=limit, now=utcnow(), origin=origin)
        out = res.to_json()
        out["recorded"] = res.recorded
        if res.record_error:
            out["recordError"] = res.record_error
        return out

    @server.tool()
    def memory_record(
        query: str, results: list[dict[str, Any]], origin: str = "interactive"
    ) -> dict[str, Any]:
        """Record hits of your own memory search as recalls (as ``memcore memory record``):
        results are {path, startLine, endLine, score, snippet}; only daily notes
        memory/YYYY-MM-DD.md inside this workspace are recorded, a path outside is refused."""
        from memcore.recall.entries import ORIGINS
        from memcore.recall.store import record_recalls

        if not query.strip():
            raise ToolError("query must not be empty")
        if origin not in ORIGINS:
            raise ToolError(f"origin must be one of {', '.join(ORIGINS)}")
        res = guarded(record_recalls, ws, query, results, now=utcnow(), origin=origin)
        out: dict[str, Any] = {"recorded": res.recorded, "keys": res.keys}
        notes = [*res.notices, *([res.fold_error] if res.fold_error else [])]
        if notes:
            out["warnings"] = notes
        return out

    @server.tool()
    def memory_get(path: str, start_line: int = 1, end_line: int | None = None) -> dict[str, Any]:
        """Read lines of a markdown file inside the workspace (e.g. memory/2026-04-01.md,
        MEMORY.md). Lines are 1-based and inclusive; at most 500 lines per call."""
        return guarded(read_lines, ws, path, start_line, end_line)

    @server.tool()
    def dreaming(command: str = "status") -> str:
        """The /dreaming chat command: status, help, or a mode (off, core, rem, deep)."""
        from memcore.promotion.commands import handle_dreaming

        return guarded(handle_dreaming, ws, f"/dreaming {command}")

    @server.tool()
    def promote_preview(limit: int | None = None) -> dict[str, Any]:
        """Which recalled snippets would be promoted into MEMORY.md now (writes nothing)."""
        from memcore.promotion import promote

        if limit is not None and not 0 <= limit <= 10_000:
            raise ToolError("limit must be from 0 to 10000")
        res = guarded(promote.preview, ws, now=utcnow(), limit=limit)
        return res.to_json()

    @server.tool()
    def dream_pending(cursor: str | None = None, limit: int = 20) -> dict[str, Any]:
        """What waits for a consolidation decision, a page at a time: review items (conflicts,
        merges) and candidate pairs of MEMORY.md entries, with both texts, metadata, memcore's
        analysis and verdict, and what may be answered (``allowed``). Pass ``next`` as
        ``cursor`` for the next page."""
        from memcore.dream import agent

        return guarded(agent.pending, ws, now=utcnow(), cursor=cursor, limit=limit)

    @server.tool()
    def dream_decide(decisions: list[dict[str, Any]]) -> dict[str, Any]:
        """Decide items from dream_pending: ``{"item": "pair:...", "verdict": "same" |
        "supersedes" | "conflict" | "related" | "unrelated", "newer": "a" | "b",
        "merged_text": "..."}`` or ``{"item": "review:N", "choice": "a" | "b" | "both" |
        "apply" | "reject", "merged_text": "..."}``. memcore checks each (every detail kept,
        scopes never mixed, pinned entries never removed) and applies the accepted ones as one
        undoable run; the others come back under ``skipped`` with the reason."""
        from memcore.dream import agent

        return guarded(agent.decide, ws, decisions, now=utcnow())

    from memcore.sessions.recall_api import recall

    @server.tool(name="recall")
    def recall_tool(
        memory: str,
        project: str | None = None,
        session: str | None = None,
        reference: str | None = None,
        version: int | None = None,
        cursor: str | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> dict[str, Any]:
        """Read short memories of finished sessions: memory = global | projects | project |
        sessions | session | sources. ``start``/``end`` select a session's messages; a page's
        ``nextCursor`` is the ``cursor`` of the next."""
        args: dict[str, Any] = {"memory": memory}
        extra = {
            "project": project,
            "session": session,
            "reference": reference,
            "version": version,
            "cursor": cursor,
            "from": start,
            "to": end,
        }
        args.update({k: v for k, v in extra.items() if v is not None})
        return guarded(recall, ws, args)

    return server


def run_stdio(ws: Workspace) -> None:
    """Serve ``ws`` over stdio until the client closes the pipe."""
    build_server(ws).run("stdio")
