"""Every recipe in docs/integrations/ works: the test writes each file the page tells the user
to create (fenced blocks with a ``title``), runs each command it shows (``bash`` blocks) with
a fresh HOME, starts the MCP servers its configuration names with the official MCP client, and
runs the Claude Code hooks it configures."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "integrations"
FENCE_RE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>\w+)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```",
    re.S | re.M,
)
TITLE_RE = re.compile(r'title="(?P<title>[^"]+)"')


def blocks(page: str) -> list[tuple[str, str | None, str]]:
    """(language, title, dedented body) of every fenced block of a page, in order."""
    out = []
    for m in FENCE_RE.finditer((PAGES / page).read_text(encoding="utf-8")):
        indent = len(m.group("indent"))
        body = "".join(ln[indent:] for ln in m.group("body").splitlines(keepends=True))
        t = TITLE_RE.search(m.group("info"))
        out.append((m.group("lang"), t.group("title") if t else None, body))
    return out


class Home:
    """A user's home for one recipe: HOME, a ``memcore`` on PATH, the commands' outputs."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.home.mkdir()
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "memcore"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memcore "$@"\n')
        shim.chmod(0o755)
        self.shim = shim
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_WORKSPACE")},
            "HOME": str(self.home),
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(ROOT),
            "MEMCORE_USER_DIR": str(tmp / "memcore-user"),
        }
        self.mcp: list[list[str]] = []  # server commands the recipe registers

    def path(self, title: str) -> Path:
        return Path(title.replace("~", str(self.home), 1))

    def sh(self, command: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", command],
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.home,
        )

    def run(self, page: str) -> list[subprocess.CompletedProcess[str]]:
        """Create the page's files and run its commands, in page order."""
        done = []
        for lang, title, body in blocks(page):
            if title:
                p = self.path(title)
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(body, encoding="utf-8")
                continue
            if lang != "bash":
                continue
            for line in body.splitlines():
                line = line.split("  #")[0].strip()
                if not line:
                    continue
                if line.startswith("claude mcp add"):
                    self.mcp.append(shlex.split(line.split(" -- ", 1)[1]))
                    continue
                if line.startswith("python "):
                    line = f'"{sys.executable}" ' + line[len("python ") :]
                r = self.sh(line)
                assert r.returncode == 0, (line, r.stdout, r.stderr)
                done.append(r)
        return done

    def tools(self, command: list[str]) -> tuple[list[str], dict[str, Any]]:
        """Start the server ``command`` names as a client would; its tools and a context."""
        from mcp import ClientSession, StdioServerParameters, stdio_client

        exe = str(self.shim) if command[0] == "memcore" else command[0]
        params = StdioServerParameters(  # "~" is passed as written: memcore expands it
            command=exe, args=command[1:], env=self.env, cwd=str(self.home)
        )

        async def main() -> tuple[list[str], dict[str, Any]]:
            with open(os.devnull, "w") as devnull:
                async with (
                    stdio_client(params, errlog=devnull) as (read, write),
                    ClientSession(read, write) as s,
                ):
                    await s.initialize()
                    names = [t.name for t in (await s.list_tools()).tools]
                    res = await s.call_tool("context", {"model_window": 32000})
                    assert not res.is_error, res.content[0].text
                    return names, json.loads(res.content[0].text)

        return asyncio.run(main())


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path)


def status(home: Home, ws: str) -> dict[str, Any]:
    r = home.sh(f"memcore -w {ws} status --json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_claude_code_recipe(home: Home) -> None:
    home.run("claude-code.md")
    ws = home.home / "app"
    assert (ws / "MEMORY.md").is_file()
    (server,) = home.mcp
    assert server == ["memcore", "mcp", "-w", "~/app"]
    tools, _ = home.tools(server)
    assert {"memory_search", "memory_record", "context", "recall"} <= set(tools)
    # a finished Claude Code session of this project, then the hooks as Claude Code runs them
    project = home.home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(ws))
    project.mkdir(parents=True)
    turns = [
        ("user", "We decided: the billing service runs on Postgres 16 from now on."),
        ("assistant", "Noted: billing runs on Postgres 16."),
    ]
    (project / "s1.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "type": role,
                    "uuid": f"u{i}",
                    "cwd": str(ws),
                    "timestamp": f"2026-11-20T10:0{i}:00.000Z",
                    "message": {"role": role, "content": text},
                }
            )
            + "\n"
            for i, (role, text) in enumerate(turns)
        )
    )
    settings = json.loads((home.home / ".claude" / "settings.json").read_text())
    hook_input = json.dumps({"session_id": "s1", "transcript_path": str(project / "s1.jsonl")})
    (stop,) = settings["hooks"]["Stop"][0]["hooks"]
    r = home.sh(stop["command"], stdin=hook_input)
    assert r.returncode == 0, r.stderr
    assert "session dream" in r.stdout
    (start,) = settings["hooks"]["SessionStart"][0]["hooks"]
    r = home.sh(start["command"], stdin=hook_input)
    assert r.returncode == 0, r.stderr
    direct = home.sh("memcore -w ~/app context")
    assert r.stdout == direct.stdout
    st = status(home, "~/app")
    assert st["kind"] == "memcore" and "MEMORY.md" in st["reads"]


def test_cursor_recipe(home: Home) -> None:
    home.run("cursor.md")
    cfg = json.loads((home.home / ".cursor" / "mcp.json").read_text())
    server = cfg["mcpServers"]["memcore"]
    tools, _ = home.tools([server["command"], *server["args"]])
    assert "memory_search" in tools
    rule = home.home / "app" / ".cursor" / "rules" / "memory.mdc"
    assert rule.read_text().startswith("---\ndescription:")


def test_codex_recipe(home: Home) -> None:
    memories = home.home / ".codex" / "memories"  # what Codex already wrote
    memories.mkdir(parents=True)
    (memories / "memory_summary.md").write_text("v1\n- Prefers pnpm over npm.\n")
    (memories / "MEMORY.md").write_text(
        "# Task Group: api\n\n## Reusable knowledge\n\n- CI: Node 22.\n"
    )
    before = {p.name: p.read_bytes() for p in memories.iterdir()}
    home.run("codex.md")
    cfg = tomllib.loads((home.home / ".codex" / "config.toml").read_text())
    server = cfg["mcp_servers"]["memcore"]
    tools, _ = home.tools([server["command"], *server["args"]])
    assert "context" in tools
    assert "Prefers pnpm over npm." in (home.home / "app" / "MEMORY.md").read_text()
    assert {p.name: p.read_bytes() for p in memories.iterdir()} == before
    assert status(home, "~/.codex/memories")["kind"] == "codex"


def test_hermes_recipe(home: Home) -> None:
    memories = home.home / ".hermes" / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text("The NAS backs up nightly.\n§\nVPN is wg0.\n")
    (memories / "USER.md").write_text("Name is Ana.\n")
    before = {p.name: p.read_bytes() for p in memories.iterdir()}
    home.run("hermes.md")  # imports, then undoes the import
    assert "VPN is wg0." not in (home.home / "app" / "MEMORY.md").read_text()
    assert {p.name: p.read_bytes() for p in memories.iterdir()} == before
    assert status(home, "~/.hermes/memories")["entries"] == 3


def test_openclaw_recipe(home: Home) -> None:
    ws = home.home / ".openclaw" / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-11-28-0755.md").write_text("# Morning\n\n- The VPN moved to wg0.\n")
    (ws / "MEMORY.md").write_text("# Long-Term Memory\n")
    home.run("openclaw.md")
    st = status(home, "~/.openclaw/workspace")
    assert st["kind"] == "openclaw"
    assert st["config"]["dreamingFrom"] == "memcore.toml" and st["config"]["mode"] == "off"
    assert not [w for w in st["warnings"] if "both memcore" in w]


def test_plain_mcp_client_recipe(home: Home) -> None:
    runs = home.run("mcp-client.md")
    out = runs[-1].stdout
    assert "'context'" in out and "'memory_search'" in out and "'recall'" in out
