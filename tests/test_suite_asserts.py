"""Every test function in tests/ checks something: it has an ``assert``, a ``pytest.raises``, or
calls a helper of tests/ named ``assert_*``/``check_*`` that itself asserts. Read from the source
with ``ast``; code in nested functions and lambdas does not count, since it may never run."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
HELPER_PREFIXES = ("assert_", "check_")


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function body, not descending into nested functions, lambdas, classes."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        yield child
        yield from _own_nodes(child)


def _called_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def checks_something(fn: ast.FunctionDef | ast.AsyncFunctionDef, helpers: set[str]) -> bool:
    """An assert, a ``pytest.raises``, or a call of one of ``helpers`` (asserting helpers)."""
    for node in _own_nodes(fn):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "raises"
                and isinstance(func.value, ast.Name)
                and func.value.id == "pytest"
            ):
                return True
            if _called_name(node) in helpers:
                return True
    return False


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def asserting_helpers(trees: list[ast.Module]) -> set[str]:
    """Names of the assert_*/check_* helpers that assert (directly or through another one); a
    ``check_*`` that returns a problem instead of asserting does not count."""
    candidates = [f for t in trees for f in _functions(t) if f.name.startswith(HELPER_PREFIXES)]
    found: set[str] = set()
    while True:
        more = {f.name for f in candidates if checks_something(f, found)} - found
        if not more:
            return found
        found |= more


def unchecked(sources: dict[str, str]) -> list[str]:
    """``file:line name`` of each test function (file name -> source) that checks nothing."""
    trees = {name: ast.parse(text, name) for name, text in sources.items()}
    helpers = asserting_helpers(list(trees.values()))
    return [
        f"{name}:{fn.lineno} {fn.name}"
        for name, tree in trees.items()
        for fn in _functions(tree)
        if fn.name.startswith("test_") and not checks_something(fn, helpers)
    ]


def test_the_checker_tells_a_hollow_test_from_a_real_one() -> None:
    hollow = (
        "def test_runs(ws):\n"
        "    ws.search('x')\n"
        "def test_only_in_a_callback(ws):\n"
        "    ws.on_change(lambda e: e)\n"
        "    def cb():\n"
        "        assert False\n"
        "def test_calls_a_helper_that_only_returns(ws):\n"
        "    check_quietly(ws)\n"
        "def check_quietly(x):\n"
        "    return x is None\n"
    )
    real = (
        "import pytest\n"
        "def test_asserts():\n"
        "    assert 1\n"
        "def test_raises():\n"
        "    with pytest.raises(ValueError):\n"
        "        int('x')\n"
        "def test_helper():\n"
        "    check_shape({})\n"
        "def check_shape(d):\n"
        "    assert_dict(d)\n"
        "def assert_dict(d):\n"
        "    assert isinstance(d, dict)\n"
    )
    assert unchecked({"hollow.py": hollow}) == [
        "hollow.py:1 test_runs",
        "hollow.py:3 test_only_in_a_callback",
        "hollow.py:7 test_calls_a_helper_that_only_returns",
    ]
    assert unchecked({"real.py": real}) == []


def test_every_test_function_checks_something() -> None:
    sources = {
        str(p.relative_to(TESTS)): p.read_text(encoding="utf-8") for p in TESTS.rglob("*.py")
    }
    assert len([n for n in sources if Path(n).name.startswith("test_")]) > 20
    found = unchecked(sources)
    assert found == [], "tests that check nothing:\n" + "\n".join(found)
