"""Merges that would lose a detail, with a model configured: a real HTTP server on 127.0.0.1
speaking the Chat Completions protocol writes the merged text."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from memcore.dream import cycle, review, tables
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
STEPS = ("merge", "reconcile", "decay", "forget")
KEEPER = "The build uses pytest for tests and ruff for lint."
OTHER = "The build uses pytest for tests and ruff for lint at /srv/app/pyproject.toml."


class _Handler(BaseHTTPRequestHandler):
    answer = ""
    seen: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        out = {
            "model": body["model"],
            "choices": [{"message": {"content": json.dumps({"text": type(self).answer})}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        }
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    _Handler.seen = []
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()


def setup(ws: Workspace, url: str) -> None:
    ws.config_path.write_text(f'[llm]\nbase_url = "{url}"\nmodel = "tiny"\n', encoding="utf-8")
    from memcore.recall import ledger
    from memcore.workspace.markdown import text_entry_id

    ws.memory_md.write_text(f"# M\n\n- {KEEPER}\n- {OTHER}\n", encoding="utf-8")
    with tables.connect(ws) as conn:
        ledger.save(
            conn,
            [
                ledger.Meta(
                    id=text_entry_id(KEEPER), importance=0.9, created_at="2026-11-01T00:00:00.000Z"
                )
            ],
        )


def test_model_text_that_keeps_every_detail_is_applied_by_auto(ws: Workspace, server: str) -> None:
    setup(ws, server)
    _Handler.answer = (
        "Tests run with pytest and lint with ruff, configured in /srv/app/pyproject.toml."
    )
    res = cycle.run_cycle(ws, now=NOW, steps=STEPS, keep_plan=True)
    assert json.dumps({k: v for k, v in res.items() if k != "plan"})
    assert res["merged"] == 1 and res["mergesDeferred"] == 0
    assert res["plan"].model == "tiny" and res["plan"].merges[0].by_model
    entries = parse(ws.memory_md.read_text(encoding="utf-8")).entries
    assert [e.text for e in entries] == [_Handler.answer]
    assert _Handler.seen and _Handler.seen[0]["model"] == "tiny"
    assert OTHER in json.loads(_Handler.seen[0]["messages"][1]["content"])["entries"]


def test_model_text_that_drops_a_detail_waits_for_review(ws: Workspace, server: str) -> None:
    setup(ws, server)
    _Handler.answer = "Tests run with pytest and lint with ruff."
    res = cycle.run_cycle(ws, now=NOW, steps=STEPS)
    assert res["merged"] == 0 and res["mergesDeferred"] == 1
    assert len(parse(ws.memory_md.read_text(encoding="utf-8")).entries) == 2
    item = review.pending(ws)[0]
    assert "/srv/app/pyproject.toml" in item["text"]  # the deterministic combination
