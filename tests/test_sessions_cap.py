"""Every model call stays under the 16,000-token input cap, health block and all, and the
reservation is what is sent."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from memcore.judge.llm import OpenAICompatibleLLM
from memcore.sessions import health_report
from memcore.sessions.budget import MAX_INPUT_TOKENS
from memcore.sessions.prompts import max_output_tokens
from memcore.sessions.run import execute
from memcore.sessions.settings import sessions_settings
from memcore.sessions.userdb import open_user_db
from memcore.workspace.config import load_config
from memcore.workspace.core import Workspace
from tests.chat_server import chat_server

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
WORDS = [
    f"{a}{b}"
    for a in ("led", "pay", "exp", "hook", "rate", "rev", "auth", "find")
    for b in ("ger", "out", "ort", "ster", "cast", "line", "mark", "node", "path", "grid")
]


def busy_sessions(ws: Workspace, n: int) -> None:
    """``n`` sessions, each full of distinct decisions, so each session memory is near its limit."""
    folder = ws.root / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    for s in range(n):
        t = NOW - timedelta(days=1, minutes=10 * s)
        lines = []
        for k in range(14):
            w = [WORDS[(s * 31 + k * 7 + j * 13) % len(WORDS)] for j in range(6)]
            text = (
                f"We decided that {w[0]} {s}-{k} keeps {w[1]} with {w[2]} behind {w[3]}"
                f" and {w[4]} next to {w[5]}."
            )
            for role, body in (("user", text), ("assistant", "Understood.")):
                lines.append(json.dumps({"role": role, "content": body, "ts": t.isoformat()}))
                t += timedelta(seconds=30)
        (folder / f"s{s:02d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def large_health(ws: Workspace) -> None:
    """A MEMORY.md whose health block is as large as the compact report allows."""
    deep = "/".join(["very-long-folder-name-for-archived-notes"] * 5)
    links = "\n".join(f"- see [note {i}]({deep}/missing-note-{i}.md)" for i in range(12))
    entries = "\n".join(
        f"- Unverified entry {i}: " + "the settlement job must run after the FX import " * 4
        for i in range(8)
    )
    ws.memory_md.write_text(f"# Memory\n\n{links}\n{entries}\n", encoding="utf-8")
    topics = ws.memory_dir / deep
    topics.mkdir(parents=True)
    for i in range(12):
        (topics / f"unlinked-topic-file-with-a-long-name-{i}.md").write_text("x\n")


def test_every_request_fits_the_cap_and_reservation_equals_the_body(ws: Workspace) -> None:
    busy_sessions(ws, 20)
    large_health(ws)
    health = health_report(ws, compact=True)
    assert len(json.dumps(health).encode()) > 3000  # a health block worth counting
    settings = sessions_settings(load_config(ws))
    with chat_server() as srv:
        llm = OpenAICompatibleLLM(srv.url, "m", timeout=5)
        report = execute(ws, now=NOW, llm=llm, health=health)
        bodies = list(srv.bodies)
        tasks = [json.loads(r["messages"][-1]["content"])["task"] for r in srv.requests]
    assert report["status"] == "ok", report
    assert tasks.count("project") >= 2  # the project step needed several calls
    sizes = [len(b) for b in bodies]
    assert max(sizes) <= MAX_INPUT_TOKENS, sizes
    conn = open_user_db()  # the one ledger of the user
    reserved = [r[0] for r in conn.execute("SELECT reserved FROM sess_budget_calls ORDER BY id")]
    conn.close()
    limits = {"session": settings.session_limit, "project": settings.project_limit}
    expected = [
        size + max_output_tokens(limits.get(task, settings.global_limit))
        for size, task in zip(sizes, tasks, strict=True)
    ]
    assert reserved == expected
