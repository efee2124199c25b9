"""Attachments: image and file blocks keep a reference (name, type, size, original location),
never their data nor text inferred from them; ``memcore recall`` shows them."""

from __future__ import annotations

import base64
import json

from memcore.judge.llm import OpenAICompatibleLLM
from memcore.sessions.recall_api import recall
from memcore.sessions.run import execute
from memcore.sessions.transcripts import read_transcript
from memcore.workspace.core import Workspace
from tests.chat_server import chat_server
from tests.conftest import invoke
from tests.test_sessions_dream import NOW

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"pixels" * 200).decode()
INFERRED = "OCR says the invoice total is 4,210 EUR"


def records() -> list[dict]:
    return [
        {
            "type": "user",
            "uuid": "u-1",
            "timestamp": "2026-11-01T10:00:00Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "We decided to follow this layout."},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                    },
                    {
                        "type": "document",
                        "title": "invoice.pdf",
                        "source": {"type": "text", "media_type": "text/plain", "data": INFERRED},
                    },
                ],
            },
        },
        {
            "type": "assistant",
            "uuid": "a-1",
            "timestamp": "2026-11-01T10:01:00Z",
            "message": {
                "role": "assistant",
                "stop_reason": "tool_use",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a.png"}}
                ],
            },
        },
        {
            "type": "user",
            "uuid": "u-2",
            "timestamp": "2026-11-01T10:02:00Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "url",
                                    "url": "https://files.example.com/shots/a.png",
                                },
                            },
                            {"type": "text", "text": "read 1 image"},
                        ],
                    }
                ],
            },
        },
        {
            "type": "assistant",
            "uuid": "a-2",
            "timestamp": "2026-11-01T10:03:00Z",
            "message": {
                "role": "assistant",
                "stop_reason": "end_turn",
                "content": [{"type": "text", "text": "Layout noted."}],
            },
        },
    ]


def test_attachments_are_references_never_content(ws: Workspace) -> None:
    path = ws.root / "sessions" / "cc.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records()), encoding="utf-8")
    msgs = read_transcript(path).messages
    first = msgs[0]
    assert [a.as_dict() for a in first.attachments] == [
        {"kind": "image", "name": None, "type": "image/png", "size": 1208, "location": "inline"},
        {
            "kind": "file",
            "name": "invoice.pdf",
            "type": "text/plain",
            "size": len(INFERRED),
            "location": "inline",
        },
    ]
    assert PNG[:40] not in first.text and INFERRED not in first.text
    assert "[image: unnamed, image/png, 1,208 bytes]" in first.text
    tool = next(m for m in msgs if m.role == "tool" and m.attachments)
    assert tool.attachments[0].as_dict() == {
        "kind": "image",
        "name": "a.png",
        "type": None,
        "size": None,
        "location": "https://files.example.com/shots/a.png",
    }

    plain = ws.root / "sessions" / "plain.jsonl"
    plain.write_text(
        json.dumps(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "See the spec.", "ts": "2026-11-01T10:00:00Z"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                    {"type": "file", "file": {"filename": "spec.md", "file_id": "file-9"}},
                    {"type": "input_image", "image_url": "https://x.example/y.jpg", "text": "alt"},
                ],
            }
        )
        + "\n"
        + json.dumps({"role": "assistant", "content": "ok"})
        + "\n",
        encoding="utf-8",
    )
    p = read_transcript(plain).messages[0]
    assert [(a.kind, a.name, a.type, a.size, a.location) for a in p.attachments] == [
        ("image", None, "image/png", 1208, "inline"),
        ("file", "spec.md", None, None, "file id file-9"),
        ("image", "y.jpg", None, None, "https://x.example/y.jpg"),
    ]
    assert "alt" not in p.text.split("\n")[0]

    with chat_server() as srv:
        report = execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=5))
        sent = srv.sent_text()
    assert report["status"] == "ok", report
    assert PNG[:40] not in sent and INFERRED not in sent and "invoice.pdf" in sent

    out = recall(ws, {"session": "cc", "from": 0, "to": 3})
    shown = [a for item in out["items"] for a in item["attachments"]]
    assert [a["name"] for a in shown] == [None, "invoice.pdf", "a.png"]
    doc = json.loads(
        invoke(ws, "recall", "session", "cc", "--from", "0", "--to", "3", "--json").output
    )
    assert doc["items"][0]["attachments"][1]["type"] == "text/plain"
    text = invoke(ws, "recall", "session", "cc", "--from", "0", "--to", "3").output
    assert "attachment: file invoice.pdf (text/plain" in text
    assert "at https://files.example.com/shots/a.png" in text
    assert INFERRED not in text and PNG[:40] not in text


def test_the_session_view_lists_its_attachments(ws: Workspace) -> None:
    path = ws.root / "sessions" / "cc.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records()), encoding="utf-8")
    assert execute(ws, now=NOW)["status"] == "ok"

    out = recall(ws, {"memory": "session", "session": "cc"})
    assert [(a["message"], a["kind"], a["name"], a["location"]) for a in out["attachments"]] == [
        (0, "image", None, "inline"),
        (0, "file", "invoice.pdf", "inline"),
        (2, "image", "a.png", "https://files.example.com/shots/a.png"),
    ]
    assert out["attachments"][0]["message_ref"] == "u-1"
    assert out["attachments"][0]["size"] == 1208
    assert INFERRED not in json.dumps(out) and PNG[:40] not in json.dumps(out)
    text = invoke(ws, "recall", "session", "cc").output
    assert "attachments:" in text
    assert "[0] file invoice.pdf (text/plain" in text
    assert "[2] image a.png (unknown type) at https://files.example.com/shots/a.png" in text

    path.unlink()  # the transcript gone: the view still answers, without attachments
    assert recall(ws, {"memory": "session", "session": "cc"})["attachments"] == []
