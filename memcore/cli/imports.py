"""``memcore import``: memories exported by another tool into MEMORY.md (preview first)."""

from __future__ import annotations

from pathlib import Path

import click

from memcore.cli.common import current_workspace, echo_json, json_option


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--apply", "do_apply", is_flag=True, help="Write the entries (default: preview).")
@click.option(
    "--skip-invalid", is_flag=True, help="Import the valid rows even when some are invalid."
)
@json_option
def import_cmd(file: Path, do_apply: bool, skip_invalid: bool, as_json: bool) -> None:
    """Import memories from a JSON or JSONL FILE (mem0-style exports) into MEMORY.md.

    Each row: text, type, scope, importance, confidence, pinned, created_at,
    last_accessed_at, access_count. Previews by default; --apply writes one journaled,
    undoable run. An invalid row stops the import unless --skip-invalid.

    \b
    Examples:
      memcore import export.jsonl                  # preview, nothing written
      memcore import export.json --apply           # one journaled run (memcore undo)
      memcore import export.jsonl --apply --skip-invalid
    """
    import sys

    from memcore.dream import imports
    from memcore.workspace.clock import utcnow

    ws = current_workspace()
    now = utcnow()
    plan = imports.read_import(ws, file, now=now)
    for err in plan.errors:
        click.echo(f"{file}: {err}", err=True)
    blocked = bool(plan.errors) and not skip_invalid
    if do_apply and not blocked:
        out = imports.apply_import(ws, plan, now=now, skip_invalid=skip_invalid)
    else:
        out = {**plan.to_json(), "imported": 0, "runId": None, "applied": False}
    if as_json:
        echo_json(out)
    else:
        for e in out["entries"][:20]:
            m = e["meta"]
            click.echo(
                f"  [{e['id']}] {m['type']}/{m['scope']} importance={m['importance']:.2f}"
                f"{' pinned' if m['pinned'] else ''} — {e['text'][:80]}"
            )
        if len(out["entries"]) > 20:
            click.echo(f"  … and {len(out['entries']) - 20} more")
        dup = len(plan.duplicates)
        summary = (
            f"{plan.total} rows: {len(plan.rows)} valid, {plan.invalid_rows} invalid, "
            f"{dup} already in MEMORY.md"
        )
        if out["applied"]:
            click.echo(f"Imported {out['imported']} entries ({summary}); run {out['runId']}")
        else:
            click.echo(f"Import preview — {summary}; nothing was written")
    if blocked:
        click.echo(
            f"Error: {plan.invalid_rows} invalid row(s); nothing was imported "
            "(fix them, or pass --skip-invalid)",
            err=True,
        )
        sys.exit(1)
    if not do_apply and plan.rows:
        click.echo("(preview only: use --apply to write)", err=True)
