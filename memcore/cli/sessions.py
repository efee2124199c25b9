"""``memcore sessions``: session dreaming (``dream``) and its ``status``."""

from __future__ import annotations

from typing import Any

import click

from memcore.cli.common import (
    current_workspace,
    echo_json,
    json_option,
    not_empty,
    progress_bar,
    warn,
)


@click.group("sessions")
def sessions_group() -> None:
    """Turn finished agent sessions into short memories.

    \b
    Examples:
      memcore sessions status
      memcore sessions dream --model extractive
    """


@sessions_group.command("dream")
@click.option(
    "--auto",
    "automatic",
    is_flag=True,
    help="Apply the automatic gates (enabled, count, interval).",
)
@click.option(
    "--model", callback=not_empty, help="Model for this run ('extractive' for the offline one)."
)
@click.option(
    "--session", "session", callback=not_empty, help="Dream only this session (its own memory)."
)
@click.option(
    "--project",
    "project",
    callback=not_empty,
    help="Dream only this project (this workspace's id): its sessions and project memory.",
)
@json_option
def dream_cmd(
    automatic: bool, model: str | None, session: str | None, project: str | None, as_json: bool
) -> None:
    """Review finished sessions now and update the short memories.

    A manual run ignores the interval and the candidate count, never the lease: if another
    run is in progress it exits 75.

    \b
    Examples:
      memcore sessions dream
      memcore sessions dream --auto        # only when the automatic gates say so
      memcore sessions dream --session 2026-11-20-ledger-reversals --json
    """
    if session and project:
        raise click.UsageError("--session and --project cannot be combined; pick one scope")
    if automatic and (session or project):
        raise click.UsageError("--auto runs every scope; drop --session / --project")
    report = _run_dream(model, automatic=automatic, session=session, project=project)
    warn(unsorted_lines(report.get("unsorted", [])))
    if as_json:
        echo_json(report)
    else:
        click.echo(format_report(report))
    if report.get("status") in ("failed", "stopped"):
        raise SystemExit(1)


def _run_dream(
    model: str | None, *, automatic: bool, session: str | None, project: str | None
) -> dict[str, Any]:
    """One session dream of this workspace in one scope, with progress on stderr; SIGTERM
    stops it cleanly (finished work kept)."""
    from memcore.judge.llm import make_llm
    from memcore.sessions import dream
    from memcore.sessions.control import StopEvent, stop_on_sigterm
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import load_config

    ws = current_workspace()
    llm = make_llm(load_config(ws), model) if model else None
    stop = StopEvent()
    with progress_bar() as progress, stop_on_sigterm(stop):
        return dream(
            ws,
            now=utcnow(),
            automatic=automatic,
            llm=llm,
            clock=utcnow,
            progress=progress,
            stop=stop,
            session=session,
            project=project,
        )


UNSORTED_SHOWN = 10


def unsorted_lines(lost: list[dict[str, str]]) -> list[str]:
    """One line per transcript of no project (the first ten; ``--json`` lists each)."""
    out = [f"unsorted: {u['warning']}" for u in lost[:UNSORTED_SHOWN]]
    if len(lost) > UNSORTED_SHOWN:
        out.append(f"unsorted: {len(lost) - UNSORTED_SHOWN} more (--json lists each)")
    return out


def format_report(report: dict[str, Any]) -> str:
    """Human text of a run report."""
    status = report.get("status")
    if status == "skipped":
        return f"not run: {report.get('reason')}"
    tokens = report.get("tokens", {})
    lines = [
        f"session dream {report.get('run_id', '')}: {status}"
        + (f" — {report['error']}" if report.get("error") else ""),
        f"model: {report.get('model')}, calls: {tokens.get('calls', 0)},"
        f" tokens charged: {tokens.get('charged', 0)}"
        f" (reserved {tokens.get('reserved', 0)})",
    ]
    for r in report.get("read", []):
        lines.append(
            f"read   {r['session']} messages {r['from']}-{r['to']}"
            f" ({r['level']}, {r['calls']} calls)"
        )
    for ref in report.get("wrote", []):
        lines.append(f"wrote  {ref}")
    for s in report.get("skipped", []):
        lines.append(f"skip   {s['session']}: {s['reason']}")
    if report.get("queued"):
        lines.append(f"queued for a later run: {len(report['queued'])} sessions")
    return "\n".join(lines)


def _jobs_db() -> Any:
    from memcore.sessions.store import ensure_schema
    from memcore.workspace.db import connect

    ws = current_workspace()
    ws.ensure_dreams_dir()
    conn = connect(ws.db_path)
    ensure_schema(conn)
    return conn


def _job_line(j: dict[str, Any]) -> str:
    scope = ", ".join(f"{k} {v}" for k, v in (j["scope"] or {}).items()) or "all sessions"
    p = j["progress"] or {}
    prog = f"{p.get('step', '')} {p.get('done', 0)}/{p.get('total', 0)}" if p else ""
    line = (
        f"{j['id']}  {j['status']:8} {scope}  {prog}  calls {j['calls']}, tokens {j['tokens']}"
        f"  started {j['started_at']}"
    )
    if j["error"]:
        line += f"\n    reason: {j['error']}"
    if j["stop_requested"] and j["status"] == "running":
        line += "\n    stop asked; it stops at its next checkpoint"
    return line


@sessions_group.command("jobs")
@json_option
def jobs_cmd(as_json: bool) -> None:
    """Session dream runs as jobs: running first, then the latest (kept 30 days).

    Each shows its scope, progress (sessions done / total, calls, tokens charged) and, for a
    failed or stopped one, the reason.

    \b
    Examples:
      memcore sessions jobs
      memcore sessions jobs --json
    """
    from memcore.sessions.control import jobs, usage_today
    from memcore.sessions.settings import sessions_settings
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import load_config

    now = utcnow()
    budget = sessions_settings(load_config(current_workspace())).daily_token_budget
    conn = _jobs_db()
    try:
        out = jobs(conn, now=now)
    finally:
        conn.close()
    usage = usage_today(budget, now)
    if as_json:
        echo_json({"jobs": out, "usage": usage})
        return
    click.echo("\n".join(_job_line(j) for j in out) or "no session dream has run yet")
    click.echo(
        f"tokens today: {usage['used']} of {usage['budget']} (UTC day {usage['day']},"
        f" every workspace of this user; resets {usage['resets_at']})"
    )


@sessions_group.command("stop")
@click.argument("run_id")
@json_option
def stop_cmd(run_id: str, as_json: bool) -> None:
    """Stop a running session dream (from any process): it keeps what it finished.

    \b
    Examples:
      memcore sessions stop 3f2a9c
      memcore sessions stop 3f2a9c --json
    """
    from memcore.errors import InputError
    from memcore.sessions.control import job, request_stop

    conn = _jobs_db()
    try:
        j = job(conn, run_id)
        if j["status"] != "running":
            raise InputError(f"session dream {j['id']} is {j['status']}, not running")
        request_stop(conn, str(j["id"]), "memcore sessions stop")
    finally:
        conn.close()
    if as_json:
        echo_json({"id": j["id"], "stop_requested": True})
    else:
        click.echo(f"asked {j['id']} to stop; it stops at its next checkpoint")


@sessions_group.command("retry")
@click.argument("run_id")
@click.option(
    "--model", callback=not_empty, help="Model for this run ('extractive' for the offline one)."
)
@json_option
def retry_cmd(run_id: str, model: str | None, as_json: bool) -> None:
    """Run a failed or stopped session dream again in its scope; it continues from the saved
    progress (finished sources are never read again).

    \b
    Examples:
      memcore sessions retry 3f2a9c
      memcore sessions retry 3f2a9c --model extractive --json
    """
    from memcore.errors import InputError
    from memcore.sessions.control import job

    conn = _jobs_db()
    try:
        j = job(conn, run_id)
    finally:
        conn.close()
    if j["status"] == "running":
        raise InputError(f"session dream {j['id']} is still running; stop it first")
    scope: dict[str, str] = dict(j["scope"] or {})  # type: ignore[call-overload]
    report = _run_dream(
        model, automatic=False, session=scope.get("session"), project=scope.get("project")
    )
    report["retry_of"] = j["id"]
    warn(unsorted_lines(report.get("unsorted", [])))
    if as_json:
        echo_json(report)
    else:
        click.echo(f"retry of {j['id']}\n" + format_report(report))
    if report.get("status") in ("failed", "stopped"):
        raise SystemExit(1)


@sessions_group.command("forget")
@click.argument("ref")
@click.option("--text", "text", required=True, help="The text to forget (lines holding it go).")
@click.option(
    "--purge",
    is_flag=True,
    help="Also remove it from older versions, previews, decisions, exports and their journal"
    " copies.",
)
@json_option
def forget_cmd(ref: str, text: str, purge: bool, as_json: bool) -> None:
    """Correct a short memory: a new version without the lines that hold TEXT.

    REF is a memory reference (session:ID@vN, project:ID@vN, global@vN) or one without
    @vN for the latest version. With --purge (a secret found later) the text is also replaced
    by [purged] everywhere memcore kept it; the result says what was removed.

    \b
    Examples:
      memcore sessions forget session:5b7c2e0a --text "staging password"
      memcore sessions forget global --text "hunter2" --purge --json
    """
    from memcore.sessions.correct import forget
    from memcore.workspace.clock import utcnow

    out = forget(current_workspace(), ref, text, purge=purge, now=utcnow())
    if as_json:
        echo_json(out)
        return
    lines = [
        f"{out['memory']}: {out['removed_lines']} line(s) removed"
        + (f", new version {out['version']}" if out["version"] else "")
    ]
    if purge:
        lines.append(
            f"purged from {len(out['purged_versions'])} version(s):"
            f" {', '.join(out['purged_versions']) or 'none'};"
            f" {out['purged_previews']} source preview(s);"
            f" {len(out['purged_decisions'])} decision(s)"
            + (f" ({', '.join(out['purged_decisions'])})" if out["purged_decisions"] else "")
            + ";"
            f" {out['purged_journal_copies']} journal copy(ies) of exports"
        )
        lines.append(f"left alone: {out['left_alone']}")
    if out["exports"]:
        lines.append(f"exports rewritten: {', '.join(out['exports'])} (run {out['journal_run']})")
    if out.get("undo"):
        lines.append(f"undo with: {out['undo']}")
    click.echo("\n".join(lines))


@sessions_group.command("status")
@json_option
def status_cmd(as_json: bool) -> None:
    """Candidates, budget, last run report and the health of MEMORY.md.

    \b
    Examples:
      memcore sessions status
      memcore sessions status --json
    """
    from memcore.sessions import status
    from memcore.sessions.health import format_health, health_report
    from memcore.workspace.clock import utcnow

    ws = current_workspace()
    out = status(ws, utcnow())
    out["health"] = health_report(ws)
    if as_json:
        echo_json(out)
        return
    b = out["budget"]
    lines = [
        f"session dreaming: {'enabled' if out['enabled'] else 'disabled'}"
        f" (project {out['project']})",
        f"sessions: {out['sessions']}, candidates: {len(out['candidates'])},"
        f" unreadable: {len(out['unreadable'])}",
        f"next automatic run: {'due' if out['next']['due'] else 'not due'}"
        f" — {out['next']['reason']}",
        f"tokens today ({b['day']} UTC, every workspace of this user): {b['used']} of {b['budget']}"
        f" ({b['reserved_open']} reserved, unsettled)",
    ]
    if out["lease"]:
        lines.append(f"running: lease held until {out['lease']['expires_at']}")
    if b.get("ledger_lost"):
        lines.append("the token ledger was lost with a corrupt database: today counts as spent")
    for u in out["unreadable"]:
        lines.append(f"unreadable: {u['session']}: {u['error']}")
    for u in out.get("unsupported", []):
        lines.append(f"unsupported: {u['session']} ({u['format']}): {u['error']}")
    lines += unsorted_lines(out.get("unsorted", []))
    for b in out.get("broken_lines", []):
        nums = ", ".join(map(str, b["lines"][:20])) + (" …" if len(b["lines"]) > 20 else "")
        lines.append(f"broken lines (not JSON, skipped): {b['file']}: line {nums}")
    held = out.get("withheld", {})
    for g in held.get("project", []):
        lines.append(
            f"left sharing: {g['session']} ({g['why']}): the project memory (and the global one)"
            " is not injected by `memcore context` until the next run rebuilds it without it"
        )
    if held.get("global") and not held.get("project"):
        names = ", ".join(f"{g['project']} ({g['state']})" for g in held["global"])
        lines.append(
            f"the global memory is not injected until it is rebuilt without sessions that left"
            f" sharing in: {names}"
        )
    for q in out.get("database", []):
        lost = "; ".join(f"{t} ({why})" for t, why in q["lost"].items()) or "nothing"
        lines.append(
            f"database {q['database']} was corrupt ({q['at']}): set aside; lost: {lost}."
            f" {q['restore']}"
        )
    last = out["last_run"]
    if last and last.get("report"):
        lines += ["", "last report:", format_report(last["report"])]
    elif last:
        lines += ["", f"last run: {last['status']} {last.get('error') or ''}"]
    lines += ["", "health:", format_health(out["health"])]
    click.echo("\n".join(lines))
