"""The dream cycle with a model judge: a real HTTP server on 127.0.0.1 speaking the Chat
Completions protocol (tests/chat_server.py) answers the judge's pairs and writes merged texts;
memcore validates every answer before anything is applied."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memcore.dream import cycle, tables
from memcore.errors import ConfigError
from memcore.recall import ledger
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from memcore.workspace.markdown import text_entry_id
from tests.chat_server import ChatServer, Reply, chat_server

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
STEPS = ("merge", "reconcile", "decay", "forget")
KEEPER = "The build uses pytest for tests and ruff for lint."
OTHER = "The build uses pytest for tests and ruff for lint at /srv/app/pyproject.toml."


def judging(verdict: str, merged: str | None = None) -> Callable[[dict[str, Any]], Reply]:
    """A model that answers every pair of a judge request with ``verdict`` (and ``merged``)."""

    def reply(request: dict[str, Any]) -> Reply:
        doc = json.loads(request["messages"][-1]["content"])
        if "pairs" not in doc:  # a merged-text request
            return Reply(content=json.dumps({"text": merged}))
        items = [
            {
                "pair": p["pair"],
                "verdict": verdict,
                "reason": "model",
                "confidence": 0.9,
                "newer": "b",
                "merged_text": merged,
            }
            for p in doc["pairs"]
        ]
        return Reply(content=json.dumps({"judgements": items}))

    return reply


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with chat_server() as srv:
        yield srv


def setup(ws: Workspace, url: str) -> None:
    ws.config_path.write_text(f'[llm]\nbase_url = "{url}"\nmodel = "tiny"\n', encoding="utf-8")
    ws.memory_md.write_text(f"# M\n\n- {KEEPER}\n- {OTHER}\n", encoding="utf-8")
    with tables.connect(ws) as conn:
        ledger.save(
            conn,
            [ledger.Meta(id=text_entry_id(KEEPER), importance=0.9, created_at="2026-11-01")],
        )


def texts(ws: Workspace) -> list[str]:
    return [e.text for e in parse(ws.memory_md.read_text(encoding="utf-8")).entries]


def test_model_text_that_keeps_every_detail_is_applied_by_auto(
    ws: Workspace, server: ChatServer
) -> None:
    setup(ws, server.url)
    written = "Tests run with pytest and lint with ruff, configured in /srv/app/pyproject.toml."
    server.default = judging("same", written)
    res = cycle.run_cycle(ws, now=NOW, steps=STEPS, keep_plan=True)
    assert json.dumps({k: v for k, v in res.items() if k != "plan"})
    assert res["merged"] == 1 and res["mergesDeferred"] == 0
    plan = res["plan"]
    assert plan.model == "tiny" and plan.judge.startswith("model-1") and plan.merges[0].by_model
    assert texts(ws) == [written]
    sent = json.loads(server.requests[0]["messages"][-1]["content"])
    assert {sent["pairs"][0]["a"]["text"], sent["pairs"][0]["b"]["text"]} == {KEEPER, OTHER}


def test_model_text_that_drops_a_detail_is_not_used(ws: Workspace, server: ChatServer) -> None:
    setup(ws, server.url)
    server.default = judging("same", "Tests run with pytest and lint with ruff.")
    res = cycle.run_cycle(ws, now=NOW, steps=STEPS, keep_plan=True)
    # the model's text lost the path: memcore's own lossless text is used instead
    assert res["merged"] == 1 and not res["plan"].merges[0].by_model
    assert "/srv/app/pyproject.toml" in texts(ws)[0] and len(texts(ws)) == 1


def test_garbage_and_timeouts_skip_pairs_and_apply_nothing(
    ws: Workspace, server: ChatServer
) -> None:
    setup(ws, server.url)
    before = ws.memory_md.read_bytes()
    server.default = lambda request: Reply(content="I think they are the same!")
    res = cycle.run_cycle(ws, now=NOW, steps=STEPS)
    assert res["merged"] == 0 and res["skippedPairsTotal"] == 1
    assert "not JSON" in res["skippedPairs"][0]["reason"]
    assert ws.memory_md.read_bytes() == before
    asked = len(server.requests)
    server.default = judging("related")
    res = cycle.run_cycle(ws, now=NOW + timedelta(hours=1), steps=STEPS)
    assert len(server.requests) > asked  # a skipped pair is asked again, never cached
    assert res["skippedPairsTotal"] == 0 and res["merged"] == 0


def test_second_run_with_nothing_new_makes_no_model_call(ws: Workspace, server: ChatServer) -> None:
    setup(ws, server.url)
    server.default = judging("related")
    cycle.run_cycle(ws, now=NOW, steps=STEPS)
    asked = len(server.requests)
    assert asked >= 1
    cycle.run_cycle(ws, now=NOW + timedelta(days=1), steps=STEPS)
    assert len(server.requests) == asked


def test_model_judge_without_a_model_is_one_config_error(ws: Workspace) -> None:
    ws.config_path.write_text('[consolidation]\njudge = "model"\n', encoding="utf-8")
    ws.memory_md.write_text(f"# M\n\n- {KEEPER}\n- {OTHER}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"judge = 'model' needs a model"):
        cycle.run_cycle(ws, now=NOW, steps=STEPS)
