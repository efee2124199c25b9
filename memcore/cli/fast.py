"""A short path for ``memcore memory record``, the command an agent runs after every search.

Importing click, and what it loads (``uuid``, ``platform``, ``textwrap`` and their regular
expressions), cost more than recording the hits. So :func:`run_fast` takes the plain command
line of a recording, ``memcore [-w DIR] memory record -q QUERY [--origin O] [--json]`` with
valid values, and runs it here; it returns None for anything else (help, other options, a value
click would refuse), and the click command handles that. Both paths run
:func:`record_stdin` and report errors the same way, so they cannot disagree.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memcore.workspace.core import Workspace

__all__ = ["ORIGINS", "record_stdin", "run_fast"]

ORIGINS = ("interactive", "agent", "schedule", "backfill")  # memcore.recall.entries.ORIGINS
_WORKSPACE = ("-w", "--workspace")
_QUERY = ("-q", "--query")


def _echo(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _echo_err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def record_stdin(
    ws: Workspace,
    query: str,
    origin: str,
    lock_timeout: float,
    as_json: bool,
    echo: Callable[[str], None] = _echo,
    echo_err: Callable[[str], None] = _echo_err,
) -> None:
    """``memory record``: the hits read as JSON on stdin recorded for ``query``."""
    import orjson

    from memcore.errors import InputError
    from memcore.recall.scoring import cap_protection
    from memcore.recall.store import record_recalls
    from memcore.workspace.clock import utcnow
    from memcore.workspace.config import dreaming_settings, load_config

    raw = sys.stdin.read()
    try:
        doc: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:  # stricter than json (NaN, huge numbers): json decides
        import json

        try:
            doc = json.loads(raw)
        except ValueError as exc:
            raise InputError(
                f'stdin is not JSON ({exc}); expected a list of results or {{"results": [...]}}'
            ) from None
    if isinstance(doc, dict) and "results" in doc:
        doc = doc["results"]
    if not isinstance(doc, list):
        raise InputError('stdin must be a JSON list of results or an object {"results": [...]}')
    settings = dreaming_settings(load_config(ws))
    now = utcnow()
    res = record_recalls(
        ws,
        query,
        doc,
        now=now,
        max_entries=settings.max_entries,
        protect=cap_protection(settings, now),
        lock_timeout=lock_timeout,
        origin=origin,
    )
    for notice in [*res.notices, *([res.fold_error] if res.fold_error else [])]:
        echo_err(f"Warning: {notice}")
    if as_json:
        echo(json_text({"recorded": res.recorded, "keys": res.keys, "folded": res.folded}))
    else:
        echo(f"Recorded {res.recorded} recall(s).")


def json_text(data: Any) -> str:
    """The CLI's JSON document: keys in camelCase (the keys are an API), indented."""
    import json

    from memcore.workspace.jsonkeys import camel_keys

    return json.dumps(camel_keys(data), indent=2, ensure_ascii=False, default=str)


def error_exit(exc: BaseException, workspace_arg: str | None) -> tuple[str, int] | None:
    """The ``Error:`` line and exit code for an exception a command let through, or None for
    one to re-raise (the root command's handling, shared with the short path)."""
    import sqlite3

    from memcore.errors import MemcoreError

    if isinstance(exc, MemcoreError):
        return f"Error: {exc}", exc.exit_code
    if isinstance(exc, sqlite3.Error):  # a database failure the library did not name
        from memcore.workspace.core import resolve_workspace
        from memcore.workspace.db import translate

        err = translate(exc, resolve_workspace(workspace_arg, must_exist=False).db_path)
        return f"Error: {err}", err.exit_code
    if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"Error: {where}{exc.strerror or exc}", 1
    return None


def parse(argv: list[str]) -> tuple[str | None, str, str, bool] | None:
    """(workspace, query, origin, as_json) of a plain recording's command line, else None."""
    workspace: str | None = None
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        opt, value, i = _option(argv, i)
        if opt not in _WORKSPACE or value is None or workspace is not None:
            return None
        workspace = value
    if argv[i : i + 2] != ["memory", "record"]:
        return None
    query: str | None = None
    origin: str | None = None
    as_json = False
    i += 2
    while i < len(argv):
        if argv[i] == "--json" and not as_json:
            as_json, i = True, i + 1
            continue
        opt, value, i = _option(argv, i)
        if value is None:
            return None
        if opt in _QUERY and query is None:
            query = value
        elif opt == "--origin" and origin is None:
            origin = value
        else:
            return None
    if query is None or not query.strip() or (origin or "interactive") not in ORIGINS:
        return None
    return workspace, query, origin or "interactive", as_json


def _option(argv: list[str], i: int) -> tuple[str, str | None, int]:
    """(option, value, next index) at ``argv[i]``: ``-x V``, ``--xx V`` or ``--xx=V``; the
    value is None when it is missing or looks like an option (click decides those)."""
    arg = argv[i]
    if arg.startswith("--") and "=" in arg:
        opt, value = arg.split("=", 1)
        return opt, value, i + 1
    if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
        return arg, None, i + 1
    return arg, argv[i + 1], i + 2


def run_fast(argv: list[str]) -> int | None:
    """Run a plain ``memory record`` command line and return its exit code; None for any
    other command line (the click command runs it)."""
    parsed = parse(argv)
    if parsed is None:
        return None
    workspace, query, origin, as_json = parsed
    import logging

    logging.basicConfig(level=logging.WARNING, format="memcore: %(message)s")
    from memcore.errors import InputError
    from memcore.workspace.clock import fixed_now
    from memcore.workspace.core import resolve_workspace

    try:
        fixed_now()  # a bad MEMCORE_NOW is one line before any command runs
    except InputError as exc:
        _echo_err(f"Error: {exc}")
        return 2
    try:
        record_stdin(resolve_workspace(workspace), query, origin, 0.0, as_json)
    except KeyboardInterrupt:
        _echo_err("Aborted!")
        return 1
    except BrokenPipeError:
        # as click does: nothing more reaches the closed pipe, not even at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:
        report = error_exit(exc, workspace)
        if report is None:
            raise
        _echo_err(report[0])
        return report[1]
    return 0
