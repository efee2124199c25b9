"""Every typed option and argument of every command refuses a wrong value with exit 2 and one
``Error:`` line that names the parameter, the value and what is allowed.

The cases are built by walking the click tree, so a new command or option is covered as soon
as it exists; a parameter type this table does not know fails the test until it gets a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from memcore.cli import cli, iter_commands
from memcore.cli.common import not_empty
from memcore.cli.recall import Cursor
from tests.conftest import invoke


@dataclass(frozen=True)
class Case:
    path: tuple[str, ...]
    param: str
    argv: tuple[str, ...]
    bad: str
    allowed: str  # words of the "what is allowed" part of the message

    @property
    def id(self) -> str:
        return f"{' '.join(self.path[1:])} {self.param}={self.bad!r}"


def _free_text(t: click.ParamType) -> bool:
    """Any text is a valid value (checked later, against the workspace, if at all)."""
    return type(t) is click.types.StringParamType or isinstance(t, click.Path)


def _bad_values(t: click.ParamType) -> list[tuple[str, str]]:
    """(wrong value, words the error must contain) for a parameter type."""
    if isinstance(t, click.Choice):
        return [("bogus", "is not one of")]
    if isinstance(t, click.IntRange | click.FloatRange):
        out = [("abc", "allowed: ")]
        if t.min is not None:
            out.append((str(t.min - 1), "is not in the range"))
        if t.max is not None:
            out.append((str(t.max + 1), "is not in the range"))
        return out
    if isinstance(t, click.types.IntParamType):
        return [("abc", "is not a valid integer")]
    if isinstance(t, click.types.FloatParamType):
        return [("abc", "is not a valid float")]
    if isinstance(t, click.DateTime):
        return [("yesterday", "does not match the format")]
    if isinstance(t, Cursor):
        return [("abc", "allowed: the next cursor")]
    raise AssertionError(f"no bad value known for parameter type {t!r}: add a row")


def _good_value(p: click.Parameter) -> str:
    t = p.type
    if isinstance(t, click.Choice):
        return str(t.choices[0])
    if isinstance(t, click.IntRange | click.FloatRange):
        return str(t.min if t.min is not None else 1)
    return "x"


def _positionals(cmd: click.Command, target: click.Parameter | None, bad: str) -> list[str]:
    """Values for the arguments up to ``target`` (or the required ones), ``bad`` for it."""
    out: list[str] = []
    for p in cmd.params:
        if not isinstance(p, click.Argument):
            continue
        if p is target:
            out.append(bad)
            break
        if p.required or target is not None:
            out.append(_good_value(p))
    return out


def _required_options(cmd: click.Command, skip: click.Parameter) -> list[str]:
    out: list[str] = []
    for p in cmd.params:
        if isinstance(p, click.Option) and p.required and p is not skip:
            out += [p.opts[0], _good_value(p)]
    return out


def _cases() -> list[Case]:
    cases: list[Case] = []
    for path, cmd in [(("memcore",), cli), *iter_commands()]:
        for p in cmd.params:
            if isinstance(p, click.Option) and (p.is_flag or p.count):
                continue
            values = (
                [("", "must not be empty")]
                if p.callback is not_empty
                else []
                if _free_text(p.type)
                else _bad_values(p.type)
            )
            for bad, allowed in values:
                if isinstance(p, click.Argument):
                    tail = _positionals(cmd, p, bad)
                    name = (p.name or "").upper()
                else:
                    tail = [*_positionals(cmd, None, ""), p.opts[0], bad]
                    name = p.opts[0]
                argv = (*path[1:], *_required_options(cmd, p), *tail)
                cases.append(Case(path, name, argv, bad, allowed))
    return cases


CASES = _cases()


def test_the_table_covers_the_typed_parameters() -> None:
    covered = {(c.path, c.param) for c in CASES}
    for must in (
        (("memcore", "memory", "promote"), "--min-score"),
        (("memcore", "memory", "search"), "QUERY"),
        (("memcore", "memory", "set"), "--type"),
        (("memcore", "review"), "CHOICE"),
        (("memcore", "review"), "ITEM_ID"),
        (("memcore", "dreaming"), "WORD"),
        (("memcore", "gateway"), "--port"),
        (("memcore", "recall", "session"), "--cursor"),
        (("memcore", "dream"), "--lock-timeout"),
    ):
        assert must in covered, must
    assert len(CASES) > 60


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_wrong_value_is_a_one_line_usage_error(tmp_path: Path, case: Case) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    res = invoke(ws, *case.argv)
    assert res.exit_code == 2, (case.argv, res.output)
    errors = [line for line in res.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, res.stderr
    line = errors[0]
    assert f"'{case.param}'" in line, line  # names the option or argument
    assert case.bad in line, line  # the value
    assert case.allowed in line, line  # what is allowed
    assert "Traceback" not in res.output and res.stdout == ""
    assert sorted(p.name for p in ws.iterdir()) == ["memory"]  # nothing written


def test_dream_only_names_unknown_steps_and_the_allowed_ones(tmp_path: Path) -> None:
    res = invoke(tmp_path, "dream", "--only", "merge,sleep")
    assert res.exit_code == 2
    assert "Error: Invalid value for '--only': 'merge,sleep': unknown step(s) sleep" in res.stderr
    assert "allowed: comma list of promote, merge, reconcile, decay, forget" in res.stderr


def test_lock_timeout_from_the_environment_is_checked_too(tmp_path: Path) -> None:
    res = invoke(tmp_path, "memory", "status", env={"MEMCORE_LOCK_TIMEOUT": "soon"})
    assert res.exit_code == 2
    assert "'--lock-timeout' (env var: 'MEMCORE_LOCK_TIMEOUT'): 'soon'" in res.stderr
