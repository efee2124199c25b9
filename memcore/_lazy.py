"""Lazy re-exports for the packages' ``__init__`` modules.

Each package names its public API in ``__all__`` and maps every name to the submodule that
defines it; the submodule is imported the first time the name is used. So ``from
memcore.recall import read_store`` works, while ``memcore --help`` and ``memcore memory record``
import only the modules they run (no numpy, Starlette or MCP SDK on those paths). Type checkers
read the same names from the package's ``if TYPE_CHECKING:`` imports.

Imports nothing of memcore, so every layer may use it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, exports: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``; ``exports`` maps a submodule (relative
    name) to the public names it defines."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
