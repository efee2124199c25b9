"""``memcore init``: create a workspace (never overwrites)."""

from __future__ import annotations

import click

from memcore.cli.common import echo_json, json_option


@click.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@json_option
def init_cmd(directory: str | None, as_json: bool) -> None:
    """Create MEMORY.md, memory/ and a commented memcore.toml (never overwrites).

    DIRECTORY defaults to -w, $MEMCORE_WORKSPACE or the current directory.

    \b
    Examples:
      memcore init ~/agent
      memcore -w ~/agent init --json
    """
    from pathlib import Path

    from memcore.cli.common import current_workspace
    from memcore.promotion.promote import TITLE
    from memcore.workspace.config import DEFAULT_CONFIG_TEXT
    from memcore.workspace.core import Workspace, atomic_write_text

    ws = Workspace(Path(directory).absolute()) if directory else current_workspace(must_exist=False)
    if ws.root.exists() and not ws.root.is_dir():
        raise click.ClickException(f"{ws.root} exists and is not a directory")
    ws.root.mkdir(parents=True, exist_ok=True)
    made: list[str] = []
    kept: list[str] = []
    if ws.memory_dir.exists():
        kept.append("memory/")
    else:
        ws.memory_dir.mkdir()
        made.append("memory/")
    for path, text in ((ws.memory_md, TITLE + "\n"), (ws.config_path, DEFAULT_CONFIG_TEXT)):
        if path.exists() or path.is_symlink():
            kept.append(path.name)
        else:
            atomic_write_text(path, text)
            made.append(path.name)
    offer = _backfill_offer(ws)
    if as_json:
        doc: dict[str, object] = {"workspace": str(ws.root), "created": made, "kept": kept}
        if offer is not None:
            doc["backfill"] = offer
        echo_json(doc)
        return
    click.echo(f"Workspace: {ws.root}")
    if made:
        click.echo("Created: " + ", ".join(made))
    if kept:
        click.echo("Kept (already there): " + ", ".join(kept))
    if offer is not None:
        click.echo(
            f"Found {offer['dailyNotes']} daily notes; {offer['seeds']} facts recur across them. "
            "A warm start seeds the recall store with them (undoable):"
        )
        click.echo("  memcore memory backfill           # preview")
        click.echo("  memcore memory backfill --apply")


def _backfill_offer(ws: object) -> dict[str, int] | None:
    """What ``memory backfill`` would seed, when the folder has daily notes and no recalls."""
    from memcore.dream import backfill
    from memcore.workspace.clock import utcnow
    from memcore.workspace.core import Workspace

    assert isinstance(ws, Workspace)
    if ws.store_path.exists():
        return None
    p = backfill.plan(ws, utcnow(), backfill.DEFAULT_DAYS)
    if not p.notes:
        return None
    return {"dailyNotes": p.notes, "seeds": len(p.seeds)}
