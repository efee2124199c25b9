"""Every exception class lives in memcore.errors, and its docstring tree tells the truth."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

from memcore import errors

ROOT = Path(__file__).resolve().parent.parent


FIND_OUTSIDE = """
import importlib, inspect, json, pkgutil
import memcore
outside = []
for info in pkgutil.walk_packages(memcore.__path__, "memcore."):
    if info.name in ("memcore.__main__", "memcore.errors"):  # __main__ runs the command
        continue
    try:
        module = importlib.import_module(info.name)
    except ImportError:  # an optional extra is missing
        continue
    for attr, value in vars(module).items():
        if (
            inspect.isclass(value)
            and issubclass(value, BaseException)
            and value.__module__ == info.name
            and not attr.startswith("_")
        ):
            outside.append(f"{info.name}.{attr}")
print(json.dumps(outside))
"""


def test_no_exception_class_is_defined_outside_errors() -> None:
    # In a fresh interpreter: importing every module registers jobs and the like, which
    # other tests must not see.
    proc = subprocess.run(
        [sys.executable, "-c", FIND_OUTSIDE], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert json.loads(proc.stdout) == []


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
