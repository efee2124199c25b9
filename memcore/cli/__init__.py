"""The ``memcore`` command: a thin click face over the library (:mod:`memcore.cli.root`).

``main`` first offers the command line to :mod:`memcore.cli.fast`, which runs the plain
``memcore memory record`` an agent issues after every search without importing click; every
other command line goes to the click command. The click tree's names are exported lazily, so
``memcore memory record`` never loads it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.cli.root import COMMANDS, LazyGroup, cli, iter_commands

__all__ = ["COMMANDS", "LazyGroup", "cli", "iter_commands", "main"]

__getattr__, __dir__ = lazy_exports(
    __name__, {"root": ("COMMANDS", "LazyGroup", "cli", "iter_commands")}
)


def main() -> None:
    from memcore.cli.fast import run_fast

    code = run_fast(sys.argv[1:])
    if code is not None:
        # The recording is on disk and its files are closed: skip the interpreter's teardown
        # (freeing every module and object one by one costs a recording's work again).
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            code = code or 1
        os._exit(code)
    from memcore.cli.root import cli

    cli()
