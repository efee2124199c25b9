"""Claude Code tool results and arguments are kept whole: split into chunks, never cut."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memcore.judge.llm import OpenAICompatibleLLM
from memcore.sessions.recall_api import recall
from memcore.sessions.run import execute
from memcore.sessions.transcripts import read_transcript
from memcore.workspace.core import Workspace
from tests.chat_server import chat_server

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
RESULT = "".join(
    f"line {i}: worker {i % 7} finished batch {i} with status ok\n" for i in range(400)
)
ARG = "".join(f"echo step-{i} >> build.log; " for i in range(600))


def claude_session(ws: Workspace, sid: str) -> Path:
    ts = (NOW - timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    recs = [
        {"type": "user", "message": {"role": "user", "content": "Run the build"}, "timestamp": ts},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "stop_reason": "tool_use",
                "content": [
                    {"type": "text", "text": "Running it."},
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": ARG}},
                ],
            },
            "timestamp": ts,
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": RESULT}],
            },
            "timestamp": ts,
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "stop_reason": "end_turn",
                "content": [{"type": "text", "text": "We decided to keep the build serial."}],
            },
            "timestamp": ts,
        },
    ]
    path = ws.root / "sessions" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def test_tool_text_is_read_whole(ws: Workspace) -> None:
    assert len(RESULT) > 20_000 and len(json.dumps({"command": ARG})) > 15_000
    tr = read_transcript(claude_session(ws, "cc"))
    tools = [m.text for m in tr.messages if m.role == "tool"]
    assert tools[0] == "[tool call Bash] command: " + ARG
    assert tools[1] == "[tool result] " + RESULT


def test_tool_text_reaches_the_model_in_chunks_and_recall_whole(ws: Workspace) -> None:
    claude_session(ws, "cc")
    with chat_server() as srv:
        report = execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=5))
        raw = [
            s
            for r in srv.requests
            for s in json.loads(r["messages"][-1]["content"])["sources"]
            if s["kind"] == "raw"
        ]
    assert report["status"] == "ok", report
    assert all(len(s["text"].encode()) <= 5000 for s in raw)
    sent = "".join(s["text"] for s in raw)
    assert RESULT.rstrip("\n") in sent and "command: " + ARG.rstrip() in sent
    texts: list[str] = []
    cursor = None
    while True:
        page = recall(ws, {"session": "cc", "from": 0, "to": 4, "cursor": cursor})
        texts += [i["text"] for i in page["items"] if i["role"] == "tool"]
        cursor = page["next_cursor"]
        if not cursor:
            break
    whole = "".join(texts)
    assert ("[tool result] " + RESULT) in whole and "command: " + ARG in whole
