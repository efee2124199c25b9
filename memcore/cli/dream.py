"""``memcore dream`` (report, --apply, --auto), ``dream history``, ``dream undo``, ``review``
and ``memory set``. Library modules are imported inside the commands."""

from __future__ import annotations

from typing import Any

import click

from memcore.cli.common import current_workspace, echo_json, handle_errors, json_option


def _now() -> Any:
    from memcore.workspace.clock import utcnow

    return utcnow()


def _warn(lines: list[str]) -> None:
    for w in lines:
        click.echo(f"memcore: warning: {w}", err=True)


def _ask_conflict(c: Any) -> str:
    while True:
        answer = (
            click.prompt(
                f'  [{c.a}] vs [{c.b}] — "{c.topic}"\n'
                f"    A: {c.a_text[:100]}\n    B: {c.b_text[:100]}\n"
                "  Keep A, B or skip?",
                default="skip",
                show_default=False,
                prompt_suffix=" [A/B/skip] ",
            )
            .strip()
            .lower()
        )
        if answer in ("a", "b", "skip", "s", ""):
            return "skip" if answer in ("s", "") else answer
        click.echo("  Please answer A, B or skip.")


def _confirm(line: str) -> bool:
    question = line.rsplit(" [Y/n]", 1)[0]
    while True:
        answer = click.prompt(question, default="Y", show_default=False, prompt_suffix=" [Y/n] ")
        answer = answer.strip().lower()
        if answer in ("", "y", "yes"):
            return True
        if answer in ("n", "no"):
            return False
        click.echo("Please answer Y or n.")


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
    "only",
    metavar="STEPS",
    help="Comma list of steps: promote,merge,reconcile,decay,forget.",
)
@click.option("--diff", "diff", is_flag=True, help="Also print a unified diff of MEMORY.md.")
@click.option(
    "--lock-timeout",
    type=click.FloatRange(0, 3600),
    default=10.0,
    show_default=True,
    help="Seconds to wait for another run to finish before giving up (exit 75).",
)
@json_option
@click.pass_context
@handle_errors
def dream_group(
    ctx: click.Context,
    do_apply: bool,
    auto: bool,
    yes: bool,
    only: str | None,
    diff: bool,
    lock_timeout: float,
    as_json: bool,
) -> None:
    """Consolidate MEMORY.md: promote, merge, reconcile, decay, forget.

    Without --apply or --auto it only prints the report; nothing is written.
    """
    if ctx.invoked_subcommand is not None:
        return
    from memcore.errors import LockBusy

    try:
        _dream(do_apply, auto, yes, only, diff, as_json, lock_timeout)
    except LockBusy as exc:
        raise LockBusy(f"another run is in progress ({exc})") from None


def _dream(
    do_apply: bool,
    auto: bool,
    yes: bool,
    only: str | None,
    diff: bool,
    as_json: bool,
    lock_timeout: float,
) -> None:
    from memcore.dream import cycle, report

    if do_apply and auto:
        raise click.UsageError("--apply and --auto exclude each other")
    ws = current_workspace()
    now = _now()
    steps = cycle.parse_steps(only)
    if auto:
        res = cycle.run_cycle(
            ws, now=now, mode="auto", steps=steps, lock_timeout=lock_timeout, keep_plan=True
        )
        plan = res.pop("plan")
        _warn(plan.warnings)
        if as_json:
            echo_json({**res, "proposals": report.plan_json(plan)})
        else:
            if diff:
                _echo_diff(ws, res)
            click.echo(report.auto_line(str(ws.root), res))
        if res["reviewPending"]:
            click.echo(report.reminder_line(res["reviewPending"]), err=True)
        return
    plan = cycle.preview(ws, now=now, steps=steps)
    _warn(plan.warnings)
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
    if plan.empty() and not plan.decays:
        if as_json:
            echo_json({"applied": False, "proposals": report.plan_json(plan)})
        else:
            click.echo(report.NOTHING)
        return
    choices: dict[int, str] = {}
    try:
        if plan.empty():
            ok = True  # only decay to do: nothing to ask about
        else:
            click.echo("\n".join(report.report_lines(plan, with_prompt=False)))
            for i, c in enumerate(plan.conflicts):
                choices[i] = "skip" if yes else _ask_conflict(c)
            ok = yes or _confirm(report.proposed_line(plan))
    except click.Abort:
        ok = False
    if not ok:
        click.echo(report.CANCELLED)
        return
    allow_loss = False
    if not yes:
        _merges, _deferred, ops, _resolved, _queued = cycle.chosen_ops(plan, "apply", choices)
        try:
            cycle.loss_check(plan, ops)
        except cycle.LossBoundExceeded as exc:
            click.echo(str(exc).split("; nothing was applied")[0] + ":")
            by_id = plan.doc.by_id()
            for eid in exc.affected:
                e = by_id.get(eid)
                click.echo(f"  [{eid}] {report.cut(e.text) if e is not None else ''}")
            if not click.confirm("Apply anyway?", default=False):
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
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@json_option
@handle_errors
def history_cmd(limit: int, as_json: bool) -> None:
    """List every run (newest first); an alias of `memcore history`."""
    from memcore.cli.history import print_history

    print_history(limit, as_json)


@dream_group.command("entries")
@json_option
@handle_errors
def entries_cmd(as_json: bool) -> None:
    """List MEMORY.md entries with their ids and metadata (for `memcore memory set`)."""
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
    _warn(doc.warnings)
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
@json_option
@handle_errors
def undo_cmd(run_id: str | None, as_json: bool) -> None:
    """Undo a run (default: the latest); an alias of `memcore undo`."""
    from memcore.cli.history import do_undo

    do_undo(run_id, as_json, 10.0)


@click.command("review")
@click.argument("item_id", required=False, type=int)
@click.argument("choice", required=False)
@json_option
@handle_errors
def review_cmd(item_id: int | None, choice: str | None, as_json: bool) -> None:
    """Settle conflicts and detail-losing merges that wait for a human.

    With no arguments it asks about each item; `memcore review ID CHOICE` settles one
    (A/B/skip for a conflict, apply/reject/skip for a merge); --json lists them.
    """
    from memcore.dream import review

    ws = current_workspace()
    if item_id is not None:
        if not choice:
            raise click.UsageError(
                "give a choice: A, B or skip (conflict); apply, reject or skip (merge)"
            )
        res = review.resolve(ws, item_id, choice, now=_now())
        if as_json:
            echo_json(res)
        else:
            click.echo(
                f"Review item {item_id}: {res['status']}"
                + (f" (run {res['runId']})" if res["runId"] else "")
            )
        return
    items = review.pending(ws)
    if as_json:
        echo_json({"items": items})
        return
    if not items:
        click.echo("Nothing waits for review.")
        return
    done = 0
    for it in items:
        click.echo(_describe(it))
        try:
            answer = _ask_item(it)
        except click.Abort:
            click.echo("Stopped.")
            break
        if answer == "skip":
            continue
        review.resolve(ws, it["itemId"], answer, now=_now())
        done += 1
    click.echo(f"Review: {done} settled, {len(review.pending(ws))} waiting.")


def _describe(it: dict[str, Any]) -> str:
    if it["kind"] == "conflict":
        return (
            f'#{it["itemId"]} conflict — "{it["topic"]}" ({it["reason"]})\n'
            f"  A [{it['a']['id']}] {it['a']['text'][:100]}\n"
            f"  B [{it['b']['id']}] {it['b']['text'][:100]}"
        )
    ids = " + ".join(f"[{x['id']}]" for x in [it["keeper"], *it["absorbed"]])
    return f'#{it["itemId"]} merge {ids}\n  → "{it["text"][:100]}"'


def _ask_item(it: dict[str, Any]) -> str:
    allowed = it["choices"]
    suffix = " [A/B/skip] " if it["kind"] == "conflict" else " [apply/reject/skip] "
    while True:
        answer = click.prompt("  Choice", default="skip", show_default=False, prompt_suffix=suffix)
        answer = answer.strip().lower()
        if answer in allowed:
            return answer
        click.echo(f"  Please answer one of: {', '.join(allowed)}.")


@click.command("set")
@click.argument("entry_id")
@click.option("--importance", type=click.FloatRange(0, 1), help="Importance 0-1.")
@click.option(
    "--pin/--unpin",
    "pinned",
    default=None,
    help="Pinned entries are never merged away or forgotten.",
)
@click.option(
    "--type",
    "type_",
    help="decision, convention, preference, fact, session_state, compact_summary, "
    "task_learning or unknown.",
)
@click.option("--scope", help="global, project or session.")
@json_option
@handle_errors
def set_cmd(
    entry_id: str,
    importance: float | None,
    pinned: bool | None,
    type_: str | None,
    scope: str | None,
    as_json: bool,
) -> None:
    """Set an entry's importance, pin, type or scope (pin/type/scope go into its marker)."""
    from memcore.dream.setmeta import set_entry

    if importance is None and pinned is None and type_ is None and scope is None:
        raise click.UsageError(
            "nothing to set: give --importance, --pin/--unpin, --type or --scope"
        )
    res = set_entry(
        current_workspace(),
        entry_id,
        now=_now(),
        importance=importance,
        pinned=pinned,
        type=type_.lower() if type_ else None,
        scope=scope.lower() if scope else None,
    )
    if as_json:
        echo_json(res)
        return
    click.echo(
        f"{res['id']}: importance={res['importance']:.2f} type={res['type']} scope={res['scope']} "
        f"pinned={'yes' if res['pinned'] else 'no'}"
    )


def register(root: click.Group) -> None:
    """Add ``dream``, ``review`` and ``memory set`` to the root group."""
    root.add_command(dream_group)
    root.add_command(review_cmd)
    grp = root.commands.get("memory")
    if not isinstance(grp, click.Group):
        grp = click.Group("memory", help="Memory commands.")
        root.add_command(grp)
    grp.add_command(set_cmd)
