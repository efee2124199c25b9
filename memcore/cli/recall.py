"""``memcore recall``: read short memories, their versions and sources (paged)."""

from __future__ import annotations

import re
from typing import Any

import click

from memcore.cli.common import IntRange, current_workspace, echo_json, json_option


@click.group("recall")
def recall_group() -> None:
    """Read short memories, their versions and sources (paged; never calls a model).

    \b
    Examples:
      memcore recall global
      memcore recall sessions --json
      memcore recall session 5b7c2e0a --from 0 --to 5
    """


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


class Cursor(click.types.StringParamType):
    """A page cursor as an earlier page printed it: ``N`` or ``N:M`` (digits)."""

    name = "cursor"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip()
        if not re.fullmatch(r"\d+(?::\d+)?", text):
            self.fail(
                f"{value!r} is not a cursor; allowed: the next cursor an earlier page printed "
                "(N or N:M)",
                param,
                ctx,
            )
        return text


cursor_option = click.option(
    "--cursor", type=Cursor(), help="Continue from a previous page's next cursor."
)
version_option = click.option(
    "--version", "version", type=IntRange(min=1), help="Read an older version (1, 2...)."
)


@recall_group.command("global")
@version_option
@json_option
def recall_global(version: int | None, as_json: bool) -> None:
    """The global short memory (across all projects).

    \b
    Examples:
      memcore recall global
      memcore recall global --version 2 --json
    """
    _recall({"memory": "global", "version": version}, as_json)


@recall_group.command("projects")
@cursor_option
@json_option
def recall_projects(cursor: str | None, as_json: bool) -> None:
    """The projects (workspaces) with short memories.

    \b
    Examples:
      memcore recall projects
      memcore recall projects --cursor 20 --json
    """
    _recall({"memory": "projects", "cursor": cursor}, as_json)


@recall_group.command("project")
@click.argument("project_id")
@version_option
@json_option
def recall_project(project_id: str, version: int | None, as_json: bool) -> None:
    """A project's short memory.

    \b
    Examples:
      memcore recall project payrail-api-7fdf82
      memcore recall project payrail-api-7fdf82 --version 1
    """
    _recall({"memory": "project", "project": project_id, "version": version}, as_json)


@recall_group.command("sessions")
@click.option("--project", "project_id", help="Project id (default: this workspace).")
@click.option(
    "--query",
    help="Only sessions whose id, title or latest short memory holds every word of QUERY.",
)
@click.option(
    "--limit", type=IntRange(min=1, max=100), help="Sessions per page (1-100, default 20)."
)
@cursor_option
@json_option
def recall_sessions(
    project_id: str | None,
    query: str | None,
    limit: int | None,
    cursor: str | None,
    as_json: bool,
) -> None:
    """The sessions of a project, newest first.

    \b
    Examples:
      memcore recall sessions
      memcore recall sessions --project payrail-api-7fdf82 --json
      memcore recall sessions --query "webhook hmac" --limit 50
    """
    _recall(
        {
            "memory": "sessions",
            "project": project_id,
            "query": query,
            "limit": limit,
            "cursor": cursor,
        },
        as_json,
    )


@recall_group.command("session")
@click.argument("session_id")
@click.option("--from", "start", type=IntRange(min=0), help="First message index to read (from 0).")
@click.option("--to", "end", type=IntRange(min=0), help="Last message index to read (inclusive).")
@click.option("--project", "project_id", help="Project id (default: this workspace).")
@version_option
@cursor_option
@json_option
def recall_session(
    session_id: str,
    start: int | None,
    end: int | None,
    project_id: str | None,
    version: int | None,
    cursor: str | None,
    as_json: bool,
) -> None:
    """A session's short memory and versions, or its messages with --from/--to.

    \b
    Examples:
      memcore recall session 5b7c2e0a
      memcore recall session 5b7c2e0a --from 0 --to 5
    """
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
def recall_sources(reference: str, cursor: str | None, as_json: bool) -> None:
    """The sources of a memory version (REF like project:ID@v3), or a session:ID#N-M range.

    \b
    Examples:
      memcore recall sources project:payrail-api-7fdf82@v1
      memcore recall sources 'session:5b7c2e0a#0-5' --json
    """
    _recall({"memory": "sources", "reference": reference, "cursor": cursor}, as_json)
