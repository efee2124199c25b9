"""One CLI style: who owns each command, --json with camelCase keys, --lock-timeout where the
lock is taken, examples in every help text, progress only on a terminal, --version."""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from memcore.cli import COMMANDS, cli, iter_commands
from memcore.workspace.core import Workspace
from memcore.workspace.jsonkeys import camel, camel_keys
from tests.conftest import held_lock, invoke, write_note

ROOT = Path(__file__).resolve().parent.parent
SERVERS = {("memcore", "gateway"), ("memcore", "mcp")}  # they serve JSON; they print none
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")


def _leaf_commands() -> list[tuple[tuple[str, ...], click.Command]]:
    """Commands that do something: leaves, and groups that run without a sub-command."""
    return [
        (path, cmd)
        for path, cmd in iter_commands()
        if not isinstance(cmd, click.Group) or cmd.invoke_without_command
    ]


def test_root_lists_exactly_its_registry_and_each_module_owns_its_tree() -> None:
    out = invoke(None, "--help").stdout
    listed = re.findall(r"^  (\S+)\s", out.split("Commands:")[1], re.M)
    assert listed == sorted(COMMANDS)
    for path, cmd in iter_commands():
        owner = COMMANDS[path[1]].split(":")[0]
        assert cmd.callback is not None and cmd.callback.__module__ == owner, path


def test_help_and_a_command_import_only_what_they_need() -> None:
    code = (
        "import sys\n"
        "from memcore.cli import cli\n"
        "try:\n    cli(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "mods = [m for m in sys.modules if m.startswith('memcore') or m == 'numpy']\n"
        "print(' '.join(sorted(mods)), file=sys.stderr)\n"
    )

    def loaded(*args: str) -> set[str]:
        proc = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT
        )
        return set(proc.stderr.split()[-1000:])

    top = loaded("--help")
    # memcore/__init__.py wires the journal's recovery into the workspace lock, and packages
    # re-export lazily through memcore._lazy: that much loads with the package; nothing else.
    package = {"memcore", "memcore._lazy", "memcore.workspace", "memcore.workspace.core"}
    library = {m for m in top if not m.startswith(("memcore.cli", "memcore.errors"))}
    assert "numpy" not in top and library <= package, sorted(library - package)
    assert {f"memcore.cli.{n}" for n in ("memory", "dream", "sessions")} <= top  # listed
    search_help = loaded("memory", "search", "--help")
    assert "memcore.cli.dream" not in search_help and "memcore.search.query" not in search_help


def test_every_command_has_json_except_the_servers() -> None:
    for path, cmd in _leaf_commands():
        names = {o for p in cmd.params if isinstance(p, click.Option) for o in p.opts}
        assert ("--json" in names) != (path in SERVERS), path


def test_help_texts_end_with_two_or_three_examples() -> None:
    for path, cmd in [(("memcore",), cli), *iter_commands()]:
        text = inspect.cleandoc(cmd.help or "")
        head, sep, block = text.rpartition("\b\nExamples:\n")
        assert sep and head.strip(), f"{' '.join(path)} has no closing Examples block"
        lines = [ln.strip() for ln in block.splitlines()]
        assert 2 <= len(lines) <= 3 and all("memcore " in ln for ln in lines), path
        for line in lines:  # each example calls this very command
            assert " ".join(path[1:]) in line or len(path) == 1, (path, line)


def test_version_comes_from_the_package_metadata() -> None:
    res = invoke(None, "--version")
    assert res.exit_code == 0
    assert res.stdout.strip() == f"memcore, version {importlib.metadata.version('memcore')}"


# -- JSON ---------------------------------------------------------------------------------


def test_camel_rewrites_only_snake_case_identifiers() -> None:
    assert camel("last_run") == "lastRun" and camel("memory_md") == "memoryMd"
    for data_key in ("memory/2026-11-06.md", "session:s0@v1", "2026-11-06", "Mixed_Case", "x"):
        assert camel(data_key) == data_key
    doc = {"a_b": [{"c_d": 1}, ("e_f",)], 3: {"g_h": None}}
    assert camel_keys(doc) == {"aB": [{"cD": 1}, ["e_f"]], 3: {"gH": None}}


def _snake_keys(data: Any, where: str = "") -> list[str]:
    if isinstance(data, dict):
        out = [f"{where}.{k}" for k in data if isinstance(k, str) and SNAKE.match(k)]
        for k, v in data.items():
            out += _snake_keys(v, f"{where}.{k}")
        return out
    if isinstance(data, list):
        return [x for v in data for x in _snake_keys(v, f"{where}[]")]
    return []


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The example workspace after a dream and a session dream (every table has rows)."""
    root = tmp_path_factory.mktemp("example") / "workspace"
    shutil.copytree(ROOT / "examples" / "workspace", root)
    ws = Workspace(root)
    env = {"MEMCORE_USER_DIR": str(root.parent / "user"), "HOME": str(root.parent)}
    assert invoke(ws, "dream", "--auto", env=env).exit_code == 0
    assert invoke(ws, "sessions", "dream", "--model", "extractive", env=env).exit_code == 0
    return ws


JSON_COMMANDS = [
    ["memory", "promote"],
    ["memory", "explain", "2026-11-06.md:16"],
    ["memory", "status"],
    ["memory", "search", "deploy freeze", "--no-record"],
    ["dream"],
    ["dream", "history"],
    ["dream", "entries"],
    ["review"],
    ["sessions", "status"],
    ["recall", "global"],
    ["recall", "projects"],
    ["recall", "sessions"],
    ["recall", "session", "2026-11-20-ledger-reversals"],
    ["recall", "session", "2026-11-20-ledger-reversals", "--from", "0", "--to", "2"],
    ["context"],
    ["dreaming", "status"],
    ["init"],
]


@pytest.mark.parametrize("args", JSON_COMMANDS, ids=[" ".join(a) for a in JSON_COMMANDS])
def test_json_keys_are_camel_case(example: Workspace, args: list[str]) -> None:
    env = {"MEMCORE_USER_DIR": str(example.root.parent / "user"), "HOME": str(example.root.parent)}
    res = invoke(example, *args, "--json", env=env)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc and _snake_keys(doc) == []


def test_init_json_lists_what_it_made_and_kept(tmp_path: Path) -> None:
    doc = json.loads(invoke(None, "init", str(tmp_path / "new"), "--json").stdout)
    assert doc == {
        "workspace": str(tmp_path / "new"),
        "created": ["memory/", "MEMORY.md", "memcore.toml"],
        "kept": [],
    }
    again = json.loads(invoke(tmp_path / "new", "init", "--json").stdout)  # -w is honoured
    assert again["created"] == [] and again["kept"] == ["memory/", "MEMORY.md", "memcore.toml"]


def test_dreaming_json_and_its_exit_codes(ws: Workspace) -> None:
    doc = json.loads(invoke(ws, "dreaming", "rem", "--json").stdout)
    assert doc["changed"] is True and doc["settings"]["mode"] == "rem"
    assert doc["reply"].startswith("Dreaming mode set to rem.")
    doc = json.loads(invoke(ws, "dreaming", "--json").stdout)
    assert doc["changed"] is False and doc["reply"].startswith("Usage: /dreaming")
    ws.config_path.write_text('[dreaming]\nmode = "turbo"\n', encoding="utf-8")
    res = invoke(ws, "dreaming", "status")
    assert res.exit_code == 1 and "mode = 'turbo' is not allowed" in res.stderr


# -- the lock -----------------------------------------------------------------------------

LOCKING = [
    ["memory", "promote", "--apply"],
    ["memory", "status", "--fix"],
    ["memory", "set", "portA", "--pin"],
    ["dream", "--auto"],
    ["dream", "undo"],
    ["review", "1", "a"],
]
HIT = json.dumps(
    [{"path": "memory/2026-11-20.md", "startLine": 3, "endLine": 3, "score": 0.9, "snippet": "x"}]
)


def test_every_locking_command_waits_lock_timeout_then_exits_75(ws: Workspace) -> None:
    """Each command that needs the lock honours --lock-timeout and MEMCORE_LOCK_TIMEOUT."""
    write_note(ws, "2026-11-20.md", "# Notes\n\n- The staging database is db-stg-02.\n")
    ws.memory_md.write_text("# Long-Term Memory\n\n- Port A is 8080.\n", encoding="utf-8")
    assert invoke(ws, "memory", "search", "staging database").exit_code == 0
    before = ws.memory_md.read_text(encoding="utf-8")
    with held_lock(ws):
        for i, args in enumerate(LOCKING):
            # half of them get the option, half the environment variable
            extra, env = (
                (["--lock-timeout", "0.2"], None)
                if i % 2
                else ([], {"MEMCORE_LOCK_TIMEOUT": "0.2"})
            )
            res = invoke(ws, *args, *extra, input=HIT, env=env)
            assert res.exit_code == 75, (args, res.output)
            assert "holds the lock" in res.stderr and "waited 0.2s" in res.stderr, args
        # Recording never fails on the lock: the hits wait in the recall log.
        for spelling in ("--lock-timeout", "--timeout"):  # the old spelling still works
            res = invoke(ws, "memory", "record", "-q", "x", spelling, "0.2", "--json", input=HIT)
            assert res.exit_code == 0 and json.loads(res.stdout)["folded"] is False
        res = invoke(ws, "memory", "search", "staging database", "--lock-timeout", "0.2")
        assert res.exit_code == 0 and "db-stg-02" in res.stdout
    res = invoke(ws, "memory", "record", "-q", "y", "--lock-timeout", "5", "--json", input=HIT)
    assert json.loads(res.stdout)["folded"] is True  # the lock is free again
    assert ws.memory_md.read_text(encoding="utf-8") == before


# -- progress -----------------------------------------------------------------------------

PTY_RUN = """
import os, pty, sys, threading
import memcore.cli.common as common
common.PROGRESS_DELAY = 0
master, slave = pty.openpty()
chunks = []
def drain():
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            return
        if not data:
            return
        chunks.append(data)
reader = threading.Thread(target=drain, daemon=True)
reader.start()
os.dup2(slave, 2)
os.close(slave)
from memcore.cli import cli
try:
    cli(sys.argv[1:])
except SystemExit:
    pass
os.close(2)
reader.join(10)
sys.stdout.write(b"".join(chunks).decode(errors="replace"))
"""


def _notes(ws: Workspace, n: int) -> None:
    for i in range(n):
        write_note(ws, f"2026-01-{i % 28 + 1:02d}-{i}.md", f"# Day {i}\n\n- Fact number {i}.\n")


def test_index_progress_is_drawn_on_a_terminal(ws: Workspace) -> None:
    _notes(ws, 40)
    proc = subprocess.run(
        [sys.executable, "-c", PTY_RUN, "-w", str(ws.root), "memory", "search", "fact", "-n", "1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={**os.environ, "TERM": "xterm"},
    )
    assert "Indexing memory" in proc.stdout and "40/40" in proc.stdout, proc.stdout[-500:]


def test_no_progress_when_stderr_is_not_a_terminal(ws: Workspace) -> None:
    import memcore.cli.common as common

    _notes(ws, 40)
    old, common.PROGRESS_DELAY = common.PROGRESS_DELAY, 0
    try:
        res = invoke(ws, "memory", "search", "fact", "-n", "1")
    finally:
        common.PROGRESS_DELAY = old
    assert res.exit_code == 0 and res.stderr == ""


def test_cli_choices_match_the_library() -> None:
    """The CLI spells its choices out (so --help imports no library code); they must stay
    the library's."""
    from memcore.cli import dream, dreaming, memory, review
    from memcore.dream.plan import STEPS
    from memcore.gateway.app import REVIEW_CHOICES
    from memcore.recall.entries import ORIGINS
    from memcore.workspace.config import MODES
    from memcore.workspace.entries import SCOPES, TYPES

    assert tuple(memory.ENTRY_TYPES) == tuple(TYPES)
    assert tuple(memory.SCOPES) == tuple(SCOPES)
    assert tuple(memory.ORIGINS) == tuple(ORIGINS)
    assert tuple(dream.STEPS) == tuple(STEPS)
    assert tuple(dreaming.WORDS) == (*MODES, "status", "help")
    assert set(review.CHOICES) == set(REVIEW_CHOICES)
