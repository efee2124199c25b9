"""The ``memcore`` command: a thin click face over the library.

Each sub-module registers its commands; they import library modules lazily so that
``memcore --help`` stays fast.
"""

from __future__ import annotations

import logging

import click

from memcore.cli import dream, gateway, history, memory, search, sessions
from memcore.cli.common import CliState

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-w",
    "--workspace",
    metavar="DIR",
    help="Agent workspace (default: $MEMCORE_WORKSPACE, else the current directory).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log progress to stderr.")
@click.version_option(package_name="memcore", prog_name="memcore")
@click.pass_context
def cli(ctx: click.Context, workspace: str | None, verbose: bool) -> None:
    """memcore keeps an AI agent's markdown memory healthy.

    It records which daily-note snippets memory searches keep finding, promotes the best into
    MEMORY.md, consolidates long-term memory and turns finished sessions into short memories.
    """
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="memcore: %(message)s",
    )
    ctx.obj = CliState(workspace)


for _module in (memory, search, dream, gateway, sessions, history):
    _module.register(cli)


def main() -> None:
    cli()
