"""``memcore import``: memories exported by another tool into MEMORY.md (preview first)."""

from __future__ import annotations

from pathlib import Path

import click

from memcore.cli.common import current_workspace, echo_json, json_option

SOURCES = ("claude-code", "codex", "hermes", "openclaw", "mem0")


@click.command("import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--from",
    "source",
    type=click.Choice(SOURCES),
    help="Another agent's memory: FILE is its folder (mem0: a JSON/JSONL export).",
)
@click.option("--apply", "do_apply", is_flag=True, help="Write the entries (default: preview).")
@click.option(
    "--skip-invalid", is_flag=True, help="Import the valid rows even when some are invalid."
)
@json_option
def import_cmd(
    file: Path, source: str | None, do_apply: bool, skip_invalid: bool, as_json: bool
) -> None:
    """Import memories from a JSON or JSONL FILE (mem0-style exports) into MEMORY.md, or
    with --from another agent's memory folder (claude-code, codex, hermes, openclaw).

    Each row: text, type, scope, importance, confidence, pinned, created_at,
    last_accessed_at, access_count. A folder gives its memory files only (never
    credentials, settings or sessions). Previews by default; --apply writes one journaled,
    undoable run. An invalid row stops the import unless --skip-invalid.

    \b
    Examples:
      memcore import export.jsonl                  # preview, nothing written
      memcore import export.json --apply           # one journaled run (memcore undo)
      memcore import --from hermes ~/.hermes/memories --apply
    """
    import sys

    from memcore.dream import imports
    from memcore.workspace.clock import utcnow

    ws = current_workspace()
    now = utcnow()
    if do_apply:
        imports.roll_back_interrupted(ws)  # so a killed import's rows are not duplicates
    if source is None or source == "mem0":
        plan = imports.read_import(ws, file, now=now)
    else:
        from memcore.dream.import_sources import read_from

        plan, warnings = read_from(ws, source, file, now=now)
        for w in warnings:
            click.echo(f"Warning: {w}", err=True)
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
