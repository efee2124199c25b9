"""Session dreaming commands: ``sessions dream|status``, ``recall …`` and ``context``."""

from __future__ import annotations

from typing import Any

import click

from memcore.cli.common import current_workspace, echo_json, handle_errors, json_option


@click.group("sessions")
def sessions_group() -> None:
    """Turn finished agent sessions into short memories."""


@sessions_group.command("dream")
@click.option(
    "--auto",
    "automatic",
    is_flag=True,
    help="Apply the automatic gates (enabled, count, interval).",
)
@click.option("--model", help="Model for this run ('extractive' for the offline one).")
@json_option
@handle_errors
def dream_cmd(automatic: bool, model: str | None, as_json: bool) -> None:
    """Review finished sessions now and update the short memories.

    A manual run ignores the interval and the candidate count, never the lease: if another
    run is in progress it exits 75."""
    from memcore.judge.llm import make_llm
    from memcore.sessions import dream
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import load_config

    ws = current_workspace()
    llm = make_llm(load_config(ws), model) if model else None
    report = dream(ws, now=utcnow(), automatic=automatic, llm=llm, clock=utcnow)
    if as_json:
        echo_json(report)
    else:
        click.echo(format_report(report))
    if report.get("status") == "failed":
        raise SystemExit(1)


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


@sessions_group.command("status")
@json_option
@handle_errors
def status_cmd(as_json: bool) -> None:
    """Candidates, budget, last run report and the health of MEMORY.md."""
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
        f"tokens today ({b['day']} UTC): {b['used']} of {b['budget']}"
        f" ({b['reserved_open']} reserved, unsettled)",
    ]
    if out["lease"]:
        lines.append(f"running: lease held until {out['lease']['expires_at']}")
    for u in out["unreadable"]:
        lines.append(f"unreadable: {u['session']}: {u['error']}")
    last = out["last_run"]
    if last and last.get("report"):
        lines += ["", "last report:", format_report(last["report"])]
    elif last:
        lines += ["", f"last run: {last['status']} {last.get('error') or ''}"]
    lines += ["", "health:", format_health(out["health"])]
    click.echo("\n".join(lines))


# -- recall -----------------------------------------------------------------------------


@click.group("recall")
def recall_group() -> None:
    """Read short memories, their versions and sources (paged; never calls a model)."""


def _print(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        echo_json(result)
        return
    if result.get("current") is not None or "current" in result:
        cur = result.get("current")
        click.echo(
            f"{cur['ref']} ({cur['created_at']})\n{cur['text']}" if cur else "(no short memory yet)"
        )
    if "text" in result and result.get("memory") == "sources":
        click.echo(result["text"])
        click.echo("sources:")
    for item in result.get("items", []):
        if "index" in item:
            click.echo(f"[{item['index']} {item['role']}] {item['text']}")
        elif "kind" in item:
            click.echo(f"  {item['kind']:9} {item['ref']}  {item['preview'][:80]!r}")
        else:
            key = item.get("project") or item.get("session")
            extra = " (independent)" if item.get("independent") else ""
            status = f" [{item['status']}]" if item.get("status") not in (None, "ok") else ""
            click.echo(
                f"{key}{extra}{status}  {item.get('ref') or '-'}  {item.get('preview', '')[:80]!r}"
            )
    for v in result.get("versions", []) if isinstance(result.get("versions"), list) else []:
        click.echo(f"  {v['ref']}  {v['created_at']}  messages {', '.join(v['messages'])}")
    if result.get("next_cursor"):
        click.echo(f"more: --cursor {result['next_cursor']}", err=True)


def _recall(args: dict[str, Any], as_json: bool) -> None:
    from memcore.sessions.recall_api import recall

    _print(recall(current_workspace(), {k: v for k, v in args.items() if v is not None}), as_json)


cursor_option = click.option("--cursor", help="Continue from a previous page's next cursor.")
version_option = click.option("--version", "version", type=int, help="Read an older version.")


@recall_group.command("global")
@version_option
@json_option
@handle_errors
def recall_global(version: int | None, as_json: bool) -> None:
    """The global short memory (across all projects)."""
    _recall({"memory": "global", "version": version}, as_json)


@recall_group.command("projects")
@cursor_option
@json_option
@handle_errors
def recall_projects(cursor: str | None, as_json: bool) -> None:
    """The projects (workspaces) with short memories."""
    _recall({"memory": "projects", "cursor": cursor}, as_json)


@recall_group.command("project")
@click.argument("project_id")
@version_option
@json_option
@handle_errors
def recall_project(project_id: str, version: int | None, as_json: bool) -> None:
    """A project's short memory."""
    _recall({"memory": "project", "project": project_id, "version": version}, as_json)


@recall_group.command("sessions")
@click.option("--project", "project_id", help="Project id (default: this workspace).")
@cursor_option
@json_option
@handle_errors
def recall_sessions(project_id: str | None, cursor: str | None, as_json: bool) -> None:
    """The sessions of a project, newest first."""
    _recall({"memory": "sessions", "project": project_id, "cursor": cursor}, as_json)


@recall_group.command("session")
@click.argument("session_id")
@click.option("--from", "start", type=int, help="First message index to read.")
@click.option("--to", "end", type=int, help="Last message index to read (inclusive).")
@click.option("--project", "project_id", help="Project id (default: this workspace).")
@version_option
@cursor_option
@json_option
@handle_errors
def recall_session(
    session_id: str,
    start: int | None,
    end: int | None,
    project_id: str | None,
    version: int | None,
    cursor: str | None,
    as_json: bool,
) -> None:
    """A session's short memory and versions, or its messages with --from/--to."""
    if end is not None and start is None:
        start = 0
    _recall(
        {
            "memory": "session",
            "session": session_id,
            "from": start,
            "to": end,
            "project": project_id,
            "version": version,
            "cursor": cursor,
        },
        as_json,
    )


@recall_group.command("sources")
@click.argument("reference")
@cursor_option
@json_option
@handle_errors
def recall_sources(reference: str, cursor: str | None, as_json: bool) -> None:
    """The sources of a memory version (REF like project:ID@v3), or a session:ID#N-M range."""
    _recall({"memory": "sources", "reference": reference, "cursor": cursor}, as_json)


@click.command("context")
@click.option(
    "--model-window",
    type=click.IntRange(min=0),
    default=200_000,
    show_default=True,
    metavar="TOKENS",
    help="The agent model's context window.",
)
@json_option
@handle_errors
def context_cmd(model_window: int, as_json: bool) -> None:
    """Print the memory block an agent should load (global + this project's short memory)."""
    from memcore.sessions.context import context_block

    out = context_block(current_workspace(), model_window=model_window)
    if as_json:
        echo_json(out)
    else:
        click.echo(out["text"], nl=False)


def register(root: click.Group) -> None:
    """Add this module's commands to the root group."""
    root.add_command(sessions_group)
    root.add_command(recall_group)
    root.add_command(context_cmd)
