"""Decision records: explicit user decisions kept with their verbatim (redacted) quote and
message references, from the patterns and from the model when its quote is word for word;
listed by ``memcore recall decisions``; withheld with their session when it leaves sharing;
purged with ``sessions forget --purge``."""

from __future__ import annotations

import json

from memcore.judge.llm import ExtractiveLLM, OpenAICompatibleLLM
from memcore.redact import redact
from memcore.sessions.recall_api import recall
from memcore.sessions.refs import resolve
from memcore.sessions.run import execute
from memcore.sessions.settings import project_id
from memcore.sessions.transcripts import read_transcript
from memcore.workspace.core import Workspace
from tests.chat_server import Reply, chat_server
from tests.conftest import invoke
from tests.test_sessions_dream import NOW, make_session

TURNS = [
    ("We decided to deploy with blue-green releases on Fridays only.", "Noted."),
    ("Should we always squash merges? Let me think.", "Up to you."),
    ("Never commit straight to main. Thanks!", "Understood."),
    ("We agreed that PGPASSWORD=s3cr3t-Value-991 stays in the vault.", "OK."),
    ("After a long debate we picked Kafka over RabbitMQ for the event bus.", "Good choice."),
]


def test_pattern_decisions_are_recorded_with_quote_and_references(ws: Workspace) -> None:
    path = make_session(ws, "s0", TURNS)
    report = execute(ws, now=NOW, llm=ExtractiveLLM())
    assert report["status"] == "ok"
    out = recall(ws, {"memory": "decisions"})
    quotes = [d["quote"] for d in out["items"]]
    assert "We decided to deploy with blue-green releases on Fridays only." in quotes
    assert "Never commit straight to main." in quotes
    assert not any("squash" in q for q in quotes)  # a question decides nothing
    assert not any("Kafka" in q for q in quotes)  # no pattern: only a model would name it
    secret = next(q for q in quotes if "vault" in q)
    assert "s3cr3t-Value-991" not in secret  # redacted like every stored text
    assert out["project"] == project_id(ws) and out["withheld"] == []
    msgs = read_transcript(path).messages
    for d in out["items"]:
        assert (
            d["session"] == "s0" and d["found_by"] == "pattern" and d["ref"].startswith("decision:")
        )
        [m] = d["messages"]
        found = resolve(msgs, m["ref"], m["digest"])
        assert found.status == "same" and found.message.role == "user"
        assert d["quote"].split()[0] in found.message.text
    again = execute(ws, now=NOW, llm=ExtractiveLLM())  # nothing new: nothing recorded twice
    assert again["read"] == []
    assert len(recall(ws, {"memory": "decisions"})["items"]) == len(quotes)

    text = invoke(ws, "recall", "decisions").output
    assert "Never commit straight to main." in text and "decision:" in text
    doc = json.loads(invoke(ws, "recall", "decisions", "--json").output)
    assert len(doc["items"]) == len(quotes) and doc["items"][0]["messages"][0]["ref"]
    other = invoke(ws, "recall", "decisions", "--project", "nope-123")
    assert other.exit_code == 1 and "unknown project" in other.output


def test_model_decisions_are_kept_only_when_quoted_word_for_word(ws: Workspace) -> None:
    make_session(ws, "s0", TURNS[4:])
    answer = {
        "memory": "- Kafka is the event bus.",
        "used": ["s1"],
        "decisions": [
            {"quote": "we picked Kafka over RabbitMQ for the event bus", "source": "s1"},
            {"quote": "We decided to rewrite everything in Rust", "source": "s1"},
            {"quote": "Good choice.", "source": "s1"},  # the assistant's words, not a decision
        ],
    }
    with chat_server() as srv:
        srv.push(Reply(content=json.dumps(answer)))
        srv.default = lambda r: Reply(content=json.dumps({"memory": "", "used": []}))
        report = execute(ws, now=NOW, llm=OpenAICompatibleLLM(srv.url, "m", timeout=5))
        sent = srv.requests[0]["messages"][0]["content"]
    assert "decisions" in sent  # the session prompt asks for them
    items = recall(ws, {"memory": "decisions"})["items"]
    assert [(d["quote"], d["found_by"]) for d in items] == [
        ("we picked Kafka over RabbitMQ for the event bus", "model")
    ]
    reasons = [c["reason"] for c in report["checked"]]
    assert sum("not quoted word for word" in r for r in reasons) == 2, reasons


def test_decisions_of_a_session_that_leaves_sharing_are_withheld_and_purge_reaches_them(
    ws: Workspace,
) -> None:
    make_session(ws, "s0", TURNS[:1])
    make_session(ws, "s1", TURNS[2:3])
    execute(ws, now=NOW, llm=ExtractiveLLM())
    assert len(recall(ws, {"memory": "decisions"})["items"]) == 2
    ws.config_path.write_text('[sessions]\nindependent = ["s1"]\n')
    out = recall(ws, {"memory": "decisions"})
    assert [d["session"] for d in out["items"]] == ["s0"]
    assert out["withheld"] == [{"session": "s1", "why": "independent", "decisions": 1}]
    own = recall(ws, {"memory": "decisions", "session": "s1"})
    assert [d["quote"] for d in own["items"]] == ["Never commit straight to main."]
    view = recall(ws, {"memory": "session", "session": "s1"})  # the session view has them too
    assert [d["quote"] for d in view["decisions"]] == ["Never commit straight to main."]
    assert "1 withheld" in invoke(ws, "recall", "decisions").output

    r = invoke(ws, "sessions", "forget", "session:s0", "--text", "blue-green", "--purge")
    assert r.exit_code == 0, r.output
    assert "decision:" in r.output
    [d] = recall(ws, {"memory": "decisions"})["items"]
    assert "blue-green" not in d["quote"] and "[purged]" in d["quote"]


def test_recall_decisions_pages_by_limit_like_the_library(ws: Workspace) -> None:
    for i in range(3):
        make_session(ws, f"s{i}", TURNS)
    assert execute(ws, now=NOW, llm=ExtractiveLLM())["status"] == "ok"
    every = recall(ws, {"memory": "decisions", "limit": 100})
    assert every["total"] >= 6 and every["next_cursor"] is None
    first = json.loads(invoke(ws, "recall", "decisions", "--limit", "2", "--json").stdout)
    lib = recall(ws, {"memory": "decisions", "limit": 2})
    assert [d["id"] for d in first["items"]] == [d["id"] for d in lib["items"]]
    assert len(first["items"]) == 2 and first["nextCursor"] == "2"
    second = json.loads(
        invoke(ws, "recall", "decisions", "--limit", "2", "--cursor", "2", "--json").stdout
    )
    ids = [d["id"] for d in first["items"] + second["items"]]
    assert ids == [d["id"] for d in every["items"][:4]]
    bad = invoke(ws, "recall", "decisions", "--limit", "101")
    assert bad.exit_code == 2 and "--limit" in bad.output


def test_a_run_finds_once_the_decisions_of_messages_read_before_decisions_were_kept(
    ws: Workspace,
) -> None:
    from memcore.workspace.db import connect

    make_session(ws, "s0", TURNS, trailing_user="Let's always tag releases. Not read yet")
    first = execute(ws, now=NOW, llm=ExtractiveLLM())
    assert first["status"] == "ok" and first["decisions"]
    kept = sorted(d["quote"] for d in recall(ws, {"memory": "decisions"})["items"])
    assert not any("tag releases" in q for q in kept)  # its turn is not complete: unread
    # a database from before decisions were kept: the messages are read, no decision kept
    conn = connect(ws.db_path)
    with conn:
        conn.execute("DELETE FROM sess_decisions")
        conn.execute("DELETE FROM sess_state WHERE key='decisions_backfilled'")
    conn.close()
    assert recall(ws, {"memory": "decisions"})["items"] == []

    again = execute(ws, now=NOW, llm=ExtractiveLLM())
    assert again["status"] == "ok" and again["reviewed"] == [] and again["read"] == []
    assert again["tokens"]["calls"] == 0  # the patterns found them; no model call
    found = recall(ws, {"memory": "decisions"})["items"]
    assert sorted(d["quote"] for d in found) == kept
    assert sorted(again["decisions"]) == sorted(d["ref"] for d in found)
    conn = connect(ws.db_path)
    runs = {r[0] for r in conn.execute("SELECT run_id FROM sess_decisions")}
    conn.close()
    assert runs == {again["run_id"]}  # recorded as that run's own
    path = ws.root / "sessions" / "s0.jsonl"
    msgs = read_transcript(path).messages
    for d in found:  # each points at the user message it was said in
        m = resolve(msgs, d["messages"][0]["ref"], d["messages"][0]["digest"]).message
        assert m is not None and m.role == "user" and d["quote"] in redact(m.text)

    third = execute(ws, now=NOW, llm=ExtractiveLLM())  # once: not again
    assert third["decisions"] == []
    assert len(recall(ws, {"memory": "decisions"})["items"]) == len(kept)
