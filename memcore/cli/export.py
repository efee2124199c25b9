"""``memcore export``: a MEMORY.md view for another agent to load (preview first)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memcore.cli.common import current_workspace, echo_json, json_option

TARGETS = ("claude-code", "agents-md", "cursor-rules", "codex")


@click.command("export")
@click.option("--to", "target", type=click.Choice(TARGETS), required=True, help="The format.")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--apply", "do_apply", is_flag=True, help="Write the files (default: preview).")
@click.option("--force", is_flag=True, help="Also replace files memcore did not write.")
@json_option
def export_cmd(target: str, folder: Path, do_apply: bool, force: bool, as_json: bool) -> None:
    """Write MEMORY.md as a view another agent loads into FOLDER: an AGENTS.md section,
    .cursor/rules/memory.mdc, a Claude Code memory folder, or Codex memory files.

    Previews by default; --apply writes the files as one journaled run (memcore history
    lists it; memcore undo RUN removes the files it created and restores the ones it changed).
    A file memcore did not write is never replaced without --force (in AGENTS.md and in a
    Claude Code index of your own only memcore's section is ever replaced or appended).

    \b
    Examples:
      memcore export --to agents-md .                # preview
      memcore export --to cursor-rules . --apply
      memcore export --to claude-code ~/.claude/projects/-home-me-app/memory --apply
    """
    from memcore.dream import exports
    from memcore.workspace.clock import utcnow

    ws = current_workspace()
    plan = exports.plan_export(ws, target, folder, force=force)
    out: dict[str, Any] = {**plan.to_json(), "runId": None}
    if do_apply:
        out = exports.apply_export(ws, plan, now=utcnow())
    if as_json:
        echo_json({**out, "applied": do_apply})
        return
    for f in out["files"]:
        click.echo(f"{f['action']:9} {f['path']}" + (f"  ({f['reason']})" if f["reason"] else ""))
    if not do_apply:
        tail = "; preview only, nothing written"
    elif out["runId"]:
        tail = f"; written as run {out['runId']} (memcore undo {out['runId']} takes it back)"
    else:
        tail = "; nothing to write"
    click.echo(f"{plan.entries} entries{tail}")
