"""``memcore dream`` (report, --apply, --auto) and its sub-commands ``history``, ``entries``
and ``undo``. Library modules are imported inside the commands."""

from __future__ import annotations

from typing import Any

import click

from memcore.cli.common import (
    IntRange,
    current_workspace,
    echo_json,
    json_option,
    lock_timeout_option,
    progress_bar,
    warn,
)

STEPS = ("promote", "merge", "reconcile", "decay", "forget")


def _now() -> Any:
    from memcore.workspace.clock import utcnow

    return utcnow()


def _steps(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    """``--only a,b``: the steps in their fixed order; a usage error names unknown ones."""
    if value is None:
        return STEPS
    wanted = {n.strip().lower() for n in value.split(",") if n.strip()}
    unknown = sorted(wanted - set(STEPS))
    if unknown or not wanted:
        raise click.BadParameter(
            f"{value!r}: unknown step(s) {', '.join(unknown) or '(none given)'}; "
            f"allowed: comma list of {', '.join(STEPS)}",
            ctx=ctx,
            param=param,
        )
    return tuple(s for s in STEPS if s in wanted)


def _ask_conflict(c: Any, err: bool = False) -> str:
    while True:
        answer = (
            click.prompt(
                f'  [{c.a}] vs [{c.b}] — "{c.topic}"\n'
                f"    A: {c.a_text[:100]}\n    B: {c.b_text[:100]}\n"
                "  Keep A, B or skip?",
                default="skip",
                show_default=False,
                prompt_suffix=" [A/B/skip] ",
                err=err,
            )
            .strip()
            .lower()
        )
        if answer in ("a", "b", "skip", "s", ""):
            return "skip" if answer in ("s", "") else answer
        click.echo("  Please answer A, B or skip.")


def _confirm(line: str, err: bool = False) -> bool:
    question = line.rsplit(" [Y/n]", 1)[0]
    while True:
        answer = click.prompt(
            question, default="Y", show_default=False, prompt_suffix=" [Y/n] ", err=err
        )
        answer = answer.strip().lower()
        if answer in ("", "y", "yes"):
            return True
        if answer in ("n", "no"):
            return False
        click.echo("Please answer Y or n.", err=err)


@click.group("dream", invoke_without_command=True)
@click.option(
    "--apply", "do_apply", is_flag=True, help="Ask, then apply (A/B/skip per conflict, then Y/n)."
)
@click.option(
    "--auto",
    "auto",
    is_flag=True,
    help="Unattended: safe merges and prunes; conflicts wait for review.",
)
@click.option(
    "--yes",
    "-y",
    "yes",
    is_flag=True,
    help="With --apply: ask nothing; conflicts are skipped (they wait for review).",
)
@click.option(
    "--only",
    "steps",
    metavar="STEPS",
    callback=_steps,
    help=f"Comma list of steps: {','.join(STEPS)}.",
)
@click.option("--diff", "diff", is_flag=True, help="Also print a unified diff of MEMORY.md.")
@lock_timeout_option()
@json_option
@click.pass_context
def dream_group(
    ctx: click.Context,
    do_apply: bool,
    auto: bool,
    yes: bool,
    steps: tuple[str, ...],
    diff: bool,
    lock_timeout: float,
    as_json: bool,
) -> None:
    """Consolidate MEMORY.md: promote, merge, reconcile, decay, forget.

    Without --apply or --auto it only prints the report; nothing is written.

    \b
    Examples:
      memcore dream                        # the report: what would change
      memcore dream --apply                # ask about conflicts, then apply
      memcore dream --auto --only merge,decay --json
    """
    if ctx.invoked_subcommand is not None:
        return
    if do_apply and auto:
        raise click.UsageError("--apply and --auto exclude each other")
    from memcore.errors import LockBusy

    try:
        with progress_bar() as progress:
            _dream(do_apply, auto, yes, steps, diff, as_json, lock_timeout, progress)
    except LockBusy as exc:
        raise LockBusy(f"another run is in progress ({exc})") from None


def _dream(
    do_apply: bool,
    auto: bool,
    yes: bool,
    steps: tuple[str, ...],
    diff: bool,
    as_json: bool,
    lock_timeout: float,
    progress: Any,
) -> None:
    from memcore.dream import cycle, report
    from memcore.errors import LossBoundExceeded

    ws = current_workspace()
    now = _now()
    if auto:
        res = cycle.run_cycle(
            ws,
            now=now,
            mode="auto",
            steps=steps,
            lock_timeout=lock_timeout,
            keep_plan=True,
            progress=progress,
        )
        plan = res.pop("plan")
        warn(plan.warnings)
        if as_json:
            echo_json({**res, "proposals": report.plan_json(plan)})
        else:
            if diff:
                _echo_diff(ws, res)
            click.echo(report.auto_line(str(ws.root), res))
        if res["reviewPending"]:
            click.echo(report.reminder_line(res["reviewPending"]), err=True)
        return
    if do_apply:
        plan = cycle.preview_for_apply(
            ws, now=now, steps=steps, lock_timeout=lock_timeout, progress=progress
        )
    else:
        plan = cycle.preview(ws, now=now, steps=steps, progress=progress)
    warn(plan.warnings)
    if not do_apply:
        if as_json:
            echo_json({**cycle.preview_result(plan, now), "proposals": report.plan_json(plan)})
            return
        click.echo("\n".join(report.report_lines(plan)))
        if diff and not plan.empty():
            click.echo(report.unified_diff(plan.doc.source, report.planned_text(plan)), nl=False)
        if not plan.empty():
            click.echo("(report only: nothing was written; use --apply or --auto)", err=True)
        return
    if plan.empty():
        if as_json:
            echo_json({"applied": False, "proposals": report.plan_json(plan)})
        else:
            click.echo(report.NOTHING)
        return
    # With --json, stdout carries only the JSON document: the report and the questions go to
    # stderr, where a person still sees them.
    choices: dict[int, str] = {}
    try:
        click.echo("\n".join(report.report_lines(plan, with_prompt=False)), err=as_json)
        for i, c in enumerate(plan.conflicts):
            choices[i] = "skip" if yes else _ask_conflict(c, err=as_json)
        ok = yes or _confirm(report.proposed_line(plan), err=as_json)
    except click.Abort:
        ok = False
    if not ok:
        if as_json:
            echo_json({"applied": False, "cancelled": True, "proposals": report.plan_json(plan)})
        else:
            click.echo(report.CANCELLED)
        return
    allow_loss = False
    if not yes:
        _merges, _deferred, ops, _resolved, _queued = cycle.chosen_ops(plan, "apply", choices)
        try:
            cycle.loss_check(plan, ops)
        except LossBoundExceeded as exc:
            click.echo(str(exc).split("; nothing was applied")[0] + ":", err=as_json)
            by_id = plan.doc.by_id()
            for eid in exc.affected:
                e = by_id.get(eid)
                click.echo(f"  [{eid}] {report.cut(e.text) if e is not None else ''}", err=as_json)
            if not click.confirm("Apply anyway?", default=False, err=as_json):
                if as_json:
                    echo_json(
                        {"applied": False, "cancelled": True, "proposals": report.plan_json(plan)}
                    )
                else:
                    click.echo(report.CANCELLED)
                return
            allow_loss = True
    res = cycle.apply_plan(
        plan,
        now=now,
        mode="apply",
        choices=choices,
        lock_timeout=lock_timeout,
        allow_loss=allow_loss,
    )
    if as_json:
        echo_json({**res, "proposals": report.plan_json(plan)})
        return
    if diff:
        _echo_diff(ws, res)
    click.echo(report.complete_line(res))
    if res["reviewPending"]:
        click.echo(report.reminder_line(res["reviewPending"]), err=True)


def _echo_diff(ws: Any, res: dict[str, Any]) -> None:
    from memcore.dream import report, tables
    from memcore.journal import wal
    from memcore.recall import ledger

    if not res.get("runId"):
        return
    with tables.connect(ws) as conn:
        before = wal.memory_before(conn, res["runId"])
    if before is not None:
        click.echo(report.unified_diff(before, ledger.read_memory(ws)), nl=False)


@dream_group.command("history")
@click.option("--limit", type=IntRange(min=1), default=20, show_default=True, help="Most runs.")
@json_option
def history_cmd(limit: int, as_json: bool) -> None:
    """List every run (newest first); an alias of `memcore history`.

    \b
    Examples:
      memcore dream history
      memcore dream history --limit 5 --json
    """
    from memcore.cli.history import print_history

    print_history(limit, as_json)


@dream_group.command("entries")
@json_option
def entries_cmd(as_json: bool) -> None:
    """List MEMORY.md entries with their ids and metadata (for `memcore memory set`).

    \b
    Examples:
      memcore dream entries
      memcore dream entries --json
    """
    from memcore.dream import tables
    from memcore.recall import ledger
    from memcore.workspace.entries import parse

    ws = current_workspace()
    doc = parse(ledger.read_memory(ws))
    now = _now()
    if ws.db_path.exists():
        with tables.connect(ws) as conn:
            metas = ledger.metas_for(conn, doc, now)
    else:
        metas = {e.id: ledger.effective(e, None, now) for e in doc.entries}
    warn(doc.warnings)
    rows = [
        {
            **metas[e.id].to_json(),
            "section": e.section,
            "startLine": e.start_line,
            "endLine": e.end_line,
            "text": e.text,
        }
        for e in doc.entries
    ]
    if as_json:
        echo_json({"entries": rows})
        return
    for r in rows:
        pin = " pinned" if r["pinned"] else ""
        click.echo(
            f"[{r['id']}] {r['type']}/{r['scope']}{pin} importance={r['importance']:.2f} "
            f"lines {r['startLine']}-{r['endLine']}: {r['text'][:70]}"
        )


@dream_group.command("undo")
@click.argument("run_id", required=False)
@lock_timeout_option()
@json_option
def undo_cmd(run_id: str | None, lock_timeout: float, as_json: bool) -> None:
    """Undo a run (default: the latest); an alias of `memcore undo`.

    \b
    Examples:
      memcore dream undo                   # the latest run
      memcore dream undo 3f9c2a1b7d20 --json
    """
    from memcore.cli.history import do_undo

    do_undo(run_id, as_json, lock_timeout)
