"""Rendering of ``memcore memory backfill`` (seed the recall store from what recurs)."""

from __future__ import annotations

from typing import Any

import click

from memcore.cli.common import current_workspace, echo_json, lock_timeout_value


def run_backfill(
    days: int, do_apply: bool, rollback: bool, lock_timeout: float, as_json: bool
) -> None:
    """The body of ``memcore memory backfill`` (the command is declared in cli/memory.py)."""
    from memcore.dream import backfill
    from memcore.workspace.clock import utcnow

    if do_apply and rollback:
        raise click.UsageError("--apply and --rollback exclude each other; give one")
    ws = current_workspace()
    now = utcnow()
    wait = lock_timeout_value(lock_timeout)
    if rollback:
        out = backfill.rollback(ws, now, lock_timeout=wait)
        if as_json:
            echo_json({"runId": out.run_id, "removed": out.removed})
            return
        r = out.removed
        click.echo(
            f"Rolled back the backfill (run {out.run_id}): removed {r['recalls']} recalls and "
            f"{r['entries']} entries it had created"
            + (f"; {r['missing']} entries were already gone" if r["missing"] else "")
            + "."
        )
        return
    result = (
        backfill.apply(ws, now, days, lock_timeout=wait)
        if do_apply
        else backfill.plan(ws, now, days)
    )
    if as_json:
        echo_json(result.to_json())
        return
    _print(result, do_apply)


def _print(p: Any, applied: bool) -> None:
    for path, reason in p.skipped:
        click.echo(f"skipped {path}: {reason}", err=True)
    if not p.seeds:
        click.echo(f"Nothing recurs across the {p.notes} daily notes read; nothing to seed.")
        return
    total = sum(s.recalls for s in p.seeds)
    head = "Seeded" if applied else "Would seed"
    click.echo(
        f"{head} {total} recalls on {len(p.seeds)} entries from {p.notes} daily notes "
        "(origin backfill: they never count as distinct queries):"
    )
    for s in p.seeds:
        days = ", ".join(s.days)
        click.echo(f"  {s.recalls}x {s.path}:{s.start_line}-{s.end_line}  ({s.reason}: {days})")
        snippet = s.snippet if len(s.snippet) <= 90 else s.snippet[:89] + "…"
        click.echo(f"      {snippet}")
    if applied:
        click.echo(f"Run {p.run_id}. Undo: memcore memory backfill --rollback")
    elif p.applied_run:
        click.echo(f"A backfill is already applied (run {p.applied_run}); roll it back first.")
    else:
        click.echo("Preview only: nothing written. Apply with: memcore memory backfill --apply")
