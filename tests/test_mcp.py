"""The MCP server through the SDK's own stdio client (a real ``memcore mcp`` subprocess)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from memcore.errors import InputError
from memcore.mcp.server import read_lines, resolve_inside
from memcore.recall.store import read_store
from memcore.workspace.core import Workspace
from tests.test_gateway_helpers import FACT, seed_candidate


def call_all(ws: Workspace, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[Any]]:
    """Start ``python -m memcore mcp -w WS``, list the tools, run ``calls`` in order."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcore", "mcp", "-w", str(ws.root)],
        env={
            k: v
            for k, v in os.environ.items()
            if k.startswith(("HOME", "XDG_", "MEMCORE_", "PATH"))
        },
    )

    async def main() -> tuple[list[str], list[Any]]:
        with open(os.devnull, "w") as devnull:
            async with (
                stdio_client(params, errlog=devnull) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                tools = [t.name for t in (await s.list_tools()).tools]
                results = [await s.call_tool(name, args) for name, args in calls]
        return tools, results

    return asyncio.run(main())


def payload(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    if result.structured_content is not None:
        sc = result.structured_content
        return sc.get("result", sc) if isinstance(sc, dict) and set(sc) == {"result"} else sc
    return json.loads(result.content[0].text)


def test_tools_over_stdio(ws: Workspace) -> None:
    key = seed_candidate(ws)
    (ws.memory_dir / "2026-10-01.md").write_text(
        "# Notes\n\nThe backup job runs nightly at 02:00 on the NAS.\n", encoding="utf-8"
    )
    before = read_store(ws).entries[key]["recallCount"]
    tools, results = call_all(
        ws,
        [
            ("memory_search", {"query": "staging database password", "limit": 5}),
            ("memory_get", {"path": "memory/2026-10-01.md", "start_line": 3, "end_line": 3}),
            ("memory_get", {"path": "../outside.md"}),
            ("memory_get", {"path": "/etc/passwd"}),
            ("promote_preview", {}),
            ("dreaming", {"command": "rem"}),
            ("recall", {"memory": "global"}),
            ("recall", {"memory": "nonsense"}),
            (
                "memory_record",
                {"query": "nas backup", "results": [{"path": "/tmp/x/memory/2026-10-01.md",
                 "startLine": 3, "endLine": 3, "score": 0.9}]},
            ),
            (
                "memory_record",
                {"query": "nas backup", "origin": "agent", "results": [{"path":
                 "memory/2026-10-01.md", "startLine": 3, "endLine": 3, "score": 0.9}]},
            ),
        ],
    )  # fmt: skip
    assert {"memory_search", "memory_get", "dreaming", "promote_preview"} <= set(tools)

    search = payload(results[0])
    assert any(FACT in r["snippet"] for r in search["results"])
    assert search["recorded"] >= 1
    assert read_store(ws).entries[key]["recallCount"] == before + 1  # recorded like the CLI

    got = payload(results[1])
    assert (
        got["text"] == "The backup job runs nightly at 02:00 on the NAS." and got["startLine"] == 3
    )

    assert results[2].is_error and "'..'" in results[2].content[0].text
    assert results[3].is_error and "absolute" in results[3].content[0].text

    preview = payload(results[4])
    assert [c["key"] for c in preview["candidates"]] == [key]
    assert not ws.memory_md.exists()  # preview writes nothing

    reply = payload(results[5])
    assert reply.startswith("Dreaming mode set to rem.")
    assert 'mode = "rem"' in ws.config_path.read_text(encoding="utf-8")

    assert results[8].is_error and "outside the workspace" in results[8].content[0].text
    assert payload(results[9]) == {"recorded": 1, "keys": ["memory:memory/2026-10-01.md:3:3"]}
    nas = read_store(ws).entries["memory:memory/2026-10-01.md:3:3"]
    assert nas["recallCount"] == 1 and nas["userQueryHashes"] == []  # agent: no diversity

    if "recall" in tools:  # offered only when the sessions module is installed
        assert payload(results[6])["memory"] == "global"
        assert "nextCursor" in payload(results[6])  # camelCase, as the CLI and the HTTP API
        assert results[7].is_error and "nonsense" in results[7].content[0].text


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "non-empty"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/win.ini", "absolute"),
        ("\\\\server\\share\\x.md", "absolute"),
        ("memory/../../x.md", "'..'"),
        ("memory/.dreams/short-term-recall.json", ".dreams"),
        ("memcore.toml", "markdown"),
        ("memory/missing.md", "no file"),
        ("memory/link.md", "outside"),
    ],
)
def test_memory_get_refuses(ws: Workspace, tmp_path: Path, path: str, message: str) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("top secret\n", encoding="utf-8")
    (ws.memory_dir / "link.md").symlink_to(secret)
    with pytest.raises(InputError, match=message if message != "'..'" else r"'\.\.'"):
        resolve_inside(ws, path)


def test_memory_get_ranges(ws: Workspace) -> None:
    (ws.root / "MEMORY.md").write_text(
        "".join(f"line {i}\n" for i in range(1, 1001)), encoding="utf-8"
    )
    out = read_lines(ws, "MEMORY.md", 10, 12)
    assert out["text"] == "line 10\nline 11\nline 12" and out["totalLines"] is None
    assert out["nextCursor"] and read_lines(ws, "MEMORY.md", 999)["totalLines"] == 1000
    big = read_lines(ws, "MEMORY.md", 1, 1000)
    assert big["endLine"] == 500 and big["truncated"] is True
    past = read_lines(ws, "MEMORY.md", 2000)
    assert past["text"] == "" and past["endLine"] is None
    with pytest.raises(InputError):
        read_lines(ws, "MEMORY.md", 0)
    with pytest.raises(InputError):
        read_lines(ws, "MEMORY.md", 5, 4)
