"""What every command shares: the workspace, option bundles, JSON output and progress.

Each option that more than one command takes is declared here once (``-w/--workspace``,
``--json``, ``--lock-timeout``, the promotion gates), so it is spelt, typed and documented the
same everywhere. Nothing heavy is imported at module level: ``memcore --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from memcore.workspace.core import Workspace
    from memcore.workspace.progress import Progress

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_LOCK_TIMEOUT = 10.0
PROGRESS_DELAY = 0.5  # seconds a step runs before its bar appears (quick steps stay quiet)


class CliState:
    """The root options a sub-command needs (today: the chosen workspace)."""

    def __init__(self, workspace: str | None = None) -> None:
        self.workspace_arg = workspace

    def workspace(self, *, must_exist: bool = True) -> Workspace:
        from memcore.workspace.core import resolve_workspace

        return resolve_workspace(self.workspace_arg, must_exist=must_exist)


def get_state() -> CliState:
    ctx = click.get_current_context()
    obj = ctx.find_object(CliState)
    if obj is None:  # a sub-command invoked without the root group
        obj = ctx.ensure_object(CliState)
    return obj


def current_workspace(*, must_exist: bool = True) -> Workspace:
    """The workspace chosen by -w, MEMCORE_WORKSPACE or the current directory."""
    return get_state().workspace(must_exist=must_exist)


# -- options ------------------------------------------------------------------------------

WORKSPACE_HELP = "Agent workspace (default: $MEMCORE_WORKSPACE, else the current directory)."


def _remember_workspace(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.ensure_object(CliState).workspace_arg = value


def workspace_option(*, multiple: bool = False, help: str = WORKSPACE_HELP) -> Callable[[F], F]:
    """``-w/--workspace DIR``: on the root (and on ``mcp``) it sets the workspace for the
    command; with ``multiple`` (``gateway``) it is a repeatable value named ``workspaces``."""
    if multiple:
        return click.option(
            "-w", "--workspace", "workspaces", multiple=True, metavar="DIR", help=help
        )
    return click.option(
        "-w",
        "--workspace",
        metavar="DIR",
        expose_value=False,
        is_eager=True,
        callback=_remember_workspace,
        help=help,
    )


json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document (camelCase keys)."
)


LOCK_TIMEOUT_HELP = "Seconds to wait for the workspace lock before giving up (exit 75)."
FOLD_TIMEOUT_HELP = (
    "Seconds to wait for the workspace lock to fold the hits into the recall store now; they "
    "wait in the recall log otherwise (the next run folds them). Never exits 75."
)


def lock_timeout_option(
    default: float = DEFAULT_LOCK_TIMEOUT,
    *,
    legacy: str | None = None,
    help: str = LOCK_TIMEOUT_HELP,
) -> Callable[[F], F]:
    """``--lock-timeout SECONDS`` (env ``MEMCORE_LOCK_TIMEOUT``): how long a command waits
    for the workspace lock. ``legacy`` is an older spelling kept hidden."""

    def decorate(fn: F) -> F:
        fn = click.option(
            "--lock-timeout",
            type=FloatRange(0, 3600),
            default=default,
            show_default=True,
            envvar="MEMCORE_LOCK_TIMEOUT",
            show_envvar=True,
            metavar="SECONDS",
            help=help,
        )(fn)
        if legacy is None:
            return fn

        def take_legacy(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
            if value is not None:
                ctx.meta["memcore.lock_timeout"] = value

        fn = click.option(
            legacy,
            "legacy_lock_timeout",
            type=FloatRange(0, 3600),
            hidden=True,
            expose_value=False,
            callback=take_legacy,
        )(fn)
        return fn

    return decorate


def lock_timeout_value(given: float) -> float:
    """The lock wait of this command: the hidden legacy spelling wins when it was used."""
    ctx = click.get_current_context()
    return float(ctx.meta.get("memcore.lock_timeout", given))


def threshold_options(fn: F) -> F:
    """The promotion gates, for commands that rank recalls."""
    fn = click.option(
        "--min-unique-queries",
        type=IntRange(min=0, max=32),
        help="Gate: distinct queries (default: config, else the mode's preset: 2).",
    )(fn)
    fn = click.option(
        "--min-recall-count",
        type=IntRange(min=0),
        help="Gate: recalls (default: config, else the mode's preset: 3).",
    )(fn)
    fn = click.option(
        "--min-score",
        type=FloatRange(0, 1),
        help="Gate: weighted score 0-1 (default: config, else the mode's preset: 0.75).",
    )(fn)
    return fn


def _allowed(t: click.IntRange | click.FloatRange) -> str:
    if t.min is not None and t.max is not None:
        return f"{t.min} to {t.max}"
    return f"{t.min} or more" if t.min is not None else f"{t.max} or less"


class IntRange(click.IntRange):
    """click's IntRange whose wrong-type error also says which integers are allowed."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, int):
            try:
                int(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not an integer; allowed: {_allowed(self)}", param, ctx)
        return super().convert(value, param, ctx)


class FloatRange(click.FloatRange):
    """click's FloatRange whose wrong-type error also says which numbers are allowed."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, int | float):
            try:
                float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number; allowed: {_allowed(self)}", param, ctx)
        return super().convert(value, param, ctx)


class NamedArgument(click.Argument):
    """An argument whose usage shows its choices but whose errors name it (``'CHOICE'``)."""

    def get_error_hint(self, ctx: click.Context | None) -> str:
        return f"'{self.name.upper() if self.name else self.human_readable_name}'"


def not_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Option/argument callback: refuse an empty or blank text (a usage error, exit 2)."""
    if value is not None and not value.strip():
        raise click.BadParameter("must not be empty", ctx=ctx, param=param)
    return value


# -- output -------------------------------------------------------------------------------


def echo_json(data: Any) -> None:
    """One JSON document on stdout, keys in camelCase (the keys are an API)."""
    import json

    from memcore.workspace.jsonkeys import camel_keys

    click.echo(json.dumps(camel_keys(data), indent=2, ensure_ascii=False, default=str))


def warn(lines: list[str]) -> None:
    for line in lines:
        click.echo(f"memcore: warning: {line}", err=True)


@contextlib.contextmanager
def progress_bar() -> Iterator[Progress | None]:
    """A progress callback that draws ``click.progressbar`` on stderr when stderr is a
    terminal (a step's bar appears once it has run PROGRESS_DELAY seconds), else None."""
    if not sys.stderr.isatty():
        yield None
        return
    current: dict[str, Any] = {}

    def close() -> None:
        bar = current.pop("bar", None)
        if bar is not None:
            bar.__exit__(None, None, None)

    def report(label: str, done: int, total: int) -> None:
        if current.get("label") != label:
            close()
            current.update(label=label, started=time.monotonic(), pos=0)
        bar = current.get("bar")
        if bar is None:
            if total < 2 or time.monotonic() - current["started"] < PROGRESS_DELAY:
                return
            bar = click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True)
            bar.__enter__()
            current["bar"] = bar
        bar.update(done - current["pos"])
        current["pos"] = done
        if done >= total:
            close()

    try:
        yield report
    finally:
        close()
