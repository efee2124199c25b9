"""The agent as the judge over MCP: dream_pending and dream_decide through the SDK's own stdio
client (a real ``memcore mcp`` subprocess)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from memcore.dream import cycle, review, tables
from memcore.dream.undo import undo_run
from memcore.journal import runs as journal
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)

BODY = (
    "# Long-Term Memory\n\n"
    '<!-- memcore:entry id="ci-old" created="2026-10-01" -->\n'
    "- The payments service listens on port 8001.\n"
    '<!-- memcore:entry id="ci-new" created="2026-11-01" -->\n'
    "- The payments service listens on port 9001.\n"
    '<!-- memcore:entry id="lint1" created="2026-10-01" -->\n'
    "- Linting uses ruff.\n"
    '<!-- memcore:entry id="lint2" created="2026-11-01" -->\n'
    "- Lint with ruff 0.6 from pyproject.toml.\n"
    '<!-- memcore:entry id="vpn-old" created="2026-09-01" pinned="true" -->\n'
    "- The VPN gateway is vpn1.corp.example.\n"
    '<!-- memcore:entry id="vpn-new" created="2026-11-01" -->\n'
    "- The VPN gateway moved from vpn1.corp.example to vpn2.corp.example.\n"
)


def session(ws: Workspace, script: Callable[[Any], Any]) -> Any:
    """Run ``script(client_session)`` against ``python -m memcore mcp -w WS``."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcore", "mcp", "-w", str(ws.root)],
        env={
            k: v
            for k, v in os.environ.items()
            if k.startswith(("HOME", "XDG_", "MEMCORE_", "PATH"))
        }
        | {"MEMCORE_NOW": "2026-11-30T03:00:00Z"},
    )

    async def main() -> Any:
        with open(os.devnull, "w") as devnull:
            async with (
                stdio_client(params, errlog=devnull) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                return await script(s)

    return asyncio.run(main())


def payload(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    sc = result.structured_content
    if sc is not None:
        return sc.get("result", sc) if isinstance(sc, dict) and set(sc) == {"result"} else sc
    return json.loads(result.content[0].text)


def texts(ws: Workspace) -> list[str]:
    return [e.text for e in parse(ws.memory_md.read_text(encoding="utf-8")).entries]


def test_agent_lists_and_decides_in_one_undoable_run(ws: Workspace) -> None:
    ws.memory_md.write_text(BODY, encoding="utf-8")
    cycle.run_cycle(ws, now=NOW, mode="auto", steps=("reconcile",))  # queues the port pair
    assert len(review.pending(ws)) >= 1
    before = ws.memory_md.read_text(encoding="utf-8")

    async def script(s: Any) -> tuple[list[str], dict[str, Any], dict[str, Any], Any]:
        tools = [t.name for t in (await s.list_tools()).tools]
        first = payload(await s.call_tool("dream_pending", {"limit": 2}))
        items = list(first["items"])
        cursor = first["next"]
        while cursor:
            page = payload(await s.call_tool("dream_pending", {"cursor": cursor, "limit": 2}))
            items += page["items"]
            cursor = page["next"]
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for it in items:
            by_kind.setdefault(it["kind"], []).append(it)
        port = next(i for i in by_kind["conflict"] if i["a"]["id"] in ("ci-new", "ci-old"))
        lint = next(
            i for i in by_kind["pair"] if {i["a"]["id"], i["b"]["id"]} == {"lint1", "lint2"}
        )
        vpn = next(
            i for i in by_kind["pair"] if {i["a"]["id"], i["b"]["id"]} == {"vpn-old", "vpn-new"}
        )
        newer_vpn = "a" if vpn["a"]["id"] == "vpn-new" else "b"
        decisions = [
            {"item": port["item"], "choice": "a" if port["a"]["id"] == "ci-new" else "b"},
            {"item": lint["item"], "verdict": "same", "merged_text": "Lint with ruff."},
            {
                "item": lint["item"],
                "verdict": "same",
                "merged_text": "Linting uses ruff 0.6, configured in pyproject.toml.",
            },
            {"item": vpn["item"], "verdict": "supersedes", "newer": newer_vpn},
            {"item": "pair:nope:lint1:0123456789ab", "verdict": "same"},
            {"item": lint["item"].rsplit(":", 1)[0] + ":000000000000", "verdict": "same"},
            {"item": "review:99999", "choice": "a"},
            {"item": lint["item"], "verdict": "maybe"},
        ]
        out = payload(await s.call_tool("dream_decide", {"decisions": decisions}))
        return tools, first, out, lint

    tools, first, out, lint = session(ws, script)
    assert {"dream_pending", "dream_decide"} <= set(tools)
    assert first["total"] >= 3 and first["next"]
    sample = (
        next(i for i in first["items"] if i["kind"] == "pair")
        if any(i["kind"] == "pair" for i in first["items"])
        else lint
    )
    assert {"text", "type", "scope", "created", "pinned", "analysis"} <= set(sample["a"])
    assert "verdict" in sample["allowed"] and "memcore" in sample

    skipped = [s["reason"] for s in out["skipped"]]
    assert any("merge refused" in r and "0.6" in r for r in skipped)  # a detail was dropped
    assert any("pinned" in r for r in skipped)  # a pinned entry is never removed
    assert any(r.startswith("unknown item: no entry nope") for r in skipped)
    assert any(r.startswith("stale:") for r in skipped)
    assert any("no review item 99999" in r for r in skipped)
    assert any("verdict 'maybe' is not allowed" in r for r in skipped)
    actions = sorted(a["action"] for a in out["applied"])
    assert actions == ["merge", "resolve"]
    assert out["runId"]

    after = texts(ws)
    assert "Linting uses ruff 0.6, configured in pyproject.toml." in after
    assert "The payments service listens on port 9001." in after
    assert "The payments service listens on port 8001." not in after
    assert {"The VPN gateway is vpn1.corp.example."} <= set(after)  # pinned: stays
    with tables.connect(ws) as conn:
        run = journal.runs(conn)[0]
        assert run["runId"] == out["runId"] and run["kind"] == "agent"
    assert review.pending(ws) == [] or all(
        i["a"]["id"] not in ("ci-new", "ci-old") for i in review.pending(ws)
    )
    undo_run(ws, out["runId"], now=NOW)
    assert ws.memory_md.read_text(encoding="utf-8") == before


def test_stale_cursor_is_a_tool_error(ws: Workspace) -> None:
    ws.memory_md.write_text(BODY, encoding="utf-8")

    async def script(s: Any) -> Any:
        return await s.call_tool("dream_pending", {"cursor": "abcdef012345:2"})

    res = session(ws, script)
    assert res.is_error and "cursor is stale" in res.content[0].text
