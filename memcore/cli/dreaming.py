"""``memcore dreaming``: the ``/dreaming`` chat command on the command line."""

from __future__ import annotations

import click

from memcore.cli.common import NamedArgument, current_workspace, echo_json, json_option

WORDS = ("off", "core", "rem", "deep", "status", "help")


@click.command("dreaming")
@click.argument(
    "word", cls=NamedArgument, required=False, type=click.Choice(WORDS, case_sensitive=False)
)
@json_option
def dreaming_cmd(word: str | None, as_json: bool) -> None:
    """The /dreaming chat command: a mode (off, core, rem, deep), status or help.

    A mode word writes it into memcore.toml; status and help never write.

    \b
    Examples:
      memcore dreaming status
      memcore dreaming rem                 # switch to the rem mode
      memcore dreaming status --json
    """
    from memcore.errors import ConfigError
    from memcore.promotion.commands import run_dreaming

    out = run_dreaming(current_workspace(), word or "help")
    if out["configError"]:
        raise ConfigError(out["reply"])
    if as_json:
        echo_json(out)
    else:
        click.echo(out["reply"])
