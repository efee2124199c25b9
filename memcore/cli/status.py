"""``memcore status``: what kind of workspace this is and every file memcore reads and writes."""

from __future__ import annotations

from typing import Any

import click

from memcore.cli.common import current_workspace, echo_json, json_option


@click.command("status")
@json_option
def status_cmd(as_json: bool) -> None:
    """The workspace's kind (memcore, openclaw, claude-code, codex, hermes), which
    configuration wins, every file memcore reads and writes there, and what is wrong.

    The kind is detected from what is on disk; [workspace] kind in memcore.toml overrides it.
    Nothing is written.

    \b
    Examples:
      memcore status
      memcore -w ~/.claude/projects/-home-me-app/memory status --json
    """
    from memcore.workspace.layouts import status

    out = status(current_workspace())
    if as_json:
        echo_json(out)
        return
    for line in status_lines(out):
        click.echo(line)


def status_lines(out: dict[str, Any]) -> list[str]:
    cfg = out["config"]
    lines = [
        f"Workspace: {out['workspace']}",
        f"Kind: {out['kind']} ({out['kindSource']})",
        f"memcore's own folder: {out['stateDir']}",
        f"Dreaming config: {cfg.get('dreamingFrom') or 'unreadable'}"
        + (f" · mode {cfg['mode']}" if cfg.get("mode") else ""),
    ]
    if cfg.get("ignored"):
        lines.append(f"Ignored: {cfg['ignored']}")
    lines.append(f"Entries: {out['entries']}")
    lines.append("Reads:")
    lines.extend(f"  {r}" for r in out["reads"] or ["(nothing yet)"])
    lines.append("Writes:")
    lines.extend(f"  {w}" for w in out["writes"])
    if out["warnings"]:
        lines.append("Warnings:")
        lines.extend(f"  - {w}" for w in out["warnings"])
    return lines
