"""Every exception class lives in memcore.errors, and its docstring tree tells the truth."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import memcore
from memcore import errors


def _all_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(memcore.__path__, "memcore."):
        if info.name not in ("memcore.__main__", "memcore.errors"):  # __main__ runs the command
            names.append(info.name)
    return names


def test_no_exception_class_is_defined_outside_errors() -> None:
    outside = []
    for name in _all_modules():
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional extra is missing
            continue
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
                and not attr.startswith("_")
            ):
                outside.append(f"{name}.{attr}")
    assert outside == []


def test_tree_gives_each_class_its_exit_code_and_status() -> None:
    doc = errors.__doc__ or ""
    rows = dict(
        (m.group(1), (int(m.group(2)), int(m.group(3))))
        for m in re.finditer(r"(\w+) \.*\s*exit (\d+)\s+HTTP (\d+)", doc)
    )
    classes = {
        name: cls
        for name, cls in vars(errors).items()
        if inspect.isclass(cls) and issubclass(cls, errors.MemcoreError)
    }
    assert set(rows) == set(classes)
    for name, cls in classes.items():
        assert rows[name] == (cls.exit_code, cls.http_status), name
    for signal in ("JobSkipped", "HTTPProblem"):
        assert signal in doc and not issubclass(getattr(errors, signal), errors.MemcoreError)


def test_tree_shows_each_class_under_its_base() -> None:
    lines = [ln for ln in (errors.__doc__ or "").splitlines() if " exit " in ln]
    depth = {}
    for ln in lines:
        name = re.search(r"\w+", ln.split("exit")[0].replace("─", " ")).group(0)
        depth[name] = len(re.match(r"[\s│├└─]*", ln).group(0))
    for name, d in depth.items():
        cls = getattr(errors, name)
        parents = [n for n, dd in depth.items() if dd < d]
        if d > min(depth.values()):
            assert cls.__mro__[1].__name__ in parents, name


def test_error_class_finds_only_memcore_errors() -> None:
    assert errors.error_class("LockBusy") is errors.LockBusy
    assert errors.error_class("JobSkipped") is None
    assert errors.error_class("Path") is None
    assert errors.error_class("") is None
