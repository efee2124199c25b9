"""No secret reaches the model or any stored memory, on any path: transcript messages, long
messages split into chunks, Claude Code tool results and arguments, the health block built
from MEMORY.md, the project and global steps, the stored versions, previews and exports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memcore.judge.extractive import answer
from memcore.judge.llm import OpenAICompatibleLLM
from memcore.sessions import dream
from memcore.sessions.flow import USER_DB_NAME
from memcore.sessions.settings import user_dir
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.chat_server import ChatServer, Reply, chat_server
from tests.secret_corpus import SECRETS

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OLD = (NOW - timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
LINES = [line for line, _secret, _kind in SECRETS]


def plain_session(ws: Workspace, sid: str, lines: list[str]) -> None:
    recs = []
    for i, line in enumerate(lines):
        ts = (NOW - timedelta(days=2, minutes=60 - i)).isoformat()
        recs.append({"role": "user", "content": f"We decided to keep this: {line}", "ts": ts})
        recs.append({"role": "assistant", "content": f"Noted, we always use {line}", "ts": ts})
    write(ws, sid, recs)


def long_session(ws: Workspace, sid: str, lines: list[str]) -> None:
    """One message far over a chunk, with the secrets near every 5,000-byte boundary."""
    filler = "We decided the exporter stays synchronous for now. " * 40
    body = "".join(filler[: 4990 - 2 * i] + " " + line + "\n" for i, line in enumerate(lines))
    recs = [
        {"role": "user", "content": body, "ts": (NOW - timedelta(days=2)).isoformat()},
        {"role": "assistant", "content": "Got it.", "ts": (NOW - timedelta(days=2)).isoformat()},
    ]
    write(ws, sid, recs)


def tool_session(ws: Workspace, sid: str, lines: list[str]) -> None:
    """Claude Code: secrets in tool arguments and tool results, read at the raw level."""
    recs: list[dict[str, Any]] = [
        {"type": "user", "message": {"role": "user", "content": "Deploy it"}, "timestamp": OLD}
    ]
    for i, line in enumerate(lines):
        recs.append(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "stop_reason": "tool_use",
                    "content": [
                        {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"cmd": line}}
                    ],
                },
                "timestamp": OLD,
            }
        )
        result = f"Lesson: the root cause was the config below.\n{line}\n"
        recs.append(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": result}],
                },
                "timestamp": OLD,
            }
        )
    recs.append(
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "stop_reason": "end_turn",
                "content": [{"type": "text", "text": "We decided to deploy from CI only."}],
            },
            "timestamp": OLD,
        }
    )
    write(ws, sid, recs)


def write(ws: Workspace, sid: str, recs: list[dict[str, Any]]) -> None:
    path = ws.root / "sessions" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")


def memory_md(ws: Workspace) -> None:
    """Every secret as an unverified MEMORY.md entry (the health block lists those), some past
    the 120 characters an entry is cut to in the block."""
    pad = "Deployment detail kept from an old incident review, see notes: "
    entries = "\n".join(f"- {pad if i % 2 else ''}{line}" for i, line in enumerate(LINES))
    ws.memory_md.write_text(f"# Memory\n\n{entries}\n", encoding="utf-8")


def echoing(srv: ChatServer) -> Iterator[None]:
    """A model that also writes secrets into its answers (they must be redacted on the way in)."""
    todo = list(LINES)

    def reply(request: dict[str, Any]) -> Reply:
        doc = json.loads(request["messages"][-1]["content"])
        out = answer(doc)
        limit = int(doc["limit"])
        keep: list[str] = []
        while todo and sum(len(k) + 9 for k in keep) + len(todo[0]) + 9 < limit * 0.8:
            keep.append("- Keep: " + todo.pop(0))
        for line in out["memory"].splitlines():
            if sum(len(k) + 1 for k in keep) + len(line) < limit:
                keep.append(line)
        ids = [src["id"] for src in doc["sources"]]
        claims = [  # decisions quoting the secret lines too (redacted when recorded)
            {"quote": k.removeprefix("- Keep: "), "source": sid}
            for k in keep
            for sid in ids[:1]
            if doc["task"] == "session"
        ]
        body = {"memory": "\n".join(keep), "used": out["used"], "decisions": claims}
        return Reply(content=json.dumps(body))

    srv.default = reply
    yield
    assert not todo, f"{len(todo)} secret lines were never answered"


def haystacks(srv: ChatServer) -> list[str]:
    """Every request as sent (raw body), its message texts and the decoded user document."""
    out = [srv.sent_text()]
    for r in srv.requests:
        for m in r["messages"]:
            out.append(m["content"])
        out.append(json.dumps(json.loads(r["messages"][-1]["content"]), ensure_ascii=False))
    return out


def stored(ws: Workspace) -> list[str]:
    texts = []
    for path in (ws.db_path, user_dir() / USER_DB_NAME):
        conn = connect(path)
        try:
            texts += [r[0] for r in conn.execute("SELECT text FROM sess_memories")]
            texts += [r[0] or "" for r in conn.execute("SELECT preview FROM sess_memory_sources")]
            texts += [r[0] or "" for r in conn.execute("SELECT report FROM sess_runs")]
            texts += [r[0] for r in conn.execute("SELECT quote FROM sess_decisions")]
        finally:
            conn.close()
    texts += [p.read_text() for p in sorted((ws.memory_dir / "summaries").glob("*.md"))]
    return texts


def leaks(secret: str, texts: list[str]) -> bool:
    forms = {secret, json.dumps(secret, ensure_ascii=False)[1:-1]}
    return any(f in t for f in forms for t in texts)


def test_no_secret_reaches_the_model_or_any_memory(ws: Workspace) -> None:
    assert len(SECRETS) >= 40
    third = len(LINES) // 3
    plain_session(ws, "plain", LINES[:third])
    plain_session(ws, "plain2", LINES[third:])
    long_session(ws, "long", LINES[third : 2 * third])
    tool_session(ws, "tools", LINES)
    memory_md(ws)
    with chat_server() as srv:
        gen = echoing(srv)
        next(gen)
        report = dream(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=10))
        next(gen, None)
        sent = haystacks(srv)
        tasks = [json.loads(r["messages"][-1]["content"])["task"] for r in srv.requests]
    assert report["status"] == "ok", report
    assert {"session", "project", "global"} <= set(tasks)
    assert any(r["level"] == "raw" for r in report["read"])  # tool traffic was read
    doc = json.loads(srv.requests[-2]["messages"][-1]["content"])
    assert doc["task"] == "project" and doc.get("health")  # the health block was sent
    memory = stored(ws)
    assert any("[REDACTED:" in t for t in memory)  # the secrets did reach the memory path
    sent_leaks = [s for _l, s, _k in SECRETS if leaks(s, sent)]
    stored_leaks = [s for _l, s, _k in SECRETS if leaks(s, memory)]
    assert (sent_leaks, stored_leaks) == ([], [])


def test_source_previews_are_redacted_before_they_are_cut(tmp_path: Path) -> None:
    from memcore.sessions.store import Source, ensure_schema, insert_version, transaction

    conn = connect(tmp_path / "m.sqlite")
    ensure_schema(conn)
    secret = next(s for s in SECRETS if s[2] == "azure-account-key")
    text = "x" * 150 + " " + secret[0]
    with transaction(conn):
        insert_version(
            conn,
            "session",
            "s",
            "- m",
            [Source("raw", "r", preview=text)],
            now_iso="t",
            run_id=None,
            model=None,
        )
    (preview,) = conn.execute("SELECT preview FROM sess_memory_sources").fetchone()
    assert secret[1][:20] not in preview
