"""Searches of one workspace run as batches in its lane (memcore.search.lanes): the searches
waiting when a batch begins go together (one prefetch of their model vectors, one index
update), each gets its own answer or error, other workspaces' lanes never wait for it."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, ThreadPoolExecutor
from pathlib import Path

import pytest

from memcore.search.connections import IndexPool
from memcore.search.embeddings import extra_installed
from memcore.search.lanes import SearchLanes
from memcore.search.query import search
from memcore.workspace.core import Workspace


def _wait_for(cond: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not cond():
        assert time.monotonic() < deadline, "the condition never came true"
        time.sleep(0.005)


class _Blocker:
    """A search that runs until released (holds its lane's thread)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, ready: object = None) -> str:
        self.started.set()
        assert self.release.wait(60)
        return "blocked"


def test_the_searches_waiting_when_a_batch_begins_go_together() -> None:
    prefetched: list[list[str]] = []
    order: list[str] = []

    def prepare(queries: list[str]) -> int:
        prefetched.append(queries)
        return len(prefetched)  # what the batch's searches get

    def job(name: str) -> Callable[[object], str]:
        def run(ready: object) -> str:
            order.append(f"{name}:{ready}")
            return name.upper()

        return run

    with ThreadPoolExecutor(4) as ex:
        lanes = SearchLanes(ex)
        first = _Blocker()
        f0 = lanes.submit("ws", "q0", first, prepare)
        assert first.started.wait(60)  # the lane's thread is busy with q0
        futures = [lanes.submit("ws", f"q{i}", job(f"q{i}"), prepare) for i in (1, 2, 3)]
        assert not any(f.done() for f in futures)  # they wait in the lane, not on threads
        first.release.set()
        assert f0.result(60) == "blocked"
        assert [f.result(60) for f in futures] == ["Q1", "Q2", "Q3"]
    assert order == ["q1:2", "q2:2", "q3:2"]  # in the order they came, with what was prepared
    assert prefetched == [["q0"], ["q1", "q2", "q3"]]  # once per batch
    assert lanes.batches == 2


def test_a_batch_is_at_most_max_batch_searches() -> None:
    prefetched: list[list[str]] = []
    with ThreadPoolExecutor(2) as ex:
        lanes = SearchLanes(ex, max_batch=2)
        first = _Blocker()
        lanes.submit("ws", "hold", first, prefetched.append)
        assert first.started.wait(60)
        futures = [lanes.submit("ws", f"q{i}", lambda _: None, prefetched.append) for i in range(5)]
        first.release.set()
        for f in futures:
            f.result(60)
    assert prefetched == [["hold"], ["q0", "q1"], ["q2", "q3"], ["q4"]]
    assert lanes.batches == 4  # hold, then three batches


def test_a_batch_is_spread_over_width_threads_and_its_last_share_goes_on() -> None:
    """With ``width`` 2 two searches of a batch run at once (each of these waits until the
    other has begun), and the lane goes on with the next batch after both."""
    both = threading.Barrier(2, timeout=60)
    prefetched: list[list[str]] = []
    with ThreadPoolExecutor(4) as ex:
        lanes = SearchLanes(ex, width=2)
        first = _Blocker()
        lanes.submit("ws", "hold", first, prefetched.append)
        assert first.started.wait(60)
        pair = [lanes.submit("ws", q, lambda _: both.wait(), prefetched.append) for q in ("a", "b")]
        first.release.set()
        assert sorted(f.result(60) for f in pair) == [0, 1]  # both passed the barrier
        later = [lanes.submit("ws", q, lambda _, q=q: q, prefetched.append) for q in ("c", "d")]
        assert [f.result(60) for f in later] == ["c", "d"]
    assert prefetched[:2] == [["hold"], ["a", "b"]]


def test_another_workspace_never_waits_for_a_busy_lane() -> None:
    with ThreadPoolExecutor(4) as ex:
        lanes = SearchLanes(ex)
        slow = _Blocker()
        held = lanes.submit("a", "first build", slow)
        assert slow.started.wait(60)
        waiting = lanes.submit("a", "behind it", lambda _: "a2")
        other = lanes.submit("b", "kafka", lambda _: "b1")
        assert other.result(60) == "b1"  # while a's lane is still held
        assert not held.done() and not waiting.done()
        slow.release.set()
        assert (held.result(60), waiting.result(60)) == ("blocked", "a2")


def test_each_search_gets_its_own_error_and_a_failed_prepare_gives_none() -> None:
    def fails(ready: object) -> str:
        raise OSError("disk gone")

    def bad_prefetch(queries: list[str]) -> None:
        raise RuntimeError("model file unreadable")

    with ThreadPoolExecutor(2) as ex:
        lanes = SearchLanes(ex)
        first = _Blocker()
        lanes.submit("ws", "q0", first, bad_prefetch)
        assert first.started.wait(60)
        bad = lanes.submit("ws", "q1", fails, bad_prefetch)
        good = lanes.submit("ws", "q2", lambda ready: f"fine {ready}", bad_prefetch)
        first.release.set()
        with pytest.raises(OSError, match="disk gone"):
            bad.result(60)
        assert good.result(60) == "fine None"


def test_close_cancels_the_waiting_searches_and_refuses_new_ones() -> None:
    with ThreadPoolExecutor(2) as ex:
        lanes = SearchLanes(ex)
        first = _Blocker()
        running = lanes.submit("ws", "q0", first)
        assert first.started.wait(60)
        queued = lanes.submit("ws", "q1", lambda _: "never")
        lanes.close()
        first.release.set()
        assert running.result(60) == "blocked"  # a search already running finishes
        with pytest.raises(CancelledError):
            queued.result(60)
        with pytest.raises(RuntimeError, match="closed"):
            lanes.submit("ws", "q2", lambda _: "never").result(60)


def test_a_search_cancelled_while_waiting_is_skipped() -> None:
    ran: list[str] = []
    with ThreadPoolExecutor(2) as ex:
        lanes = SearchLanes(ex)
        first = _Blocker()
        lanes.submit("ws", "q0", first)
        assert first.started.wait(60)
        gone = lanes.submit("ws", "q1", lambda _: ran.append("q1"))
        kept = lanes.submit("ws", "q2", lambda _: ran.append("q2"))
        assert gone.cancel()  # the client went away
        first.release.set()
        kept.result(60)
    assert ran == ["q2"]


def test_a_mark_lets_a_later_caller_take_an_update_that_started_after_it() -> None:
    """A search that waited in a queue passes the pool's mark of its arrival: an update that
    started after that mark (and finished) serves it; one that started before never does."""
    pool = IndexPool()
    runs: list[str] = []

    def update(name: str) -> Callable[[], str]:
        def run() -> str:
            runs.append(name)
            return name

        return run

    early = pool.mark()  # a search arrives
    assert pool.shared_update("db", update("u1"), since=early) == "u1"  # started after it
    late = pool.mark()  # another one arrives after u1 started
    assert pool.shared_update("db", update("u2"), since=early) == "u1"  # u1 serves the first
    assert pool.shared_update("db", update("u2"), since=late) == "u2"  # not the second
    assert pool.shared_update("other", update("o1"), since=early) == "o1"  # another database
    assert runs == ["u1", "u2", "o1"]
    pool.close()


def test_queued_searches_of_one_batch_share_one_index_update(ws: Workspace) -> None:
    """Real searches through a lane: those that waited behind a running one share the next
    index update, and each still sees a note written before it arrived."""
    (ws.memory_dir / "2026-10-01.md").write_text(
        "# Day\n\nThe kafka cluster was upgraded.\n", encoding="utf-8"
    )
    pool = IndexPool()
    with ThreadPoolExecutor(2) as ex:
        lanes = SearchLanes(ex)
        first = _Blocker()
        lanes.submit(str(ws.root), "hold", first)
        assert first.started.wait(60)
        (ws.memory_dir / "2026-10-02.md").write_text(
            "# Day\n\nThe zookeeper ensemble was retired.\n", encoding="utf-8"
        )
        futures = []
        for q in ("zookeeper", "kafka", "zookeeper ensemble"):
            since = pool.mark()
            futures.append(
                lanes.submit(
                    str(ws.root),
                    q,
                    lambda _, q=q, since=since: search(ws, q, record=False, pool=pool, since=since),
                )
            )
        runs_before = pool.updates_run
        first.release.set()
        results = [f.result(60) for f in futures]
    assert results[0].results[0]["path"] == "memory/2026-10-02.md"
    assert results[1].results[0]["path"] == "memory/2026-10-01.md"
    assert results[2].results[0]["path"] == "memory/2026-10-02.md"
    assert pool.updates_run == runs_before + 1  # one update for the three
    pool.close()


needs_pair = pytest.mark.skipif(
    not (extra_installed("use-m3") and extra_installed("minilm")),
    reason="memcore[embed] extra not installed",
)


@pytest.mark.embed
@needs_pair
def test_prefetched_query_vectors_are_the_ones_a_search_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One call per model embeds a batch's queries (the second model only the English
    sentences); each search then takes its vector from the cache, the same vector (up to
    float rounding) as a query embedded alone."""
    import numpy as np

    from memcore.search import dense
    from memcore.search.companion import ENV, companion_for
    from memcore.search.query import prepare_searches, search_embedder

    monkeypatch.setitem(os.environ, "MEMCORE_EMBEDDER", "use-m3")
    monkeypatch.delenv(ENV, raising=False)
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    ws = Workspace(root)
    first = search_embedder(ws)
    second = companion_for(first)
    assert second is not None
    stamp = time.time_ns()  # queries no earlier test embedded
    english = f"where are my holiday pictures {stamp}"
    german = f"wo landen meine Urlaubsfotos {stamp}"
    calls: list[tuple[str, int]] = []
    for model in (first, second):
        embed = model.embed

        def counted(texts: list[str], embed: Callable = embed, model: object = model) -> object:
            calls.append((str(getattr(model, "id", "")), len(texts)))
            return embed(texts)

        monkeypatch.setattr(model, "embed", counted)
    assert prepare_searches(ws, [english, german, english]).data == {}  # no memcore.toml
    assert calls == [(first.id, 2), (second.id, 1)]  # one call per model, no query twice
    assert dense.prefetch_query_vectors(first, [english, german]) == 0  # kept
    for model, query in ((first, english), (first, german), (second, english)):
        kept = dense.query_vector(model, query)
        alone = np.asarray(model.embed([query]), dtype=np.float32)[0]
        assert np.allclose(kept, alone, atol=1e-6)
    assert len(calls) == 5  # the three `alone` calls above; query_vector embedded nothing


def test_a_search_takes_the_settings_its_batch_read(ws: Workspace) -> None:
    """The batch's ``memcore.toml`` (read once, after every search of it arrived) is the one
    each search goes by: here ``[search] record = false`` read before the file was removed."""
    from memcore.search.query import prepare_searches
    from memcore.search.recorder import BatchRecorder

    (ws.memory_dir / "2026-10-01.md").write_text(
        "# Day\n\nThe kafka cluster was upgraded.\n", encoding="utf-8"
    )
    ws.config_path.write_text("[search]\nrecord = false\nembedder = 'hashing'\n", encoding="utf-8")
    config = prepare_searches(ws, ["kafka cluster"])
    ws.config_path.unlink()
    recorder = BatchRecorder()
    try:
        kept = search(ws, "kafka cluster", recorder=recorder, config=config)
        read = search(ws, "kafka cluster", recorder=recorder)  # reads the (now default) file
    finally:
        recorder.close(30)
    assert kept.results and kept.recorded == 0
    assert read.recorded == 1
