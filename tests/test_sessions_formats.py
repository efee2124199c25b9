"""Bad transcript input is named, never read as nothing: a Codex log or OpenAI tool-call
messages are listed as unsupported with a format guess; a broken line inside a readable
transcript is listed in ``sessions status`` with its file and line."""

from __future__ import annotations

import json

import pytest

from memcore.errors import InputError, UnsupportedFormat
from memcore.judge.llm import ExtractiveLLM
from memcore.sessions import status
from memcore.sessions.run import execute
from memcore.sessions.transcripts import read_transcript
from memcore.workspace.core import Workspace
from tests.conftest import invoke
from tests.test_sessions_dream import NOW

CODEX = [
    {"timestamp": "2026-11-01T10:00:00Z", "type": "session_meta", "payload": {"id": "x"}},
    {
        "timestamp": "2026-11-01T10:00:01Z",
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"text": "hi"}]},
    },
]
OPENAI_TOOLS = [
    {"role": "user", "content": "What is the weather?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
]


def write(ws: Workspace, name: str, records: list[object], head: str = "") -> None:
    path = ws.root / "sessions" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@pytest.mark.parametrize(
    ("records", "guess"),
    [
        (CODEX, "a Codex CLI log"),
        (OPENAI_TOOLS, "OpenAI chat messages with tool calls"),
        ([{"event": "x", "data": 1}, {"event": "y", "data": 2}], "unknown"),
    ],
)
def test_unknown_formats_are_listed_as_unsupported(
    ws: Workspace, records: list[object], guess: str
) -> None:
    write(ws, "odd", records)
    with pytest.raises(UnsupportedFormat) as info:
        read_transcript(ws.root / "sessions" / "odd.jsonl")
    assert info.value.guess == guess
    out = status(ws, NOW)
    assert out["unsupported"] == [{"session": "odd", "format": guess, "error": str(info.value)}]
    assert out["candidates"] == [] and out["unreadable"] == []
    text = invoke(ws, "sessions", "status").output
    assert f"unsupported: odd ({guess})" in text
    report = execute(ws, now=NOW, llm=ExtractiveLLM())
    assert any(s["session"] == "odd" and "unsupported" in s["reason"] for s in report["skipped"])


def test_a_broken_line_is_listed_with_file_and_line(ws: Workspace) -> None:
    good = [
        {"role": "user", "content": "We decided to use Postgres 16.", "ts": "2026-11-01T10:00:00Z"},
        {"role": "assistant", "content": "Noted.", "ts": "2026-11-01T10:01:00Z"},
    ]
    path = ws.root / "sessions" / "s0.jsonl"
    path.parent.mkdir(parents=True)
    lines = ["---", "title: t", "---"] + [json.dumps(r) for r in good]
    lines.insert(4, '{"role": "user", "content": "cut in ha')  # file line 5
    lines += [json.dumps(r) for r in good] * 5
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read_transcript(path).broken == [5]
    out = status(ws, NOW)
    assert out["broken_lines"] == [{"session": "s0", "file": str(path), "lines": [5]}]
    text = invoke(ws, "sessions", "status").output
    assert f"broken lines (not JSON, skipped): {path}: line 5" in text
    path.write_text(path.read_text().replace('"cut in ha\n', '"repaired"}\n'), encoding="utf-8")
    assert status(ws, NOW)["broken_lines"] == []  # repaired: nothing listed


def test_one_broken_line_in_a_short_transcript_does_not_hide_the_session(ws: Workspace) -> None:
    """A session of a few turns with one line cut in half is read (the line listed), not
    refused whole; a file that is mostly not JSON is refused naming its broken lines."""
    path = ws.root / "sessions" / "short.jsonl"
    path.parent.mkdir(parents=True)
    good = [
        {"role": "user", "content": f"We decided item {i} stays.", "ts": f"2026-11-01T10:0{i}:00Z"}
        for i in range(6)
    ]
    lines = [json.dumps(r) for r in good]
    lines.insert(3, '{"role": "assistant", "content": "cut in ha')  # file line 4
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tr = read_transcript(path)
    assert tr.broken == [4] and len(tr.messages) == 6
    assert status(ws, NOW)["broken_lines"] == [
        {"session": "short", "file": str(path), "lines": [4]}
    ]
    garbage = ws.root / "sessions" / "garbage.jsonl"
    garbage.write_text('not json\nneither\n{"role": "user", "content": "x"}\n')
    with pytest.raises(InputError, match=r"garbage.jsonl: lines 1, 2 of 3 are not JSON objects"):
        read_transcript(garbage)
