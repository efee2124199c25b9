"""The README documents every command, and its first two commands stay true."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from memcore.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands(
    cmd: click.Command, prefix: tuple[str, ...]
) -> list[tuple[tuple[str, ...], click.Command]]:
    out = [(prefix, cmd)]
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            out.extend(_commands(sub, (*prefix, name)))
    return out


COMMANDS = [(p, c) for p, c in _commands(cli, ("memcore",)) if len(p) > 1]


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_is_documented_with_help(path: tuple[str, ...], cmd: click.Command) -> None:
    assert " ".join(path) in README, f"README does not mention `{' '.join(path)}`"
    assert (cmd.help or "").strip(), f"`{' '.join(path)}` has no help text"


def test_readme_opens_with_install_and_test_commands() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    assert blocks[0].strip() == "pip install . && memcore -w examples/workspace memory promote"
    assert blocks[1].strip() == "pip install -e '.[test]' && python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert blocks[1].strip() in ci, ".ci/run must run the README's test command"


def test_example_workspace_command_shows_candidates(tmp_path: Path) -> None:
    import shutil

    from click.testing import CliRunner

    ws = tmp_path / "workspace"
    shutil.copytree(ROOT / "examples" / "workspace", ws)
    r = CliRunner().invoke(cli, ["-w", str(ws), "memory", "promote", "--json"])
    assert r.exit_code == 0, r.output
    import json

    assert json.loads(r.stdout)["candidates"], "the README's first command must show candidates"
