"""Commands of this face are registered here (work in progress)."""

import click


def register(root: click.Group) -> None:
    """Add this module's commands to the root group."""
