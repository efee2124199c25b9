"""Test isolation: no test touches the real home directory or the user's memcore config."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.workspace import Workspace


@pytest.fixture(autouse=True)
def _isolate_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for var in ("MEMCORE_WORKSPACE", "MEMCORE_TOKEN", "MEMCORE_USER_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEMCORE_USER_DIR", str(home / "memcore-user"))


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """An empty workspace with a memory/ folder."""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    return Workspace(root)


def write_note(ws: Workspace, name: str, text: str) -> Path:
    path = ws.memory_dir / name
    path.write_text(text, encoding="utf-8")
    return path
