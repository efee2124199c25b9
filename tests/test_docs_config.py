"""docs/configuration.md lists every memcore.toml key the code reads, with its default and range.

The keys are found in the source: every ``get_number / get_bool / get_str / get_choice(cfg,
TABLE, "key", default, lo=…, hi=…)`` call, where TABLE is a string or a name bound to one in the
same function. A key added to the code without a row in the page fails here, and so does a row
whose default or range no longer matches the call.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
GETTERS = {"get_number", "get_bool", "get_str", "get_choice"}


@dataclass(frozen=True)
class Key:
    table: str
    key: str
    default: object  # a constant, or ... when the default is computed
    lo: object
    hi: object
    where: str


def _const(node: ast.expr | None) -> object:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ...


def config_keys() -> list[Key]:
    keys: list[Key] = []
    for path in sorted((ROOT / "memcore").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            names = {
                t.id: n.value.value
                for n in ast.walk(fn)
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                for t in n.targets
                if isinstance(t, ast.Name) and isinstance(n.value.value, str)
            }
            for call in ast.walk(fn):
                if not (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name)
                    and call.func.id in GETTERS
                    and len(call.args) >= 3
                ):
                    continue
                table_arg, key_arg = call.args[1], call.args[2]
                table = (
                    table_arg.value
                    if isinstance(table_arg, ast.Constant)
                    else names.get(table_arg.id)
                    if isinstance(table_arg, ast.Name)
                    else None
                )
                if table is None or not isinstance(key_arg, ast.Constant):
                    continue  # the validators' own plumbing (table and key passed through)
                kw = {k.arg: k.value for k in call.keywords}
                keys.append(
                    Key(
                        table,
                        key_arg.value,
                        _const(call.args[3]) if len(call.args) > 3 else None,
                        _const(kw.get("lo")),
                        _const(kw.get("hi")),
                        f"{path.relative_to(ROOT)}:{call.lineno}",
                    )
                )
    return keys


KEYS = config_keys()


def _section(table: str) -> str:
    parts = re.split(r"^(#{2,3} .*)$", PAGE, flags=re.M)
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        if f"`[{table}]`" in heading:
            return body
    raise AssertionError(f"docs/configuration.md has no section for [{table}]")


def _fmt(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float) and float(value).is_integer():
        return str(int(value))
    return str(value)


def test_the_source_scan_finds_the_tables() -> None:
    tables = {k.table for k in KEYS}
    assert {"dreaming", "search", "consolidation", "sessions", "llm"} <= tables
    assert len(KEYS) >= 25


@pytest.mark.parametrize("k", KEYS, ids=[f"[{k.table}] {k.key}" for k in KEYS])
def test_every_key_is_documented_with_its_default_and_range(k: Key) -> None:
    rows = [line for line in _section(k.table).splitlines() if line.startswith(f"| `{k.key}`")]
    assert rows, f"[{k.table}] {k.key} ({k.where}) has no row in docs/configuration.md"
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    default, allowed = cells[1], cells[2]
    if k.default not in (None, ...):
        assert _fmt(k.default) in default, f"[{k.table}] {k.key}: default {k.default!r}"
    if k.hi not in (None, ...):
        assert f"-{_fmt(k.hi)}" in allowed, f"[{k.table}] {k.key}: at most {k.hi!r}"
        assert re.search(rf"(\b{re.escape(_fmt(k.lo))}|`\w+`)-{re.escape(_fmt(k.hi))}", allowed), (
            f"[{k.table}] {k.key}: from {k.lo!r}"
        )
