"""Shared pieces of the command-line face: workspace resolution, errors, JSON output."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from memcore.errors import MemcoreError
from memcore.workspace.core import Workspace, resolve_workspace

F = TypeVar("F", bound=Callable[..., Any])


class CliState:
    def __init__(self, workspace: str | None) -> None:
        self.workspace_arg = workspace

    def workspace(self, *, must_exist: bool = True) -> Workspace:
        return resolve_workspace(self.workspace_arg, must_exist=must_exist)


def get_state() -> CliState:
    ctx = click.get_current_context()
    obj = ctx.find_object(CliState)
    if obj is None:  # invoked without the root group (tests of a sub-command)
        obj = CliState(None)
        ctx.obj = obj
    return obj


def current_workspace(*, must_exist: bool = True) -> Workspace:
    """The workspace chosen by -w, MEMCORE_WORKSPACE or the current directory."""
    return get_state().workspace(must_exist=must_exist)


def fail(message: str, code: int = 1) -> None:
    """Print ``Error: message`` on stderr and exit with ``code``."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def handle_errors(fn: F) -> F:
    """Turn domain errors into one line on stderr and the error's exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemcoreError as exc:
            fail(str(exc), exc.exit_code)
        except BrokenPipeError:
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def echo_json(data: Any) -> None:
    """One JSON document on stdout (keys are an API)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
