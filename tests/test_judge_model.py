"""The model judge against a real local OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

from memcore.judge.llm import OpenAICompatibleLLM
from memcore.judge.model import ModelJudge
from memcore.judge.protocol import EntryView, Verdict, judge_cached
from memcore.workspace import db
from tests.chat_server import Reply, chat_server

A = EntryView("a", "Kestrel listens on port 7400.", "fact", "project", "2026-01-02")
B = EntryView("b", "Kestrel listens on port 7400, behind Envoy.", "fact", "project", "2026-02-02")
C = EntryView("c", "Kestrel moved to port 7500.", "fact", "project", "2026-03-02")
D = EntryView("d", "Kestrel's staging runs Node 20.", "fact", "project", "2026-03-02")


def answer(*items: dict[str, object]) -> Reply:
    return Reply(content=json.dumps({"judgements": list(items)}))


def test_batched_request_and_valid_answers() -> None:
    with chat_server() as srv:
        srv.push(
            answer(
                {
                    "pair": 0,
                    "verdict": "same",
                    "reason": "adds the proxy",
                    "confidence": 0.9,
                    "merged_text": "Kestrel listens on port 7400, behind Envoy.",
                },
                {
                    "pair": 1,
                    "verdict": "supersedes",
                    "reason": "port moved",
                    "newer": "b",
                    "confidence": 1.7,
                },
            ),
            answer({"pair": 0, "verdict": "related", "reason": "different facts"}),
        )
        judge = ModelJudge(OpenAICompatibleLLM(srv.url, "m", timeout=5), batch_size=2)
        out = judge.judge([(A, B), (A, C), (A, D)])
    assert len(srv.requests) == 2  # two pairs, then one
    sent = json.loads(srv.requests[0]["messages"][-1]["content"])
    assert [p["pair"] for p in sent["pairs"]] == [0, 1]
    assert sent["pairs"][0]["a"]["text"] == A.text and "same" in sent["verdicts"]
    assert srv.requests[0]["response_format"] == {"type": "json_object"}
    assert out[0].verdict is Verdict.SAME and out[0].merged_text == B.text
    assert out[1].verdict is Verdict.SUPERSEDES and out[1].newer == "c"
    assert out[1].confidence == 1.0  # clamped
    assert out[2].verdict is Verdict.RELATED and out[2].confidence == 0.5


def test_bad_items_are_skipped_with_their_reason() -> None:
    with chat_server() as srv:
        srv.push(
            answer(
                {"pair": 0, "verdict": "duplicate", "reason": "?"},
                {"pair": 2, "verdict": "same", "merged_text": "Kestrel listens behind Envoy."},
            )
        )
        judge = ModelJudge(OpenAICompatibleLLM(srv.url, "m", timeout=5), batch_size=4)
        out = judge.judge([(A, C), (A, D), (A, B)])
    assert out[0].verdict is None and "unknown verdict" in out[0].reason
    assert out[1].verdict is None and "left pair 1 out" in out[1].reason
    # a merged text that drops a detail (7400) is not kept; the verdict stays
    assert out[2].verdict is Verdict.SAME and out[2].merged_text is None
    assert "7400" in out[2].reason


def test_garbage_and_timeouts_skip_the_whole_batch(tmp_path: Path) -> None:
    with chat_server() as srv:
        srv.push(Reply(content="I think they are the same!"), Reply(content="{}", delay=2.0))
        judge = ModelJudge(OpenAICompatibleLLM(srv.url, "m", timeout=0.5), batch_size=2)
        garbage = judge.judge([(A, B), (A, C)])
        late = judge.judge([(A, B)])
    assert all(j.verdict is None and "not JSON" in j.reason for j in garbage)
    assert late[0].verdict is None and "timed out" in late[0].reason


def test_second_run_makes_no_model_call(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "memcore.sqlite")
    with chat_server() as srv:
        srv.push(answer({"pair": 0, "verdict": "supersedes", "newer": "b", "reason": "moved"}))
        judge = ModelJudge(OpenAICompatibleLLM(srv.url, "m", timeout=5))
        first = judge_cached(judge, [(A, C)], conn)
        again = judge_cached(judge, [(C, A)], conn)
    assert len(srv.requests) == 1
    assert first[0].newer == again[0].newer == "c"
