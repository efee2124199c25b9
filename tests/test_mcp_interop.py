"""MCP for agents with their own search, through the official client: every tool describes
itself and each argument, ``context`` gives the memory block, ``recall`` takes the CLI's names."""

from __future__ import annotations

from datetime import timedelta

from memcore.sessions.context import context_block
from memcore.sessions.run import execute
from memcore.workspace.core import Workspace
from tests.test_mcp import call_all, payload
from tests.test_sessions_dream import NOW, CountingLLM, make_session, turns_for


def _schemas(ws: Workspace) -> dict[str, object]:
    import asyncio
    import os
    import sys

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

    async def main() -> dict[str, object]:
        with open(os.devnull, "w") as devnull:
            async with (
                stdio_client(params, errlog=devnull) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                return {t.name: t for t in (await s.list_tools()).tools}

    return asyncio.run(main())


def test_every_tool_and_argument_is_described(ws: Workspace) -> None:
    tools = _schemas(ws)
    assert {"memory_search", "memory_record", "context", "recall", "dream_pending"} <= set(tools)
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 40, name
        schema = tool.input_schema
        assert schema["type"] == "object"
        for arg, prop in schema.get("properties", {}).items():
            assert prop.get("description"), f"{name}.{arg} has no description"
    recall_args = set(tools["recall"].input_schema["properties"])
    assert {"memory", "from", "to", "start", "end", "cursor", "limit", "query"} <= recall_args
    assert "from_" not in recall_args
    record_args = tools["memory_record"].input_schema
    assert record_args["required"] == ["query"]  # results, or hits by its other name
    assert {"results", "hits", "origin"} <= set(record_args["properties"])


def test_context_and_recall_with_the_cli_names(ws: Workspace) -> None:
    for i in range(2):
        make_session(ws, f"s{i}", turns_for(i), start=NOW - timedelta(days=2, hours=i))
    execute(ws, now=NOW, llm=CountingLLM())
    _, results = call_all(
        ws,
        [
            ("context", {"model_window": 32_000}),
            ("context", {"model_window": -1}),
            ("recall", {"memory": "session", "session": "s0", "from": 1, "to": 2}),
            ("recall", {"memory": "session", "session": "s0", "start": 1, "end": 2}),
            ("recall", {"memory": "session", "session": "s0", "from": 0, "to": 0}),
            ("recall", {"memory": "sessions", "limit": 1}),
            ("recall", {"memory": "sessions", "query": "s1"}),
            ("recall", {"memory": "sessions", "limit": 101}),
        ],
    )
    block = payload(results[0])
    assert block == context_block(ws, model_window=32_000)
    assert "Postgres" in block["text"]
    assert results[1].is_error and "model_window" in results[1].content[0].text
    by_cli_names = payload(results[2])
    assert [m["index"] for m in by_cli_names["items"]] == [1, 2]
    assert payload(results[3]) == by_cli_names  # the old names still work
    assert [m["index"] for m in payload(results[4])["items"]] == [0]
    one = payload(results[5])  # limit and query, as the CLI's --limit and --query
    assert [i["session"] for i in one["items"]] == ["s0"] and one["nextCursor"] == "1"
    assert [i["session"] for i in payload(results[6])["items"]] == ["s1"]
    assert results[7].is_error and "limit" in results[7].content[0].text


def test_memory_record_takes_hits_as_another_name_of_results(ws: Workspace) -> None:
    """``hits`` records exactly as ``results`` does; both at once, or neither, is one error
    naming them, and nothing is recorded."""
    from memcore.recall.store import read_store

    (ws.memory_dir / "2026-10-01.md").write_text(
        "# Notes\n\nThe backup job runs nightly at 02:00 on the NAS.\n", encoding="utf-8"
    )
    hit = [{"path": "memory/2026-10-01.md", "startLine": 3, "endLine": 3, "score": 0.9}]
    _, results = call_all(
        ws,
        [
            ("memory_record", {"query": "nas backup", "hits": hit}),
            ("memory_record", {"query": "nas backup again", "results": hit}),
            ("memory_record", {"query": "nas backup", "results": hit, "hits": hit}),
            ("memory_record", {"query": "nas backup"}),
        ],
    )
    key = "memory:memory/2026-10-01.md:3:3"
    assert payload(results[0]) == {"recorded": 1, "keys": [key]}
    assert payload(results[1]) == {"recorded": 1, "keys": [key]}
    assert results[2].is_error and "not both" in results[2].content[0].text
    assert results[3].is_error and "results is required" in results[3].content[0].text
    assert read_store(ws).entries[key]["recallCount"] == 2  # the two errors recorded nothing
