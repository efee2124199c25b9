"""A model answer is checked for what the prompt forbids, not only secrets: PR numbers and
commit hashes are stripped, raw transcript quotes and temporary progress are dropped, each
with a reason; an answer with nothing left is rejected."""

from __future__ import annotations

import json

from memcore.judge.llm import OpenAICompatibleLLM
from memcore.sessions import status
from memcore.sessions.run import execute
from memcore.sessions.store import latest
from memcore.workspace.core import Workspace
from memcore.workspace.db import connect
from tests.chat_server import Reply, chat_server
from tests.test_sessions_dream import NOW, make_session, turns_for

LOG = (
    "2026-11-02 10:00:01 INFO worker-3 picked job 8812 from queue payouts-high, retry 2 of 5,"
    " backoff 30s, upstream adyen-sandbox answered 504 after 29.8s, circuit half-open"
)


def test_forbidden_content_is_stripped_with_reasons(ws: Workspace) -> None:
    make_session(ws, "s0", [(f"We decided to watch this log line: {LOG}", "ok")])
    answer = "\n".join(
        [
            "- We use Postgres 16 for the ledger (PR #482, commit 3f2a9c1d4e5b).",
            "- Currently running the backfill, almost done.",
            "- [0 user] We decided to watch this log line.",
            f"- {LOG}",
            "- Squash merges only, see https://github.com/acme/api/pull/77 for the rule.",
        ]
    )
    with chat_server() as srv:
        srv.push(Reply(content=json.dumps({"memory": answer, "used": []})))
        srv.default = lambda r: Reply(content=json.dumps({"memory": "", "used": []}))
        report = execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=5))
    conn = connect(ws.db_path)
    text = latest(conn, "session", "s0").text
    conn.close()
    assert "Postgres 16 for the ledger" in text and "Squash merges only" in text
    for gone in ("#482", "3f2a9c1", "almost done", "[0 user]", "worker-3", "pull/77"):
        assert gone not in text, (gone, text)
    reasons = " | ".join(c["reason"] for c in report["checked"])
    for why in ("PR number", "commit hash", "temporary progress", "raw transcript"):
        assert why in reasons, reasons
    kept = status(ws, NOW)["last_run"]["report"]["checked"]  # the reasons stay on record
    assert kept == report["checked"]


def test_an_answer_with_only_forbidden_content_is_rejected(ws: Workspace) -> None:
    make_session(ws, "s0", turns_for(0))
    bad = "- Still running the tests, will report back.\n- [1 assistant] Got it."
    with chat_server() as srv:
        srv.default = lambda r: Reply(content=json.dumps({"memory": bad, "used": []}))
        report = execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=5))
    assert report["status"] == "failed" and "nothing is left" in report["error"]
    conn = connect(ws.db_path)
    assert latest(conn, "session", "s0") is None
    conn.close()
