"""``memcore mcp``: the MCP server over stdio."""

from __future__ import annotations

import click

from memcore.cli.common import get_state, workspace_option


@click.command("mcp")
@workspace_option(help="Workspace (default: the root -w / $MEMCORE_WORKSPACE / current directory).")
def mcp_cmd() -> None:
    """Run the MCP server over stdio.

    Tools: memory_search, memory_get, dreaming, promote_preview (and recall with sessions).
    There is no --json: stdout is the protocol channel.

    \b
    Examples:
      memcore -w ~/agent mcp
      memcore mcp -w ~/agent               # the same
    """
    import logging

    from memcore.mcp.stdio import run_stdio

    ws = get_state().workspace()
    logging.getLogger("memcore").setLevel(logging.WARNING)  # stdout is the protocol channel
    run_stdio(ws)
