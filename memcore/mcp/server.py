"""The MCP server (``memcore mcp``): memory tools for agents over stdio, official ``mcp`` SDK.

Tools: ``memory_search`` (search and record recalls, as the CLI does), ``memory_record`` (record
the hits of the agent's own search, as ``memory record``), ``memory_get`` (a line
range of a markdown file inside the workspace; anything else is refused), ``dreaming`` (the
``/dreaming`` chat command), ``promote_preview``, ``context`` (the memory block to load, as
``memcore context``), ``recall`` (short memories of sessions; the CLI's argument names), and
``dream_pending`` / ``dream_decide`` (the agent judges consolidation: :mod:`memcore.dream.agent`).
Every argument carries a description in the tool's input schema, so a model can call the tools
without reading the docs.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

from pydantic import Field

from memcore.errors import InputError, MemcoreError
from memcore.mcp.stdio import INSTRUCTIONS
from memcore.workspace import safe_read
from memcore.workspace.clock import utcnow
from memcore.workspace.core import Workspace
from memcore.workspace.jsonkeys import camel_keys

if TYPE_CHECKING:
    from memcore.search.connections import IndexPool

MAX_LINES = 500
DEFAULT_LINES = 200
_DRIVE_RE = re.compile(r"^[A-Za-z]:")
P = ParamSpec("P")
R = TypeVar("R")


def _arg(description: str, **kw: Any) -> Any:
    """An argument's description (and alias) in the tool's input schema."""
    return Field(description=description, **kw)


def _aliased(fn: Callable[..., R], aliases: dict[str, str]) -> Callable[..., R]:
    """``fn`` taking arguments by their schema aliases (``from`` for ``from_``): the SDK
    passes aliased names through unchanged, and a keyword cannot name a Python parameter."""

    @functools.wraps(fn)
    def call(**kwargs: Any) -> R:
        for alias, name in aliases.items():
            if alias in kwargs:
                kwargs[name] = kwargs.pop(alias)
        return fn(**kwargs)

    call.__signature__ = inspect.signature(fn, eval_str=True)  # type: ignore[attr-defined]
    return call


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
    if pure.parts[:2] == ("memory", ".dreams"):
        raise InputError(f"path {path!r} refused: memory/.dreams/ holds memcore's own data")
    if pure.suffix.lower() != ".md":
        raise InputError(f"path {path!r} refused: only markdown (.md) files can be read")
    root = ws.root.resolve()
    if not os.path.lexists(root / pure):
        raise InputError(f"no file {pure.as_posix()} in the workspace")
    try:  # the one gate of what may be read; memory_get pages, so no size cap here
        safe_read.check(ws, root / pure, max_bytes=1 << 62)
    except safe_read.Unreadable as exc:
        raise InputError(f"path {path!r} refused: {exc.reason}") from None
    except OSError:
        raise InputError(f"no file {pure.as_posix()} in the workspace") from None
    full = (root / pure).resolve()
    if not full.is_relative_to(root):
        raise InputError(f"path {path!r} refused: it leads outside the workspace")
    if full.is_relative_to(ws.dreams_dir.resolve()):
        raise InputError(f"path {path!r} refused: memory/.dreams/ holds memcore's own data")
    if full.suffix.lower() != ".md":
        raise InputError(f"path {path!r} refused: only markdown (.md) files can be read")
    return full


DEFAULT_MAX_BYTES = 64 * 1024
MAX_MAX_BYTES = 1024 * 1024
_SCAN_CHUNK = 1 << 20
_CURSOR_RE = re.compile(r"^(\d{1,19})\.(\d{1,19})$")


def _parse_cursor(cursor: str) -> tuple[int, int]:
    m = _CURSOR_RE.match(cursor) if isinstance(cursor, str) and cursor.isascii() else None
    if m is None or int(m.group(2)) < 1:
        raise InputError(f"cursor {cursor!r} is not one memory_get returned (nextCursor)")
    return int(m.group(1)), int(m.group(2))


def _offset_of_line(ws: Workspace, full: Path, line: int) -> int | None:
    """Byte offset where 1-based ``line`` starts, scanning a chunk at a time (None: past EOF)."""
    from memcore.workspace.safe_read import read_window

    offset, at = 0, 1
    while at < line:
        data, _st = read_window(ws, full, offset, _SCAN_CHUNK)
        if not data:
            return None
        pos = 0
        while at < line:
            nl = data.find(b"\n", pos)
            if nl == -1:
                break
            pos, at = nl + 1, at + 1
        offset += pos if at == line else len(data)
    return offset


def _utf8_cut(data: bytes, limit: int) -> int:
    """The largest cut <= ``limit`` that does not split a UTF-8 character (at least 1)."""
    cut = min(limit, len(data))
    while cut > 0 and cut < len(data) and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut or min(limit, len(data))


def read_lines(
    ws: Workspace,
    path: str,
    start_line: int = 1,
    end_line: int | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    cursor: str | None = None,
) -> dict[str, Any]:
    """Lines ``start_line``..``end_line`` (1-based, inclusive) of a workspace markdown file.

    At most ``max_bytes`` of text and 500 lines come back, and only those bytes are read (a
    line longer than ``max_bytes`` comes back in pieces). ``truncated`` says the answer stops
    before the range asked for; ``nextCursor`` (when more of the file follows) continues
    exactly where this answer ends. ``totalLines`` is known once the answer reaches the end.
    """
    from memcore.workspace.safe_read import decode_text, read_window

    full = resolve_inside(ws, path)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise InputError("max_bytes must be an integer")
    if not 1 <= max_bytes <= MAX_MAX_BYTES:
        raise InputError(f"max_bytes must be from 1 to {MAX_MAX_BYTES}, got {max_bytes}")
    if start_line < 1:
        raise InputError(f"start_line must be 1 or more, got {start_line}")
    if cursor is not None:
        offset, start_line = _parse_cursor(cursor)
    if end_line is not None and end_line < start_line:
        raise InputError(f"end_line ({end_line}) must not be before start_line ({start_line})")
    last = start_line + DEFAULT_LINES - 1 if end_line is None else end_line
    want = min(last, start_line + MAX_LINES - 1) - start_line + 1
    if cursor is None:
        found = _offset_of_line(ws, full, start_line)
        offset = found if found is not None else -1
    data, st = read_window(ws, full, offset, max_bytes) if offset >= 0 else (b"", None)
    size = st.st_size if st is not None else full.stat().st_size
    at_eof = offset < 0 or offset + len(data) >= size
    shown = ws.rel(full)
    lines: list[bytes] = []
    pos, partial = 0, False
    while len(lines) < want and pos < len(data):
        nl = data.find(b"\n", pos)
        if nl == -1:
            if not at_eof:
                break  # the rest of this line did not fit
            lines.append(data[pos:])
            pos = len(data)
        else:
            lines.append(data[pos:nl])
            pos = nl + 1
    if not lines and pos < len(data):  # one line longer than max_bytes: a piece of it
        pos = _utf8_cut(data, max_bytes)
        lines, partial = [data[:pos]], True
    text = decode_text(shown, b"\n".join(ln.rstrip(b"\r") for ln in lines))
    end = start_line + len(lines) - 1 if lines else None
    next_offset = offset + pos if offset >= 0 else size
    more = next_offset < size
    next_line = (end if partial else (end or start_line - 1) + 1) if lines else start_line
    return {
        "path": shown,
        "startLine": start_line,
        "endLine": end,
        "totalLines": None if more else (end if lines else None),
        "sizeBytes": size,
        "truncated": more and (partial or end is None or end < last),
        "nextCursor": f"{next_offset}.{next_line}" if more else None,
        "text": text,
    }


ORIGIN_HELP = (
    "Who searched: interactive (answering someone; counts toward promotion's distinct-queries "
    "gate), agent (your own automatic search), schedule or backfill."
)


def build_server(ws: Workspace, pool: IndexPool | None = None) -> Any:
    """The MCPServer with memcore's tools bound to ``ws``; a long-lived server passes a
    ``pool`` (its index connection and the watch of the workspace's folders kept between
    searches; the caller closes it)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from memcore import __version__

    server = MCPServer(
        name="memcore",
        version=__version__,
        instructions=INSTRUCTIONS,
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
    def memory_search(
        query: Annotated[str, _arg("What to look for, in words (not empty).")],
        limit: Annotated[int, _arg("Most hits to return, 1 to 100.")] = 10,
        origin: Annotated[str, _arg(ORIGIN_HELP)] = "interactive",
    ) -> dict[str, Any]:
        """Search MEMORY.md and the daily notes; hits on daily notes are recorded as recalls
        (they feed promotion into long-term memory). Returns path, line range, score, snippet
        (read more with memory_get). In a Claude Code memory folder its topic files and
        CLAUDE.md files are searched too (Codex: memory_summary.md; Hermes: USER.md).
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
        res = guarded(search, ws, query, limit=limit, now=utcnow(), origin=origin, pool=pool)
        out = res.to_json()
        out["recorded"] = res.recorded
        if res.record_error:
            out["recordError"] = res.record_error
        return out

    @server.tool()
    def memory_record(
        query: Annotated[str, _arg("The query your own search answered (not empty).")],
        results: Annotated[
            list[dict[str, Any]] | None,
            _arg(
                "Your search's hits (needed, as results or as hits), each {path, startLine, "
                "endLine, score (0-1), snippet}; path relative to the workspace, e.g. "
                "memory/2026-04-01.md."
            ),
        ] = None,
        origin: Annotated[str, _arg(ORIGIN_HELP)] = "interactive",
        hits: Annotated[
            list[dict[str, Any]] | None, _arg("Another name of results: give one of the two.")
        ] = None,
    ) -> dict[str, Any]:
        """Record hits of your own memory search as recalls (as ``memcore memory record``):
        results are {path, startLine, endLine, score, snippet}; only daily notes
        (memory/YYYY-MM-DD.md, memory/YYYY-MM-DD-HHMM.md, memory/<sub>/YYYY-MM-DD.md) inside
        this workspace are recorded, a path outside is refused."""
        from memcore.recall.entries import ORIGINS
        from memcore.recall.store import record_recalls

        if not query.strip():
            raise ToolError("query must not be empty")
        if origin not in ORIGINS:
            raise ToolError(f"origin must be one of {', '.join(ORIGINS)}")
        if results is not None and hits is not None:
            raise ToolError("give results or hits, not both (hits is another name of results)")
        found = results if results is not None else hits
        if found is None:
            raise ToolError(
                "results is required: a list of {path, startLine, endLine, score, snippet} "
                "(hits is another name of it)"
            )
        res = guarded(record_recalls, ws, query, found, now=utcnow(), origin=origin)
        out: dict[str, Any] = {"recorded": res.recorded, "keys": res.keys}
        notes = [*res.notices, *([res.fold_error] if res.fold_error else [])]
        if notes:
            out["warnings"] = notes
        return out

    @server.tool()
    def memory_get(
        path: Annotated[str, _arg("Workspace-relative markdown file, e.g. memory/2026-04-01.md.")],
        start_line: Annotated[int, _arg("First line to read, 1-based.")] = 1,
        end_line: Annotated[
            int | None, _arg("Last line to read, inclusive (default: 200 lines).")
        ] = None,
        max_bytes: Annotated[
            int, _arg("Most bytes of text to return (default 64 KiB, at most 1 MiB).")
        ] = DEFAULT_MAX_BYTES,
        cursor: Annotated[
            str | None, _arg("nextCursor of an earlier answer: read on from where it stopped.")
        ] = None,
    ) -> dict[str, Any]:
        """Read lines of a markdown file inside the workspace (e.g. memory/2026-04-01.md,
        MEMORY.md). Lines are 1-based and inclusive; at most 500 lines and ``max_bytes`` bytes
        (64 KiB, up to 1 MiB) per call. ``truncated`` says the answer stops early; pass its
        ``nextCursor`` as ``cursor`` to read on from there."""
        return guarded(
            read_lines, ws, path, start_line, end_line, max_bytes=max_bytes, cursor=cursor
        )

    @server.tool()
    def dreaming(
        command: Annotated[str, _arg("status, help, or a mode: off, core, rem, deep.")] = "status",
    ) -> str:
        """The /dreaming chat command: status, help, or a mode (off, core, rem, deep)."""
        from memcore.promotion.commands import handle_dreaming

        return guarded(handle_dreaming, ws, f"/dreaming {command}")

    @server.tool()
    def promote_preview(
        limit: Annotated[
            int | None, _arg("Most candidates to list, 0 to 10000 (default: every one).")
        ] = None,
    ) -> dict[str, Any]:
        """Which recalled snippets would be promoted into MEMORY.md now (writes nothing):
        every qualifying candidate unless ``limit`` is given, as ``memory promote``."""
        from memcore.promotion import promote

        if limit is not None and not 0 <= limit <= 10_000:
            raise ToolError("limit must be from 0 to 10000")
        res = guarded(promote.preview, ws, now=utcnow(), limit=limit)
        return res.to_json()

    @server.tool()
    def dream_pending(
        cursor: Annotated[str | None, _arg("The 'next' value of the previous page.")] = None,
        limit: Annotated[int, _arg("Most items on this page.")] = 20,
    ) -> dict[str, Any]:
        """What waits for a consolidation decision, a page at a time: review items (conflicts,
        merges) and candidate pairs of MEMORY.md entries, with both texts, metadata, memcore's
        analysis and verdict, and what may be answered (``allowed``). Pass ``next`` as
        ``cursor`` for the next page."""
        from memcore.dream import agent

        return guarded(agent.pending, ws, now=utcnow(), cursor=cursor, limit=limit)

    @server.tool()
    def dream_decide(
        decisions: Annotated[
            list[dict[str, Any]], _arg("One decision per item of dream_pending (see above).")
        ],
    ) -> dict[str, Any]:
        """Decide items from dream_pending: ``{"item": "pair:...", "verdict": "same" |
        "supersedes" | "conflict" | "related" | "unrelated", "newer": "a" | "b",
        "merged_text": "..."}`` or ``{"item": "review:N", "choice": "a" | "b" | "both" |
        "apply" | "reject", "merged_text": "..."}``. memcore checks each (every detail kept,
        scopes never mixed, pinned entries never removed) and applies the accepted ones as one
        undoable run; the others come back under ``skipped`` with the reason."""
        from memcore.dream import agent

        return guarded(agent.decide, ws, decisions, now=utcnow())

    @server.tool()
    def context(
        model_window: Annotated[
            int, _arg("Your model's context window in tokens (the block takes at most 10%).")
        ] = 200_000,
    ) -> dict[str, Any]:
        """The memory block to load at the start of a session (as ``memcore context``): the
        global and this project's short memories, within 10% of ``model_window`` and 9,000
        tokens; ``text`` is the block, the versions say when to fetch it again."""
        from memcore.sessions.context import context_block

        if model_window < 0:
            raise ToolError("model_window must be 0 or more")
        return guarded(context_block, ws, model_window=model_window)

    from memcore.sessions.recall_api import recall

    def recall_tool(
        memory: Annotated[
            str,
            _arg(
                "Which memory: global | projects | project | sessions | session | sources"
                " | decisions."
            ),
        ],
        project: Annotated[str | None, _arg("Project id (default: this workspace).")] = None,
        session: Annotated[
            str | None, _arg("Session id (memory = session, or decisions of one session).")
        ] = None,
        reference: Annotated[
            str | None, _arg("A reference from an earlier answer (memory = sources).")
        ] = None,
        version: Annotated[int | None, _arg("A version number of that memory.")] = None,
        cursor: Annotated[str | None, _arg("The nextCursor of the previous page.")] = None,
        limit: Annotated[
            int | None, _arg("Items per page of a list (1-100, default 20), as --limit.")
        ] = None,
        query: Annotated[
            str | None,
            _arg("memory = sessions: only those whose id, title or memory holds every word."),
        ] = None,
        from_: Annotated[
            int | None, _arg("First message index to read (from 0), as --from.", alias="from")
        ] = None,
        to: Annotated[int | None, _arg("Last message index to read (inclusive), as --to.")] = None,
        start: Annotated[int | None, _arg("Old name of 'from'.")] = None,
        end: Annotated[int | None, _arg("Old name of 'to'.")] = None,
    ) -> dict[str, Any]:
        """Read short memories of finished sessions: memory = global | projects | project |
        sessions | session | sources | decisions. ``from`` and ``to`` (the CLI's --from and
        --to; the old ``start`` and ``end`` still work) select a session's messages; a page's
        ``nextCursor`` is the ``cursor`` of the next. Messages are cited by stable references
        (``session:ID#UUID`` or ``session:ID#@OFFSET:HASH``, ranges ``A..B``), which
        ``reference`` reads back."""
        first = from_ if from_ is not None else start
        last = to if to is not None else end
        args: dict[str, Any] = {"memory": memory}
        extra = {
            "project": project,
            "session": session,
            "reference": reference,
            "version": version,
            "cursor": cursor,
            "limit": limit,
            "query": query,
            "from": first,
            "to": last,
        }
        args.update({k: v for k, v in extra.items() if v is not None})
        return guarded(recall, ws, args)

    server.tool(name="recall")(_aliased(recall_tool, {"from": "from_"}))

    return server


def run_stdio(ws: Workspace) -> None:
    """Serve ``ws`` over stdio until the client closes the pipe (the handshake is answered
    before the SDK is loaded: :mod:`memcore.mcp.stdio`)."""
    from memcore.mcp import stdio

    stdio.run_stdio(ws)
