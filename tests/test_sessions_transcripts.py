"""Transcript reading (plain JSONL and Claude Code), chunking, redaction, settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcore.errors import ConfigError, InputError
from memcore.redact import redact
from memcore.sessions.budget import split_utf8
from memcore.sessions.settings import sessions_settings
from memcore.sessions.transcripts import read_transcript, sniff
from memcore.workspace.config import load_config


def write_jsonl(path: Path, records: list[dict], head: str = "") -> Path:
    path.write_text(head + "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_plain_transcript_turns(tmp_path: Path) -> None:
    p = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"role": "user", "content": "one", "ts": "2026-01-01T00:00:00Z"},
            {"role": "assistant", "content": "answer one", "ts": "2026-01-01T00:00:01Z"},
            {"role": "tool", "content": "ls output"},
            {"role": "user", "content": "two", "ts": "2026-01-01T00:01:00Z"},
            {"role": "assistant", "content": "answer two", "ts": "2026-01-01T00:01:01Z"},
            {"role": "user", "content": "three (no answer yet)", "ts": "2026-01-01T00:02:00Z"},
        ],
    )
    tr = read_transcript(p)
    assert tr.format == "plain"
    assert [m.role for m in tr.messages] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
        "user",
    ]
    assert tr.complete_through() == 5
    assert tr.completed_turns() == 2
    assert tr.last_ts(tr.complete_through()) == "2026-01-01T00:01:01Z"
    assert not tr.independent and not tr.generated


def test_last_turn_complete_when_assistant_answered_last(tmp_path: Path) -> None:
    p = write_jsonl(
        tmp_path / "s.jsonl",
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
    )
    assert read_transcript(p).complete_through() == 2
    p2 = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a"},
            {"role": "tool", "content": "x"},
        ],
    )
    assert read_transcript(p2).complete_through() == 0


def test_front_matter_and_meta_line(tmp_path: Path) -> None:
    p = write_jsonl(
        tmp_path / "s.jsonl",
        [{"role": "user", "content": "q"}],
        head="---\nindependent: true\ntitle: Side quest\n---\n",
    )
    tr = read_transcript(p)
    assert tr.independent and tr.meta["title"] == "Side quest" and len(tr.messages) == 1
    g = write_jsonl(
        tmp_path / "g.jsonl",
        [{"type": "memcore", "meta": {"generator": "memcore"}}, {"role": "user", "content": "q"}],
    )
    assert read_transcript(g).generated


def claude_lines() -> list[dict]:
    return [
        {"type": "summary", "summary": "Earlier work on the parser", "leafUuid": "x"},
        {
            "type": "user",
            "message": {"role": "user", "content": "Fix the flaky test"},
            "timestamp": "2026-02-01T10:00:00.000Z",
            "uuid": "1",
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "stop_reason": "tool_use",
                "content": [
                    {"type": "text", "text": "Looking at the test."},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "pytest -x"},
                    },
                ],
            },
            "timestamp": "2026-02-01T10:00:02.000Z",
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "1 failed"},
                ],
            },
            "timestamp": "2026-02-01T10:00:05.000Z",
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "stop_reason": "end_turn",
                "content": [
                    {"type": "text", "text": "The test depends on dict order; fixed."},
                ],
            },
            "timestamp": "2026-02-01T10:00:09.000Z",
        },
        {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "side"}},
    ]


def test_claude_code_transcript(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "cc.jsonl", claude_lines())
    tr = read_transcript(p)
    assert tr.format == "claude-code"
    assert tr.summaries == ["Earlier work on the parser"]
    assert [m.role for m in tr.messages] == ["user", "tool", "assistant", "tool", "assistant"]
    assert tr.messages[1].text.startswith("[tool call Bash]")
    assert tr.complete_through() == 5 and tr.completed_turns() == 1
    # stopped for a tool call: the turn is not complete yet
    p2 = write_jsonl(tmp_path / "cc2.jsonl", claude_lines()[:3])
    assert read_transcript(p2).complete_through() == 0


def test_sniff() -> None:
    assert sniff([{"role": "user", "content": "x"}]) == "plain"
    assert sniff([{"type": "user", "message": {"content": "x"}}]) == "claude-code"


def test_unreadable_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"role": "user", "content": "\xff\xfe"}\n')
    with pytest.raises(InputError, match="UTF-8"):
        read_transcript(bad)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('not json\nneither\n{"role": "user", "content": "x"}\n')
    with pytest.raises(InputError, match="not JSON objects"):
        read_transcript(garbage)
    half = tmp_path / "half.jsonl"
    half.write_text('{"role": "user", "content": "x"}\n{"role": "assis')
    assert len(read_transcript(half).messages) == 1


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=3000),
    st.integers(min_value=4, max_value=700),
)
def test_split_utf8_never_drops_and_respects_limit(text: str, limit: int) -> None:
    pieces = split_utf8(text, limit)
    assert "".join(pieces) == text
    assert all(0 < len(p.encode("utf-8")) <= limit for p in pieces)


def test_split_utf8_prefers_line_breaks() -> None:
    text = ("word " * 300 + "\n") * 5
    pieces = split_utf8(text, 5000)
    assert all(len(p.encode()) <= 5000 for p in pieces)
    assert pieces[0].endswith("\n")
    emoji = "🙂" * 3000  # 4 bytes each
    assert [len(p.encode()) for p in split_utf8(emoji, 5000)] == [5000, 5000, 2000]


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("key sk-proj-abcdefghijklmnopqrstuvwx123 here", "abcdefghijklmnop"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abc"),
        ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("password = hunter2hunter", "hunter2hunter"),
        ("DB_PASSWORD: 's3cr3t-value'", "s3cr3t-value"),
        (
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
            "abcdefghijklmnopqrstuvwxyz012345",
        ),
        ("postgres://app:pa55word@db.local/x", "pa55word"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "MIIEabc"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "dozjgNryP4J3",
        ),
    ],
)
def test_redact_secrets(text: str, gone: str) -> None:
    out = redact(text)
    assert gone not in out and "[REDACTED" in out


def test_redact_leaves_ordinary_text() -> None:
    for text in [
        "daily_token_budget = 200000",
        "the token is expired",
        "We use Postgres 16.",
        "auth is handled by nginx",
    ]:
        assert redact(text) == text


def test_sessions_settings_defaults_and_errors(ws) -> None:
    s = sessions_settings(load_config(ws))
    assert (s.enabled, s.interval_days, s.min_sessions, s.path) == (False, 7, 5, "sessions/")
    assert (s.session_limit, s.project_limit, s.global_limit, s.daily_token_budget) == (
        1200,
        2400,
        600,
        200_000,
    )
    for toml, frag in [
        (
            "[sessions]\ninterval_days = 0\n",
            r"\[sessions\] interval_days = 0 is out of range; allowed: an integer from 1 to 365",
        ),
        (
            "[sessions]\nmin_sessions = 101\n",
            r"min_sessions = 101 is out of range; allowed: an integer from 1 to 100",
        ),
        ("[sessions]\nenabled = 'yes'\n", "not a boolean"),
        ("[sessions]\nindependent = 'abc'\n", "must be a list"),
        ("[sessions.limits]\nproject = 50\n", r"limits.project = 50 is out of range"),
        ("[sessions.limits]\nweekly = 50\n", "is not a level"),
    ]:
        ws.config_path.write_text(toml)
        with pytest.raises(ConfigError, match=frag):
            sessions_settings(load_config(ws))
