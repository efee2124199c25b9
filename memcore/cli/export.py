"""``memcore export``: a MEMORY.md view for another agent to load (preview first)."""

from __future__ import annotations

from pathlib import Path

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

    Previews by default. A file memcore did not write is never replaced without --force
    (in AGENTS.md only memcore's own section is ever replaced).

    \b
    Examples:
      memcore export --to agents-md .                # preview
      memcore export --to cursor-rules . --apply
      memcore export --to claude-code ~/.claude/projects/-home-me-app/memory --apply
    """
    from memcore.dream import exports

    plan = exports.plan_export(current_workspace(), target, folder, force=force)
    if do_apply:
        exports.apply_export(plan)
    if as_json:
        echo_json({**plan.to_json(), "applied": do_apply})
        return
    for f in plan.files:
        click.echo(f"{f.action:9} {f.path}" + (f"  ({f.reason})" if f.reason else ""))
    click.echo(
        f"{plan.entries} entries" + ("; written" if do_apply else "; preview only, nothing written")
    )
