"""Batched recall recording (memcore.search.recorder) and shared query vectors: a gateway's
searches hand their hits to one writer that records them in batches; nothing is lost."""

from __future__ import annotations

import threading
from datetime import timedelta

import numpy as np

from memcore.recall import log as recall_log
from memcore.recall.store import read_store, read_view
from memcore.search.embeddings.combined import _queue_for, embed_query
from memcore.search.embeddings.hashing import HashingEmbedder
from memcore.search.query import search
from memcore.search.recorder import BatchRecorder
from memcore.workspace.clock import utcnow
from memcore.workspace.core import Workspace
from tests.conftest import held_lock, wait_healthy


def _notes(ws: Workspace, days: int = 3) -> None:
    for d in range(days):
        (ws.memory_dir / f"2026-10-0{d + 1}.md").write_text(
            f"# Day {d}\n\nThe kafka cluster in zone {d} was upgraded.\n", encoding="utf-8"
        )


def _recalls(ws: Workspace) -> int:
    return sum(e["recallCount"] for e in read_store(ws).entries.values())


def test_queued_searches_are_written_as_one_batch(ws: Workspace) -> None:
    _notes(ws)
    rec = BatchRecorder(start=False)  # the writer waits: every search below queues
    now = utcnow()
    answers = [
        search(ws, f"kafka cluster {i}", limit=3, now=now + timedelta(seconds=i), recorder=rec)
        for i in range(30)
    ]
    hits = sum(a.recorded for a in answers)
    assert hits == sum(len(a.results) for a in answers) >= 30
    assert not ws.store_path.exists() and not recall_log.log_path(ws).exists()  # not written yet
    assert rec.pending() == 30
    assert rec.close(timeout=60)
    assert rec.batches == 1 and rec.recorded == 30  # one append, one fold for all of them
    assert _recalls(ws) == hits
    assert not recall_log.segments(ws) and not recall_log.log_path(ws).exists()  # folded


def test_searches_from_many_threads_lose_no_recall(ws: Workspace) -> None:
    _notes(ws)
    rec = BatchRecorder()
    counts: list[int] = []

    def worker(k: int) -> None:
        for i in range(10):
            counts.append(search(ws, f"kafka zone {k} {i}", limit=2, recorder=rec).recorded)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert rec.close(timeout=60)
    assert rec.recorded == 60 and 1 <= rec.batches <= 60
    assert _recalls(ws) == sum(counts) >= 60


def test_a_busy_lock_leaves_the_batch_in_the_recall_log(ws: Workspace) -> None:
    _notes(ws)
    rec = BatchRecorder()
    with held_lock(ws):  # a dream in another process holds the workspace lock
        n = search(ws, "kafka cluster", limit=3, recorder=rec).recorded
        assert rec.flush(timeout=60)
        assert not ws.store_path.exists()  # the fold waits for the lock holder
        assert sum(e["recallCount"] for e in read_view(ws, utcnow()).entries.values()) == n
    rec.close(timeout=60)
    assert rec.last_error(ws) is None


def test_a_failed_batch_is_reported_by_the_next_search(ws: Workspace) -> None:
    _notes(ws)
    ws.config_path.write_text("[dreaming]\nmode = 'nope'\n", encoding="utf-8")
    rec = BatchRecorder()
    search(ws, "kafka cluster", limit=3, recorder=rec)
    assert rec.flush(timeout=60)
    second = search(ws, "kafka zone", limit=3, recorder=rec)
    assert second.record_error and "memcore.toml" in second.record_error
    assert rec.close(timeout=60)
    assert (ws.dreams_dir / "recall-errors.json").exists()


def test_a_recording_after_close_is_written_inline(ws: Workspace) -> None:
    _notes(ws)
    rec = BatchRecorder()
    assert rec.close(timeout=10)
    n = search(ws, "kafka cluster", limit=3, recorder=rec).recorded
    assert n >= 1 and _recalls(ws) == n


def test_memory_md_hits_count_as_accesses_in_batches(ws: Workspace) -> None:
    from memcore.recall.ledger import connect

    ws.memory_md.write_text("# Long-Term Memory\n\n- The kafka cluster is in zone 9.\n")
    rec = BatchRecorder(start=False)
    for i in range(3):
        res = search(ws, f"kafka cluster zone {i}", limit=3, recorder=rec)
        assert res.results and res.results[0]["path"] == "MEMORY.md"
    assert rec.close(timeout=60) and rec.batches == 1
    with connect(ws) as conn:
        (accesses,) = conn.execute("SELECT sum(access_count) FROM dream_ledger").fetchone()
    assert accesses == 3


class _CountingEmbedder(HashingEmbedder):
    """The hashing backend, counting its calls and the texts of each."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []
        self.gate = threading.Event()

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        self.gate.wait(10)  # the first call holds until the other threads are waiting
        return super().embed(texts)


def test_concurrent_query_vectors_share_model_calls() -> None:
    emb = _CountingEmbedder()
    texts = [f"query number {i}" for i in range(12)]
    out: dict[int, np.ndarray] = {}

    def one(i: int) -> None:
        out[i] = embed_query(emb, texts[i])

    first = threading.Thread(target=one, args=(0,))
    first.start()
    while not emb.calls:  # the first call runs (and holds) ...
        threading.Event().wait(0.01)
    rest = [threading.Thread(target=one, args=(i,)) for i in range(1, 12)]
    for t in rest:
        t.start()
    queue = _queue_for(emb)
    while len(queue.waiting) < 11:  # ... while the others queue up behind it
        threading.Event().wait(0.01)
    emb.gate.set()
    for t in [first, *rest]:
        t.join(30)
    assert emb.calls == [1, 11]  # the first alone, then every waiting query in one call
    solo = HashingEmbedder().embed(texts)
    for i in range(12):
        assert np.allclose(out[i], solo[i], atol=1e-6)


HELD_WRITER_GATEWAY = """
import sys
from pathlib import Path
from memcore.gateway import app
from memcore.gateway.server import GatewayOptions, serve
from memcore.gateway.workspaces import build_served
from memcore.search.recorder import BatchRecorder

# the writer only starts at shutdown: every recording is still queued when SIGTERM comes
app.BatchRecorder = lambda: BatchRecorder(start=False)
served = build_served([(None, Path(sys.argv[1]))])
opts = GatewayOptions(port=int(sys.argv[2]), token="t", scheduler=False)
sys.exit(serve(served, opts))
"""


def test_sigterm_drains_the_queue_before_the_gateway_exits(ws: Workspace) -> None:
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    import httpx

    from memcore.gateway.server import bind_socket

    _notes(ws)
    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    taken.close()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD_WRITER_GATEWAY, str(ws.root), str(port)],
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, timeout=60)
        headers = {"Authorization": "Bearer t"}
        accepted = 0
        with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
            for i in range(20):
                res = c.post("/api/memories/search", json={"query": f"kafka cluster {i}"})
                assert res.status_code == 200, res.text
                accepted += res.json()["recorded"]
        assert accepted >= 20
        assert not ws.store_path.exists() and not recall_log.log_path(ws).exists()  # queued
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert _recalls(ws) == accepted  # every accepted recall is in the store, none lost
