"""Test isolation: no test touches the real home directory or the user's memcore config."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memcore.workspace.core import Workspace


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
    # The suite's merge assertions are written for the built-in hashing backend, whatever is
    # installed; tests of the model backends name them in memcore.toml or drop this variable.
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """An empty workspace with a memory/ folder."""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    return Workspace(root)


def invoke(
    ws: Workspace | Path | None,
    *args: str,
    input: str | None = None,
    env: dict[str, str | None] | None = None,
    **extra: Any,
) -> Result:
    """Run ``memcore [-w WS] ARGS`` in this process, as a user would (the root group maps
    domain errors to exit codes). ``catch_exceptions=False``: anything else escaping a command
    fails the test with its traceback instead of hiding in ``result.exception``. ``extra``
    goes to ``CliRunner.invoke`` (``prog_name``, ``terminal_width``...)."""
    from memcore.cli import cli

    root = [] if ws is None else ["-w", str(ws.root if isinstance(ws, Workspace) else ws)]
    return CliRunner().invoke(
        cli, [*root, *args], input=input, env=env, catch_exceptions=False, **extra
    )


def write_note(ws: Workspace, name: str, text: str) -> Path:
    path = ws.memory_dir / name
    path.write_text(text, encoding="utf-8")
    return path


@contextlib.contextmanager
def held_lock(ws: Workspace) -> Iterator[subprocess.Popen[str]]:
    """Another process holding memcore's real workspace lock until the block ends."""
    code = (
        "import sys\nfrom pathlib import Path\nfrom memcore.workspace.core import Workspace\n"
        "with Workspace(Path(sys.argv[1])).lock(timeout=30):\n"
        "    print('held', flush=True)\n    sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(ws.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.communicate("", timeout=30)


def wait_healthy(url: str, proc: subprocess.Popen[Any], timeout: float = 30) -> None:
    """Poll ``url``/healthz until a gateway process answers 200; fail if it exits first or
    ``timeout`` seconds pass."""
    import time

    import httpx

    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline and proc.poll() is None, f"{url} never answered"
        time.sleep(0.05)
