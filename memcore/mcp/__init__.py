"""The MCP server (``memcore mcp``): memory tools for agents over stdio. The MCP SDK is
imported only when a server is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.mcp.server import build_server, read_lines, resolve_inside
    from memcore.mcp.stdio import run_stdio

__all__ = ["build_server", "read_lines", "resolve_inside", "run_stdio"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "server": ("build_server", "read_lines", "resolve_inside"),
        "stdio": ("run_stdio",),
    },
)
