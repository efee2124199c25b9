"""Gateway bugs found by attacking it: odd characters, ids, vanished workspaces."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memcore.dream.undo import undo_run
from memcore.workspace.clock import utcnow
from memcore.workspace.core import Workspace
from tests.conftest import wait_healthy
from tests.test_gateway_helpers import FACT, gateway, make_ws, seed_candidate


def test_lone_surrogate_and_unicode_digits_are_400(ws: Workspace) -> None:
    with gateway([ws], scheduler=False) as (_, client, _served):
        body = b'{"query": "deploy \\ud800 notes"}'
        res = client.post(
            "/api/memories/search", content=body, headers={"Content-Type": "application/json"}
        )
        assert res.status_code == 400 and "surrogate" in res.json()["error"], res.text
        for route in ("/api/candidates?limit=\u00b2", "/api/runs?limit=\u0663"):
            res = client.get(route)
            assert res.status_code == 400 and "limit" in res.json()["error"], route
        res = client.get("/api/status", params={"workspace": "\u00b2"})
        assert res.status_code == 404 and "no workspace" in res.json()["error"]
        res = client.post("/api/commands", json={"text": "/dreaming status", "workspace": "\u0661"})
        assert res.status_code == 404


def test_dream_run_id_is_the_journal_id_undo_takes(ws: Workspace) -> None:
    seed_candidate(ws)
    ws.memory_md.write_text("# Long-Term Memory\n\n- The office plant needs water.\n")
    with gateway([ws], scheduler=False) as (_, client, _served):
        res = client.post("/api/memories/dream", json={})
        assert res.status_code == 200, res.text
        body = res.json()
    assert FACT in ws.memory_md.read_text(encoding="utf-8")
    assert isinstance(body["runId"], str) and body["scheduleRunId"] >= 1
    undone = undo_run(ws, body["runId"], now=utcnow())
    assert undone and FACT not in ws.memory_md.read_text(encoding="utf-8")


ROUTES = [
    ("GET", "/", None),
    ("GET", "/api/status", None),
    ("GET", "/api/candidates", None),
    ("GET", "/api/runs", None),
    ("GET", "/api/review", None),
    ("GET", "/api/sessions", None),
    ("POST", "/api/memories/search", {"query": "x"}),
    ("POST", "/api/memories/promote", {"apply": True}),
    ("POST", "/api/memories/promote", {}),
    ("POST", "/api/memories/dream", {}),
    ("POST", "/api/commands", {"text": "/dreaming rem"}),
    ("POST", "/api/review", {"item": 1, "choice": "a"}),
]


@pytest.mark.parametrize("mode", ["deleted", "moved"])
def test_vanished_workspace_is_422_on_every_route_never_recreated(
    ws: Workspace, tmp_path, mode: str
) -> None:
    other = make_ws(tmp_path / "other")
    with gateway([ws, other], scheduler=False) as (_, client, _served):
        if mode == "deleted":
            shutil.rmtree(ws.root)
        else:
            ws.root.rename(tmp_path / "elsewhere")
        for method, path, body in ROUTES:
            res = client.request(method, path, json=body) if body is not None else client.get(path)
            assert res.status_code == 422, (method, path, res.status_code, res.text)
            assert str(ws.root) in res.json()["error"], (method, path)
            assert not ws.root.exists(), (method, path)
        assert client.get("/api/status", params={"workspace": "other"}).status_code == 200


SLOW_GATEWAY = """
import sys, time
from pathlib import Path
from memcore.gateway import app
from memcore.gateway.server import GatewayOptions, serve
from memcore.gateway.workspaces import build_served
from memcore.schedule.jobs import Job

def slow(ws, now):
    time.sleep(120)
    return {}

app.api.DREAM_JOB = Job(name="dream", next_due=lambda *a: None, run=slow, hold_lock=False)
served = build_served([(None, Path(sys.argv[1]))])
opts = GatewayOptions(port=int(sys.argv[2]), token="t", shutdown_grace=0.5, scheduler=False)
sys.exit(serve(served, opts))
"""


def test_sigterm_past_the_grace_answers_json_503_without_tracebacks(ws: Workspace) -> None:
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    import httpx

    from memcore.gateway.server import bind_socket

    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    taken.close()
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_GATEWAY, str(ws.root), str(port)],
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    answer: list[httpx.Response] = []
    try:
        wait_healthy(url, proc, timeout=30)
        deadline = time.monotonic() + 30
        headers = {"Authorization": "Bearer t"}

        def post() -> None:
            answer.append(httpx.post(f"{url}/api/memories/dream", json={}, headers=headers,
                                     timeout=60))  # fmt: skip

        t = threading.Thread(target=post)
        t.start()
        while httpx.get(f"{url}/api/status", timeout=5).json()["running"] != "dream":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        t.join(60)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert answer and answer[0].status_code == 503, answer
    assert "shutting down" in answer[0].json()["error"]
    assert "Traceback" not in err and "CancelledError" not in err, err
    assert proc.returncode == 0


def test_concurrent_searches_record_while_another_process_holds_the_lock(ws: Workspace) -> None:
    """Concurrent searches of one workspace never wait for the workspace lock: hits go to the
    recall log while a dream (here: another process) holds it; none is lost."""
    import asyncio

    import httpx

    from memcore.recall.store import read_view
    from tests.conftest import held_lock
    from tests.test_gateway_helpers import TOKEN

    for d in range(3):
        (ws.memory_dir / f"2026-10-0{d + 1}.md").write_text(
            f"# Day {d}\n\nThe kafka cluster in zone {d} was upgraded.\n", encoding="utf-8"
        )

    async def many(url: str, n: int) -> list[httpx.Response]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as c:
            return await asyncio.gather(
                *(
                    c.post("/api/memories/search", json={"query": f"kafka cluster {i}"})
                    for i in range(n)
                )
            )

    with gateway([ws], scheduler=False) as (running, _client, _):
        with held_lock(ws):
            answers = asyncio.run(many(running.url, 24))
        assert all(r.status_code == 200 for r in answers), [r.text for r in answers][:2]
        hits = sum(len(r.json()["results"]) for r in answers)
        assert hits >= 24 and all(r.json()["recordError"] is None for r in answers)
    total = sum(e["recallCount"] for e in read_view(ws, utcnow()).entries.values())
    assert total == hits
