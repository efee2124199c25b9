"""Each package names its public API in ``__all__``, sorted, complete and importable.

In the spirit of httpx's ``test_exported_members``: ``__all__`` is sorted (ruff's isort-style
order: CONSTANTS, then Classes, then everything else, each in natural order), every name in it
resolves, and every public name the package ``__init__`` defines or re-exports is listed. The
re-exports are lazy (``memcore._lazy``), so the names the type checker sees (the ``if
TYPE_CHECKING:`` imports) must be the ones the package loads at run time.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import memcore

PACKAGES = [
    "workspace",
    "recall",
    "schedule",
    "journal",
    "promotion",
    "search",
    "judge",
    "dream",
    "sessions",
    "gateway",
    "mcp",
    "cli",
]
ROOT = Path(memcore.__file__).parent
HEAVY = ("numpy", "starlette", "uvicorn", "mcp.server.mcpserver", "onnxruntime")


def isort_key(name: str) -> tuple[int, list[int | str]]:
    if re.fullmatch(r"[A-Z0-9_]+", name) and any(c.isalpha() for c in name):
        kind = 0  # SCREAMING_SNAKE_CASE
    elif name[:1].isupper():
        kind = 1  # CamelCase
    else:
        kind = 2
    return kind, [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
    )


def defined_names(tree: ast.Module) -> set[str]:
    """Public names bound at the top level of the module by def, class or assignment."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        out.add(leaf.id)
    return {n for n in out if not n.startswith("_")}


def type_checking_reexports(tree: ast.Module, package: str) -> dict[str, str]:
    """Name -> defining submodule of the ``from memcore.<package>.<sub> import`` lines under
    ``if TYPE_CHECKING:``."""
    out: dict[str, str] = {}
    for node in tree.body:
        if not _is_type_checking(node):
            continue
        assert isinstance(node, ast.If)
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and (stmt.module or "").startswith(f"{package}."):
                for alias in stmt.names:
                    out[alias.asname or alias.name] = stmt.module or ""
    return out


def check_exports(package: str) -> None:
    mod = importlib.import_module(package)
    source = Path(mod.__file__ or "").read_text(encoding="utf-8")
    tree = ast.parse(source)
    exported = getattr(mod, "__all__", None)
    assert isinstance(exported, list), f"{package} has no __all__ list"
    assert exported == sorted(exported, key=isort_key), f"{package}.__all__ is not sorted"
    assert len(set(exported)) == len(exported), f"{package}.__all__ has duplicates"

    missing = [n for n in exported if not hasattr(mod, n)]
    assert not missing, f"{package}.__all__ names what does not exist: {missing}"

    lazy = type_checking_reexports(tree, package)
    for name, submodule in lazy.items():
        assert getattr(mod, name) is getattr(importlib.import_module(submodule), name), (
            f"{package}.{name} is not {submodule}.{name}"
        )
    unlisted = (defined_names(tree) | set(lazy)) - set(exported)
    assert not unlisted, (
        f"{package} defines or re-exports public names missing from __all__: "
        f"{sorted(unlisted)} (list them, or give them a leading underscore)"
    )


@pytest.mark.parametrize("name", PACKAGES)
def test_package_exports(name: str) -> None:
    check_exports(f"memcore.{name}")


def test_every_package_is_checked() -> None:
    on_disk = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert on_disk == set(PACKAGES)


def test_top_level_exports_the_version() -> None:
    assert memcore.__all__ == ["__version__"]
    assert "__version__" in dir(memcore)
    with pytest.raises(AttributeError):
        memcore.no_such_name  # noqa: B018


def test_lazy_names_are_listed_by_dir_and_unknown_names_raise() -> None:
    recall = importlib.import_module("memcore.recall")
    assert {"read_store", "Thresholds"} <= set(dir(recall))
    with pytest.raises(AttributeError, match="no_such_name"):
        recall.no_such_name  # noqa: B018


def test_package_inits_import_nothing_heavy() -> None:
    """Importing every package (names not yet used) loads no numpy, Starlette, uvicorn,
    MCP SDK or ONNX runtime: the lazy exports keep ``memcore memory record`` light."""
    code = (
        "import sys\n"
        f"for p in {PACKAGES!r}: __import__('memcore.' + p)\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_record_path_imports_nothing_heavy(tmp_path: Path) -> None:
    """``memcore memory record`` itself (not only its help) runs without the heavy libraries."""
    (tmp_path / "memory").mkdir()
    code = (
        "import sys\n"
        "from memcore.cli.fast import run_fast\n"  # what main() runs (then it exits at once)
        f"code = run_fast(['-w', {str(tmp_path)!r}, 'memory', 'record', '-q', 'deploy'])\n"
        "assert code == 0, code\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input="[]", capture_output=True, text=True, check=True
    )
    assert proc.stderr.strip().splitlines()[-1] == "[]"
