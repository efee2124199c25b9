"""``memcore recall``: read short memories, their versions and sources (paged)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

from memcore.cli.common import IntRange, current_workspace, echo_json, json_option

F = TypeVar("F", bound=Callable[..., Any])


@click.group("recall")
def recall_group() -> None:
    """Read short memories, their versions, sources and decisions (paged; never calls a
    model), and correct a short memory by hand with --edit.

    Messages are cited by stable references (session:ID#UUID where the transcript has
    uuids, else session:ID#@OFFSET:HASH; a range is FIRST..LAST), so a repaired or
    rewritten transcript moves no reference. Attachments (images, files) are shown as
    references: name, type, size and where they were, never their content.

    --edit writes a new immutable version of the latest short memory: the text of --text,
    or, without it, what you save in $EDITOR (VISUAL or EDITOR). It is redacted, checked
    against the level's limit, journaled with the exports, and `memcore undo ID` (the id
    it prints) brings the previous text back as the next version.

    \b
    Examples:
      memcore recall session 5b7c2e0a --from 0 --to 5
      memcore recall decisions --json
      memcore recall session 5b7c2e0a --edit      # opens $EDITOR on the current text
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
            for a in item.get("attachments", []):
                click.echo(f"    attachment: {_attachment_line(a)}")
        elif "quote" in item:
            click.echo(f"{item['ref']}  {item['session']}  {item['ts'] or item['created_at']}")
            click.echo(f"    {item['quote']}")
            refs = ", ".join(m["ref"] for m in item["messages"])
            click.echo(f"    from {refs} ({item['found_by']})")
        elif "kind" in item:
            click.echo(f"  {item['kind']:9} {item['ref']}  {item['preview'][:80]!r}")
            states: dict[str, int] = {}
            for m in item.get("messages", []):
                states[m["status"]] = states.get(m["status"], 0) + 1
            if states:
                click.echo(
                    "            messages: " + ", ".join(f"{n} {k}" for k, n in states.items())
                )
        else:
            key = item.get("project") or item.get("session")
            extra = " (independent)" if item.get("independent") else ""
            status = f" [{item['status']}]" if item.get("status") not in (None, "ok") else ""
            click.echo(
                f"{key}{extra}{status}  {item.get('ref') or '-'}  {item.get('preview', '')[:80]!r}"
            )
    for v in result.get("versions", []) if isinstance(result.get("versions"), list) else []:
        click.echo(f"  {v['ref']}  {v['created_at']}  messages {', '.join(v['messages'])}")
    if result.get("attachments"):
        click.echo("attachments:")
        for a in result["attachments"]:
            click.echo(f"  [{a['message']}] {_attachment_line(a)}")
    if result.get("memory") == "decisions":
        if not result.get("items"):
            click.echo("(no decisions recorded)")
        held = result.get("withheld") or []
        if held:
            n = sum(h["decisions"] for h in held)
            why = ", ".join(f"{h['session']} ({h['why']})" for h in held)
            click.echo(f"{n} withheld: from sessions that left sharing: {why}")
    if result.get("next_cursor"):
        click.echo(f"more: --cursor {result['next_cursor']}", err=True)


def _attachment_line(a: dict[str, Any]) -> str:
    size = f", {a['size']:,} bytes" if a.get("size") is not None else ""
    return (
        f"{a['kind']} {a.get('name') or '(unnamed)'} ({a.get('type') or 'unknown type'}{size})"
        f" at {a['location']}"
    )


def _edit(ref: str, text: str | None, as_json: bool) -> None:
    """``--edit``: the new text from --text or $EDITOR, one library call, the result."""
    from memcore.sessions.correct import edit
    from memcore.sessions.recall_api import recall
    from memcore.workspace.clock import utcnow

    ws = current_workspace()
    if text is None:
        level = ref.split(":", 1)[0]
        args: dict[str, Any] = {"memory": level}
        if level != "global":
            args[level] = ref.split(":", 1)[1]
        cur = recall(ws, args).get("current")
        if cur is None:
            raise click.ClickException(f"{ref}: no short memory yet; nothing to edit")
        text = click.edit(cur["text"] + "\n", extension=".md", require_save=True)
        if text is None:
            click.echo("edit cancelled: nothing saved, nothing changed", err=True)
            raise SystemExit(1)
    out = edit(ws, ref, text, now=utcnow())
    if as_json:
        echo_json(out)
        return
    click.echo(f"{out['memory']} -> {out['version']} (edited by hand)")
    if out["exports"]:
        click.echo(f"exports rewritten: {', '.join(out['exports'])} (run {out['journal_run']})")
    click.echo(f"undo with: {out['undo']}")


edit_option = click.option(
    "--edit", "editing", is_flag=True, help="Correct this short memory: a new version."
)
text_option = click.option(
    "--text", "text", help="With --edit: the new text (default: open $EDITOR on the current)."
)


def _no_text_without_edit(editing: bool, text: str | None, **others: Any) -> None:
    if text is not None and not editing:
        raise click.UsageError("--text goes with --edit")
    used = [f"--{k.replace('_', '-')}" for k, v in others.items() if v is not None]
    if editing and used:
        raise click.UsageError(f"--edit cannot be combined with {', '.join(used)}")


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


def limit_option(what: str) -> Callable[[F], F]:
    """``--limit``: items per page of a list, as the library's and the HTTP route's ``limit``."""
    return click.option(
        "--limit", type=IntRange(min=1, max=100), help=f"{what} per page (1-100, default 20)."
    )


@recall_group.command("global")
@version_option
@edit_option
@text_option
@json_option
def recall_global(version: int | None, editing: bool, text: str | None, as_json: bool) -> None:
    """The global short memory (across all projects).

    \b
    Examples:
      memcore recall global
      memcore recall global --version 2 --json
      memcore recall global --edit --text "- Prefer uv over pip."
    """
    _no_text_without_edit(editing, text, version=version)
    if editing:
        _edit("global", text, as_json)
        return
    _recall({"memory": "global", "version": version}, as_json)


@recall_group.command("projects")
@limit_option("Projects")
@cursor_option
@json_option
def recall_projects(limit: int | None, cursor: str | None, as_json: bool) -> None:
    """The projects (workspaces) with short memories.

    \b
    Examples:
      memcore recall projects
      memcore recall projects --cursor 20 --json
    """
    _recall({"memory": "projects", "limit": limit, "cursor": cursor}, as_json)


@recall_group.command("project")
@click.argument("project_id")
@version_option
@edit_option
@text_option
@json_option
def recall_project(
    project_id: str, version: int | None, editing: bool, text: str | None, as_json: bool
) -> None:
    """A project's short memory (--edit: this workspace's project only).

    \b
    Examples:
      memcore recall project payrail-api-7fdf82
      memcore recall project payrail-api-7fdf82 --version 1
      memcore recall project payrail-api-7fdf82 --edit
    """
    _no_text_without_edit(editing, text, version=version)
    if editing:
        _edit(f"project:{project_id}", text, as_json)
        return
    _recall({"memory": "project", "project": project_id, "version": version}, as_json)


@recall_group.command("sessions")
@click.option("--project", "project_id", help="Project id (default: this workspace).")
@click.option(
    "--query",
    help="Only sessions whose id, title or latest short memory holds every word of QUERY.",
)
@limit_option("Sessions")
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
@edit_option
@text_option
@json_option
def recall_session(
    session_id: str,
    start: int | None,
    end: int | None,
    project_id: str | None,
    version: int | None,
    cursor: str | None,
    editing: bool,
    text: str | None,
    as_json: bool,
) -> None:
    """A session's short memory and versions, or its messages with --from/--to (positions
    in the transcript as it is now; each message shows its stable reference).

    \b
    Examples:
      memcore recall session 5b7c2e0a
      memcore recall session 5b7c2e0a --from 0 --to 5
      memcore recall session 5b7c2e0a --edit --text "- Deploys go out on Tuesdays."
    """
    _no_text_without_edit(
        editing,
        text,
        version=version,
        **{"from": start, "to": end, "project": project_id, "cursor": cursor},
    )
    if editing:
        _edit(f"session:{session_id}", text, as_json)
        return
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
@limit_option("Sources")
@cursor_option
@json_option
def recall_sources(reference: str, limit: int | None, cursor: str | None, as_json: bool) -> None:
    """The sources of a memory version (REF like project:ID@v3), with each source message's
    stable reference and whether the transcript still says the same there (same, moved,
    changed, gone); or the messages of a message reference (session:ID#A..B, session:ID#A,
    or the older positional session:ID#N-M).

    \b
    Examples:
      memcore recall sources project:payrail-api-7fdf82@v1
      memcore recall sources 'session:5b7c2e0a#u-1..a-2' --json
      memcore recall sources 'session:5b7c2e0a#0-5'
    """
    _recall(
        {"memory": "sources", "reference": reference, "limit": limit, "cursor": cursor}, as_json
    )


@recall_group.command("decisions")
@click.option("--project", "project_id", help="Project id (default: this workspace).")
@click.option("--session", "session_id", help="One session's decisions, whatever its sharing.")
@limit_option("Decisions")
@cursor_option
@json_option
def recall_decisions(
    project_id: str | None,
    session_id: str | None,
    limit: int | None,
    cursor: str | None,
    as_json: bool,
) -> None:
    """Explicit user decisions, newest first: the verbatim quote (redacted), the messages it
    came from and who found it (pattern, model). Decisions of sessions that left sharing
    are withheld from the project list and counted.

    \b
    Examples:
      memcore recall decisions
      memcore recall decisions --project payrail-api-7fdf82 --json
      memcore recall decisions --session 5b7c2e0a --limit 50
    """
    _recall(
        {
            "memory": "decisions",
            "project": project_id,
            "session": session_id,
            "limit": limit,
            "cursor": cursor,
        },
        as_json,
    )
