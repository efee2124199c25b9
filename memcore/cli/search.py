"""``memcore memory search`` and ``memcore memory record``: search memory, feed the tracker.

Library modules (and numpy) are imported inside the commands so ``memcore --help`` stays fast.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import click

from memcore.cli.common import current_workspace, echo_json, fail, handle_errors, json_option


def _memory_group(root: click.Group) -> click.Group:
    """The ``memory`` group of the root (created here if the memory face has not made it)."""
    grp = root.commands.get("memory")
    if isinstance(grp, click.Group):
        return grp

    @click.group("memory")
    def memory() -> None:
        """Memory search, recall tracking and promotion into MEMORY.md."""

    root.add_command(memory)
    return memory


def register(root: click.Group) -> None:
    """Add ``memory search`` and ``memory record`` to the root group."""
    grp = _memory_group(root)
    grp.add_command(search_cmd)
    grp.add_command(record_cmd)


@click.command("search")
@click.argument("query")
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(1, 1000),
    default=10,
    show_default=True,
    help="Most hits to return.",
)
@click.option("--no-record", is_flag=True, help="Do not record the hits in the recall store.")
@json_option
@handle_errors
def search_cmd(query: str, limit: int, no_record: bool, as_json: bool) -> None:
    """Search MEMORY.md and memory/*.md, and record daily-note hits as recalls.

    Scores are in [0, 1]: about 0.85 or more when a query clearly targets one chunk.
    """
    from memcore.search.query import search

    ws = current_workspace()
    # The library logs a recording failure; here it is shown once, below, as a warning line.
    logging.getLogger("memcore.search.query").setLevel(logging.ERROR)
    result = search(ws, query, limit=limit, record=not no_record)
    for warning in result.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if result.record_error:
        click.echo(f"Warning: {result.record_error} (the search itself succeeded)", err=True)
    if as_json:
        echo_json(result.to_json())
        return
    if not result.results:
        click.echo("No matches.")
        return
    for hit in result.results:
        click.echo(f"{hit['path']}:{hit['startLine']}-{hit['endLine']}  score={hit['score']:.3f}")
        for line in hit["snippet"].splitlines():
            click.echo(f"    {line}")


ORIGIN_HELP = (
    "What issued the search: interactive (a search made to answer someone: the default), "
    "agent (one the agent ran on its own, e.g. automatic recall), schedule, backfill. Only "
    "interactive searches count toward the distinct-queries gate."
)


@click.command("record")
@click.option("--query", "-q", required=True, help="The query the hits were found for.")
@click.option(
    "--origin",
    type=click.Choice(["interactive", "agent", "schedule", "backfill"]),
    default="interactive",
    show_default=True,
    help=ORIGIN_HELP,
)
@click.option(
    "--timeout",
    type=click.FloatRange(0, 3600),
    default=0.0,
    show_default=True,
    help="Seconds to wait for the workspace lock to fold the hits into the store now. The "
    "hits are kept in the recall log either way (the next run folds them); never exits 75.",
)
@json_option
@handle_errors
def record_cmd(query: str, origin: str, timeout: float, as_json: bool) -> None:
    """Record search hits read as JSON on stdin (a list of results, or {"results": [...]}).

    This is how an agent with its own memory search feeds memcore's recall tracking. Only hits
    on daily notes (memory/YYYY-MM-DD.md) inside the workspace are recorded; a path outside
    it is refused.
    """
    import json

    from memcore.recall.scoring import Thresholds, passes_gates
    from memcore.recall.store import record_recalls
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import dreaming_settings, load_config

    raw = sys.stdin.read()
    try:
        doc: Any = json.loads(raw)
    except ValueError as exc:
        fail(f'stdin is not JSON ({exc}); expected a list of results or {{"results": [...]}}')
    if isinstance(doc, dict) and "results" in doc:
        doc = doc["results"]
    if not isinstance(doc, list):
        fail('stdin must be a JSON list of results or an object {"results": [...]}')
    if not query.strip():
        fail("--query must not be empty")
    ws = current_workspace()
    settings = dreaming_settings(load_config(ws))
    th = Thresholds.from_settings(settings).sanitized()
    now = utcnow()
    res = record_recalls(
        ws,
        query,
        doc,
        now=now,
        max_entries=settings.max_entries,
        protect=lambda entry: passes_gates(entry, now, th),
        lock_timeout=timeout,
        origin=origin,
    )
    for notice in [*res.notices, *([res.fold_error] if res.fold_error else [])]:
        click.echo(f"Warning: {notice}", err=True)
    if as_json:
        echo_json({"recorded": res.recorded, "keys": res.keys, "folded": res.folded})
    else:
        click.echo(f"Recorded {res.recorded} recall(s).")
