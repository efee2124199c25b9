"""The click tree of the ``memcore`` command (:func:`memcore.cli.main` runs it).

The root lists its commands explicitly in :data:`COMMANDS`; each names the one module that
owns it (a group and all its sub-commands live in that module). Modules are imported only
when their command is used or listed, and import library code inside the commands, so
``memcore --help`` stays fast. Domain errors (:class:`memcore.errors.MemcoreError`) are caught
once, here, and exit with their class's ``exit_code`` after one ``Error:`` line on stderr.
"""

from __future__ import annotations

import importlib
import sqlite3
from typing import Any

import click

from memcore.cli.common import CliState, workspace_option
from memcore.cli.fast import error_exit
from memcore.errors import MemcoreError

__all__ = ["COMMANDS", "LazyGroup", "cli", "iter_commands"]

#: Every top-level command: name -> "module:attribute" of the click command or group.
COMMANDS: dict[str, str] = {
    "context": "memcore.cli.context:context_cmd",
    "dream": "memcore.cli.dream:dream_group",
    "dreaming": "memcore.cli.dreaming:dreaming_cmd",
    "gateway": "memcore.cli.gateway:gateway_cmd",
    "export": "memcore.cli.export:export_cmd",
    "history": "memcore.cli.history:history_group",
    "import": "memcore.cli.imports:import_cmd",
    "init": "memcore.cli.init:init_cmd",
    "mcp": "memcore.cli.mcp:mcp_cmd",
    "memory": "memcore.cli.memory:memory_group",
    "recall": "memcore.cli.recall:recall_group",
    "restore": "memcore.cli.history:restore_cmd",
    "review": "memcore.cli.review:review_cmd",
    "sessions": "memcore.cli.sessions:sessions_group",
    "status": "memcore.cli.status:status_cmd",
    "undo": "memcore.cli.history:undo_cmd",
}


class LazyGroup(click.Group):
    """A group whose sub-commands are imported on first use (click's LazyGroup pattern)."""

    def __init__(self, *args: Any, lazy_commands: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands and cmd_name not in self.commands:
            module_name, attr = self.lazy_commands[cmd_name].split(":")
            cmd = getattr(importlib.import_module(module_name), attr)
            if not isinstance(cmd, click.Command) or cmd.name != cmd_name:
                raise RuntimeError(
                    f"{self.lazy_commands[cmd_name]} is not the {cmd_name!r} command"
                )
            self.add_command(cmd)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (MemcoreError, sqlite3.Error, OSError) as exc:
            # As click reports a ClickException: one line on stderr, the class's exit code.
            state = ctx.find_object(CliState)
            report = error_exit(exc, state.workspace_arg if state else None)
            if report is None:  # a broken pipe: click's own handling
                raise
            click.echo(report[0], err=True)
            ctx.exit(report[1])


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@workspace_option()
@click.option("-v", "--verbose", is_flag=True, help="Log progress to stderr.")
@click.version_option(package_name="memcore", prog_name="memcore")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """memcore keeps an AI agent's markdown memory healthy.

    It records which daily-note snippets memory searches keep finding, promotes the best into
    MEMORY.md, consolidates long-term memory and turns finished sessions into short memories.
    MEMCORE_NOW (ISO 8601) sets memcore's clock for every command: a testing and replay aid.

    \b
    Examples:
      memcore init ~/agent                 # a new workspace
      memcore -w ~/agent memory search "staging database"
      memcore -w ~/agent dream             # what consolidation would change
    """
    import logging

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="memcore: %(message)s",
    )
    from memcore.errors import InputError
    from memcore.workspace.clock import fixed_now

    try:
        fixed_now()  # a bad MEMCORE_NOW is one line before any command runs
    except InputError as exc:
        click.echo(f"Error: {exc}", err=True)
        ctx.exit(2)
    ctx.ensure_object(CliState)


def iter_commands(
    group: click.Group = cli, path: tuple[str, ...] = ("memcore",)
) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command of the tree below ``group`` with its path, groups included (for docs
    and tests: a lazy group's ``commands`` holds only what was loaded so far)."""
    ctx = click.Context(group, info_name=path[-1])
    out: list[tuple[tuple[str, ...], click.Command]] = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        out.append(((*path, name), cmd))
        if isinstance(cmd, click.Group):
            out.extend(iter_commands(cmd, (*path, name)))
    return out
