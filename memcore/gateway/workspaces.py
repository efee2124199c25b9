"""Which workspaces a gateway serves, and how a request names one.

Workspaces come from repeated ``-w DIR`` options or, when none is given, from the user file
``gateway.toml`` in ``$MEMCORE_USER_DIR`` (else ``platformdirs.user_config_dir("memcore")``)::

    [gateway]            # optional defaults for --host / --port
    port = 8787

    [[workspaces]]
    path = "~/agents/main"
    name = "main"        # optional; defaults to the folder name

A request names a workspace by its name or by its index (``?workspace=main`` or ``=0``).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcore.errors import ConfigError, UnknownWorkspace
from memcore.workspace.core import Workspace
from memcore.workspace.kinds import placed

USER_FILE = "gateway.toml"


@dataclass(frozen=True)
class Served:
    """One served workspace: its index, unique name and paths."""

    index: int
    name: str
    ws: Workspace

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "path": str(self.ws.root)}


def user_dir() -> Path:
    """The user's memcore folder: ``$MEMCORE_USER_DIR`` or the platform config dir."""
    env = os.environ.get("MEMCORE_USER_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("memcore"))


def user_file() -> Path:
    return user_dir() / USER_FILE


def read_user_file(path: Path | None = None) -> dict[str, Any]:
    """The parsed user gateway file ({} when absent). Invalid content raises ConfigError."""
    path = path or user_file()
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def workspaces_from_user_file(data: dict[str, Any], path: Path) -> list[tuple[str | None, Path]]:
    items = data.get("workspaces", [])
    if not isinstance(items, list):
        raise ConfigError(f"{path}: 'workspaces' must be an array of tables ([[workspaces]])")
    out: list[tuple[str | None, Path]] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            item = {"path": item}
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            raise ConfigError(f'{path}: workspaces[{i}] needs a path = "DIR"')
        name = item.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ConfigError(f"{path}: workspaces[{i}].name must be a non-empty string")
        p = Path(item["path"]).expanduser()
        if not p.is_absolute():
            p = path.parent / p
        out.append((name.strip() if name else None, p))
    return out


def build_served(specs: list[tuple[str | None, Path]]) -> list[Served]:
    """Unique names (folder name, then ``-2``, ``-3``…); each path must be a directory."""
    served: list[Served] = []
    used: set[str] = set()
    seen_paths: set[Path] = set()
    for name, path in specs:
        root = path.expanduser().absolute()
        if not root.is_dir():
            raise ConfigError(f"workspace {root} does not exist or is not a directory")
        if root.resolve() in seen_paths:
            continue
        seen_paths.add(root.resolve())
        base = name or root.name or "workspace"
        unique, n = base, 2
        while unique in used or unique.isdigit():
            unique, n = f"{base}-{n}", n + 1
        used.add(unique)
        served.append(Served(len(served), unique, placed(Workspace(root))))
    if not served:
        raise ConfigError(
            f"no workspace to serve: pass -w DIR (repeatable) or list them in {user_file()}"
        )
    return served


def pick(served: list[Served], selector: str | None) -> Served:
    """The workspace a request names (name or index); the first when not named."""
    if selector is None or selector == "":
        return served[0]
    for s in served:
        if s.name == selector:
            return s
    if selector.isascii() and selector.isdigit() and int(selector) < len(served):
        return served[int(selector)]
    names = ", ".join(f"{s.index}={s.name}" for s in served)
    raise UnknownWorkspace(f"no workspace {selector!r}; served: {names}")
