"""Packaging: one version source, the licence, the changelog's shape."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import memcore
from memcore.workspace.core import Workspace
from tests.test_gateway_helpers import gateway

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_cli_and_healthz_report_the_package_metadata_version(ws: Workspace) -> None:
    expected = importlib.metadata.version("memcore")
    assert memcore.__version__ == expected
    out = subprocess.run(
        [sys.executable, "-m", "memcore", "--version"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    assert out.strip() == f"memcore, version {expected}"
    with gateway([ws], scheduler=False) as (_, client, _served):
        health = client.get("/healthz").json()
    assert health["version"] == expected


def test_the_version_is_written_only_in_pyproject() -> None:
    version = PYPROJECT["project"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:[.-]?\w+)*", version)
    literal = re.compile(r"__version__\s*=\s*[\"']|version\s*=\s*[\"']\d+\.\d+")
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "memcore").rglob("*.py")
        if literal.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_license_is_an_spdx_expression_with_its_file() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"  # a string, not the deprecated table
    assert project["license-files"] == ["LICENSE"]
    assert not any(c.startswith("License ::") for c in project["classifiers"])
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 memcore developers" in text
    requires = PYPROJECT["build-system"]["requires"]
    floors = [int(m[1]) for r in requires if (m := re.fullmatch(r"setuptools>=(\d+)", r))]
    assert floors and floors[0] >= 77


def test_project_urls_and_classifiers() -> None:
    project = PYPROJECT["project"]
    assert {"Homepage", "Documentation", "Repository", "Changelog"} <= set(project["urls"])
    assert all(u.startswith("https://") for u in project["urls"].values())
    assert "Typing :: Typed" in project["classifiers"]
    assert (ROOT / "memcore" / "py.typed").is_file()


def test_changelog_keeps_a_changelog_shape() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n")
    unreleased = text.split("## [Unreleased]\n", 1)[1].split("\n## [", 1)[0]
    sections = re.findall(r"^### (\w+)$", unreleased, flags=re.M)
    assert sections == ["Added", "Changed", "Fixed"]
    for section in re.split(r"^### \w+$", unreleased, flags=re.M)[1:]:
        entries = re.split(r"^- ", section, flags=re.M)[1:]
        assert entries, "an empty changelog section"
        # each entry names the command or API it is about
        assert all("`" in e for e in entries), [e for e in entries if "`" not in e]
