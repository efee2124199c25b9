"""The README's first two commands stay true; the generated references are current and complete."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import click
import pytest

from memcore.cli import iter_commands

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"


COMMANDS = iter_commands()


def test_readme_opens_with_install_and_test_commands() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    assert blocks[0].strip() == "pip install . && memcore -w examples/workspace memory promote"
    assert blocks[1].strip() == "pip install -e '.[test]' && python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert blocks[1].strip() in ci, ".ci/run must run the README's test command"


def test_readme_stays_short_and_its_links_exist() -> None:
    assert len(README.splitlines()) <= 150, "the README is at most 150 lines; move text to docs/"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to missing {target}"


def test_example_workspace_command_shows_candidates(tmp_path: Path) -> None:
    from tests.conftest import invoke

    ws = tmp_path / "workspace"
    shutil.copytree(ROOT / "examples" / "workspace", ws)
    r = invoke(ws, "memory", "promote", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["candidates"], "the README's first command must show candidates"


@pytest.mark.parametrize("page", ["cli.md", "mcp.md"])
def test_generated_reference_is_current(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cog -r docs/PAGE` regenerates these pages; a stale one fails here and in CI."""
    from cogapp import Cog

    monkeypatch.chdir(ROOT)
    path = DOCS / page
    text = path.read_text(encoding="utf-8")
    assert Cog().process_string(text, fname=str(path)) == text, f"run: cog -r docs/{page}"


def reference_headings() -> set[str]:
    """Command paths with a heading of their own (``### memcore memory promote --help``, with
    or without backticks or ``--help``) in README.md or any page under docs/, wherever the
    reference lives."""
    heading = re.compile(r"^#+ `?(memcore(?: [a-z][\w-]*)*)(?: --help)?`?[ \t]*$", re.M)
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return {m for page in pages for m in heading.findall(page.read_text(encoding="utf-8"))}


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_help_and_a_reference_section(
    path: tuple[str, ...], cmd: click.Command
) -> None:
    name = " ".join(path)
    assert name in reference_headings(), f"no README.md or docs/ heading for `{name}`"
    assert (cmd.help or "").strip(), f"`{name}` has no help text"


def test_reference_headings_name_whole_command_paths() -> None:
    found = reference_headings()
    assert "memcore memory promote" in found and "memcore" in found
    assert "memcore memory promote --help" not in found  # paths, not heading texts


def test_every_http_route_is_documented_with_its_current_keys(tmp_path: Path) -> None:
    """Each route of the app has a section in docs/http-api.md, and each example answer there
    has the keys (recursively) that the gateway answers with today."""
    import httpx
    from starlette.routing import Route

    from memcore.gateway.app import create_app
    from memcore.gateway.server import GatewayOptions, serve_in_thread
    from memcore.gateway.workspaces import build_served

    page = (DOCS / "http-api.md").read_text(encoding="utf-8")
    sections = dict(
        (m.group(1), m.group(2))
        for m in re.finditer(r"^### (\w+ \S+)\n(.*?)(?=^### |\Z)", page, re.S | re.M)
    )
    root = tmp_path / "demo"
    shutil.copytree(
        ROOT / "examples" / "workspace", root, ignore=shutil.ignore_patterns("*.sqlite*")
    )
    from memcore import sessions
    from memcore.workspace.clock import utcnow
    from memcore.workspace.core import Workspace

    sessions.dream(Workspace(root), now=utcnow())  # as the page's examples were made
    from memcore.schedule import jobs as schedule

    schedule.load_job_modules()  # every job registered, as in `memcore gateway`, whatever ran
    opts = GatewayOptions(host="127.0.0.1", port=0, token="T", scheduler=False)
    with serve_in_thread(build_served([(None, root)]), opts) as gw:
        routes = {
            f"{method} {r.path}"
            for r in create_app(gw.gateway).routes
            if isinstance(r, Route)
            for method in sorted(set(r.methods or ()) - {"HEAD"})
        }
        documented = routes - {"GET /", "GET /static/{name}"}
        assert documented <= set(sections), f"undocumented: {sorted(documented - set(sections))}"
        base = f"http://127.0.0.1:{gw.port}"
        checked = 0
        for name, body in sections.items():
            method, path = name.split(" ", 1)
            request = re.search(r"Request: `\w+ (\S+)`(?: with `(.*?)`)?", body)
            shown = re.search(r"```json\n(.*?)```", body, re.S)
            assert request and shown, f"{name}: no example request and answer"
            if method == "GET":
                live = httpx.get(base + request.group(1))
            else:
                data = json.loads(request.group(2) or "{}")
                live = httpx.post(base + path, json=data, headers={"Authorization": "Bearer T"})
            assert live.status_code == 200, (name, live.text)
            assert _keys(json.loads(shown.group(1))) == _keys(live.json()), name
            checked += 1
    assert checked == len(documented)


def _keys(value: Any) -> Any:
    """The shape of a JSON value: dict keys recursively, a list by its first item."""
    if isinstance(value, dict):
        return {k: _keys(v) for k, v in value.items() if v not in (None, [], {})}
    if isinstance(value, list) and value:
        return [_keys(value[0])]
    return None


def test_every_mcp_tool_is_documented() -> None:
    from memcore.mcp.server import build_server
    from memcore.workspace.core import Workspace

    tools = asyncio.run(build_server(Workspace(ROOT / "examples" / "workspace")).list_tools())
    page = (DOCS / "mcp.md").read_text(encoding="utf-8")
    for tool in tools:
        assert f"### `{tool.name}`" in page, f"docs/mcp.md does not document {tool.name}"


def test_every_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        rel = page.relative_to(DOCS).as_posix()
        assert f": {rel}" in nav, f"mkdocs.yml nav does not list {rel}"
