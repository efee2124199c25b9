"""``memcore context``: the memory block an agent should load."""

from __future__ import annotations

import click

from memcore.cli.common import IntRange, current_workspace, echo_json, json_option


@click.command("context")
@click.option(
    "--model-window",
    type=IntRange(min=0),
    default=200_000,
    show_default=True,
    metavar="TOKENS",
    help="The agent model's context window.",
)
@json_option
def context_cmd(model_window: int, as_json: bool) -> None:
    """Print the memory block an agent should load (global + this project's short memory).

    \b
    Examples:
      memcore context
      memcore context --model-window 32000 --json
    """
    from memcore.sessions.context import context_block

    out = context_block(current_workspace(), model_window=model_window)
    if as_json:
        echo_json(out)
    else:
        click.echo(out["text"], nl=False)
        for w in out.get("withheld", []):
            why = ", ".join(
                f"session {b['session']} {b['why']}"
                if "session" in b
                else f"project {b['project']}"
                for b in w["because"]
            )
            click.echo(
                f"withheld {w['memory']} until the next session dream rebuilds it ({why})",
                err=True,
            )
