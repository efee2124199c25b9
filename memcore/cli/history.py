"""``memcore history`` (runs, ``show``, ``versions``), ``memcore undo`` and ``memcore restore``.

Every change memcore makes to a user's file is a journaled run; these commands list them,
show one (with a unified diff per file), take one back, or bring back a MEMORY.md version.
``memcore dream history`` and ``memcore dream undo`` are aliases.
"""

from __future__ import annotations

from typing import Any

import click

from memcore.cli.common import (
    IntRange,
    current_workspace,
    echo_json,
    json_option,
    lock_timeout_option,
    warn,
)

_SHOWN_COUNTERS = (
    "promoted",
    "merged",
    "conflicts",
    "decayed",
    "forgotten",
    "remaining",
    "restored",
    "set",
    "reinforced",
    "heldBack",
    "version",
    "target",
    "created",
    "updated",
)


def _now() -> Any:
    from memcore.workspace.clock import utcnow

    return utcnow()


def run_line(r: dict[str, Any]) -> str:
    """One run as a line of ``memcore history``."""
    c = r["counters"]
    shown = " ".join(f"{k}={c[k]}" for k in _SHOWN_COUNTERS if k in c)
    extra = f" undone by {r['undoneBy']}" if r["undoneBy"] else ""
    extra += f" (undo of {r['undoOf']})" if r["undoOf"] else ""
    files = f"  files: {', '.join(r['files'])}" if r.get("files") else ""
    return (
        f"{r['runId']}  {r['ranAt']}  {r['kind']}/{r['mode']}  {r['trigger']}  "
        f"{r['status']}{extra}  {shown}{files}"
    ).rstrip()


def print_history(limit: int, as_json: bool) -> None:
    from memcore.journal import history

    runs = history.list_runs(current_workspace(), limit)
    if as_json:
        echo_json({"runs": runs})
        return
    if not runs:
        click.echo("No runs yet.")
        return
    for r in runs:
        click.echo(run_line(r))


@click.group("history", invoke_without_command=True)
@click.option("--limit", type=IntRange(min=1), default=20, show_default=True, help="Most runs.")
@json_option
@click.pass_context
def history_group(ctx: click.Context, limit: int, as_json: bool) -> None:
    """List every run that changed memory (newest first): promote, dream, review, set,
    undo, restore, with what triggered it (command, schedule, page, mcp).

    \b
    Examples:
      memcore history
      memcore history show 3f9c2a1b7d20 --diff
      memcore history versions --json
    """
    if ctx.invoked_subcommand is None:
        print_history(limit, as_json)


@history_group.command("show")
@click.argument("run_id")
@click.option("--diff", "diff", is_flag=True, help="A unified diff per file.")
@json_option
def show_cmd(run_id: str, diff: bool, as_json: bool) -> None:
    """Show one run: its entry changes and the files it wrote.

    \b
    Examples:
      memcore history show 3f9c2a1b7d20
      memcore history show 3f9c2a1b7d20 --diff --json
    """
    from memcore.journal import history

    res = history.show_run(current_workspace(), run_id, diff=diff)
    if as_json:
        echo_json(res)
        return
    click.echo(run_line(res))
    for ch in res["entryChanges"]:
        reason = f" — {ch['reason']}" if ch["reason"] else ""
        click.echo(f"  {ch['step']} {ch['action']} [{ch['id']}]{reason}")
    for f in res["fileImages"]:
        kept = "" if f["imagesKept"] else " (images no longer kept)"
        click.echo(f"  file {f['path']}{kept}")
        if diff and f.get("diff"):
            click.echo(f["diff"], nl=False)


@history_group.command("versions")
@json_option
def versions_cmd(as_json: bool) -> None:
    """List the MEMORY.md versions kept ([journal] keep_versions, default 20).

    \b
    Examples:
      memcore history versions
      memcore history versions --json
    """
    from memcore.journal import history

    vs = history.versions(current_workspace())
    if as_json:
        echo_json({"versions": vs})
        return
    if not vs:
        click.echo("No MEMORY.md versions kept yet.")
        return
    for v in vs:
        mark = "  (current)" if v["current"] else ""
        size = f"{v['chars']} chars" if v["chars"] is not None else "pruned"
        click.echo(
            f"{v['version']:>4}  {v['savedAt']}  {v['role']} run {v['runId']}  "
            f"{v['sha1'][:12]}  {size}{mark}"
        )


def do_undo(run_id: str | None, as_json: bool, lock_timeout: float) -> None:
    from memcore.dream.undo import undo_run
    from memcore.sessions.correct import is_edit, undo_edit

    ws = current_workspace()
    if is_edit(ws, run_id):  # a short memory edited by hand: its text comes back
        out = undo_edit(ws, run_id, now=_now())
        if as_json:
            echo_json(out)
            return
        click.echo(
            f"Undid edit {out['edit']}: {out['version']} has the text of {out['restored_from']}"
            + (f"; exports rewritten (run {out['journal_run']})." if out["journal_run"] else ".")
        )
        return
    res = undo_run(ws, run_id, now=_now(), lock_timeout=lock_timeout)
    if as_json:
        echo_json(res)
        return
    how = "byte for byte" if res["exact"] else "entry by entry"
    click.echo(
        f"Undid run {res['runId']} {how}: {res['changes']} changes reversed, "
        f"{res['restored']} entries restored (undo run {res['undoRunId']})."
    )
    if res.get("dirsRemoved"):
        click.echo(f"Removed the folders the run created: {', '.join(res['dirsRemoved'])}.")
    if res.get("recallRestored"):
        click.echo(f"{len(res['recallRestored'])} promoted recall(s) can be promoted again.")
    if res.get("evictedRestored"):
        click.echo(f"{len(res['evictedRestored'])} evicted recall entries are back in the store.")
    if res.get("capRaisedTo"):
        click.echo(f"Raised [dreaming] max_entries to {res['capRaisedTo']} so they stay.")
    warn(res.get("warnings", []))


@click.command("undo")
@click.argument("run_id", required=False)
@lock_timeout_option()
@json_option
def undo_cmd(run_id: str | None, lock_timeout: float, as_json: bool) -> None:
    """Take back a run (default: the latest): byte for byte when its files are unchanged
    since; refused, naming what was edited, when undoing would clobber an edit. A short
    memory edited by hand (`memcore recall … --edit`, RUN_ID as it printed) gets its
    previous text back as a new version.

    \b
    Examples:
      memcore undo                         # the latest run
      memcore undo 3f9c2a1b7d20 --json
    """
    do_undo(run_id, as_json, lock_timeout)


@click.command("restore")
@click.argument("version", type=IntRange(min=1))
@lock_timeout_option()
@json_option
def restore_cmd(version: int, lock_timeout: float, as_json: bool) -> None:
    """Bring MEMORY.md back to a kept VERSION (memcore history versions) as an undoable
    run.

    \b
    Examples:
      memcore restore 3
      memcore restore 3 --lock-timeout 30 --json
    """
    from memcore.journal import history

    res = history.restore_version(
        current_workspace(), version, now=_now(), lock_timeout=lock_timeout
    )
    if as_json:
        echo_json(res)
        return
    if not res["changed"]:
        click.echo(f"MEMORY.md already is version {version}; nothing changed.")
    else:
        click.echo(
            f"Restored MEMORY.md version {version} (run {res['runId']}; undo with "
            f"memcore undo {res['runId']})."
        )
