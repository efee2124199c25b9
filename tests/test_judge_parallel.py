"""split_map: the same results as one process, in order, with the later shares computed in
forked workers (Linux)."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time

import numpy as np
import pytest

from memcore.judge import parallel
from memcore.judge.analysis import Analyzer
from memcore.judge.offline import OfflineJudge
from memcore.judge.protocol import EntryView


def _square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


@pytest.fixture(autouse=True)
def _no_thread_of_an_earlier_test() -> None:
    """Workers are forked only while no other thread runs: wait for a thread an earlier test
    left finishing (a server's, a pool's) to end, so the tests below see the forks they
    assert."""
    deadline = time.monotonic() + 20
    while parallel._other_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not parallel._other_threads(), [t.name for t in threading.enumerate()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork workers: Linux only")
def test_results_are_in_order_and_later_shares_ran_in_workers() -> None:
    out = parallel.split_map(_square_and_pid, range(3000), workers=3, min_items=100)
    assert [sq for sq, _ in out] == [x * x for x in range(3000)]
    pids = [pid for _, pid in out]
    assert pids[0] == os.getpid()
    assert pids[0] == os.getpid() and os.getpid() not in pids[1000:]  # shares 2, 3 elsewhere
    # two workers were forked for them, but one may take both shares when the other is slow
    # to start (a loaded machine): which worker runs a share is not ours to fix
    assert 2 <= len(set(pids)) <= 3
    assert pids == sorted(pids, key=pids.index)  # one contiguous share per process


def test_short_lists_one_worker_or_memcore_workers_1_stay_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert {pid for _, pid in parallel.split_map(_square_and_pid, range(50))} == {os.getpid()}
    out = parallel.split_map(_square_and_pid, range(3000), workers=1, min_items=100)
    assert {pid for _, pid in out} == {os.getpid()}
    monkeypatch.setenv("MEMCORE_WORKERS", "1")
    assert parallel.default_workers() == 1
    out = parallel.split_map(_square_and_pid, range(3000), min_items=100)
    assert {pid for _, pid in out} == {os.getpid()}


def _boom(x: int) -> int:
    if x == 2999 and os.getpid() != _PARENT:
        os._exit(3)  # the worker dies without an answer
    return -x


_PARENT = os.getpid()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork workers: Linux only")
def test_a_worker_that_dies_has_its_share_done_here() -> None:
    assert parallel.split_map(_boom, range(3000), workers=2, min_items=100) == [
        -x for x in range(3000)
    ]


def test_the_judge_on_many_pairs_gives_the_verdicts_of_one_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frames = [
        "{p} listens on port {n}.",
        "{p} now listens on port {m}.",
        "The {p} worker runs {n} replicas in staging.",
        "The {p} worker runs {m} replicas in production.",
        "{p} deploys with TF (Terraform) every weekday.",
    ]
    texts = [
        f.format(p=p, n=n, m=n + 1)
        for p in ("Atlas", "Orbit", "Quill", "Nova")
        for n in range(60)
        for f in frames
    ]
    views = [EntryView(f"e{i}", t, created_at=f"2026-0{1 + i % 9}-01") for i, t in enumerate(texts)]
    pairs = [
        (views[i], views[j])
        for i in range(len(views))
        for j in (i + 1, i + 2, i + 5)
        if j < len(views)
    ]
    assert len(pairs) > 2000
    many = OfflineJudge(None, Analyzer.for_texts(texts)).judge(pairs)
    monkeypatch.setenv("MEMCORE_WORKERS", "1")
    one = OfflineJudge(None, Analyzer.for_texts(texts)).judge(pairs)
    assert many == one
    assert {j.verdict for j in one} >= {"same", "related"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork workers: Linux only")
def test_map_soon_runs_in_workers_while_the_caller_goes_on() -> None:
    wait = parallel.map_soon(_square_and_pid, range(3000), workers=2, min_items=100)
    here = parallel.split_map(_square_and_pid, range(10))  # the caller is free meanwhile
    out = wait()
    assert [sq for sq, _ in out] == [x * x for x in range(3000)]
    assert os.getpid() not in {pid for _, pid in out}  # (which worker took a share: any)
    assert [sq for sq, _ in here] == [x * x for x in range(10)]
    dead = parallel.map_soon(_boom, range(3000), workers=2, min_items=100)
    assert dead() == [-x for x in range(3000)]  # the dead worker's share was done here


def test_map_soon_without_workers_computes_here_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMCORE_WORKERS", "1")
    seen: list[int] = []

    def note(x: int) -> int:
        seen.append(x)
        return x + 1

    wait = parallel.map_soon(note, range(3000), min_items=100)
    assert seen == []  # nothing done yet
    assert wait() == [x + 1 for x in range(3000)]
    assert seen == list(range(3000))


def test_candidates_with_the_analysis_in_workers_are_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memcore.judge.candidates import candidates

    rng = np.random.default_rng(7)
    names = ["Atlas", "Orbit", "Quill", "Nova", "Kestrel", "Juniper"]
    texts = [
        f"{names[i % 6]} service {i % 97} listens on port {1000 + i % 613} in "
        f"{'staging' if i % 2 else 'production'} (`/srv/app{i % 41}`)."
        for i in range(2400)
    ]
    views = [
        EntryView(f"e{i}", t, scope="project" if i % 5 else "global") for i, t in enumerate(texts)
    ]
    vecs = rng.standard_normal((2400, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    monkeypatch.setenv("MEMCORE_WORKERS", "2")
    forked = candidates(views, vecs, Analyzer.for_texts(texts))
    monkeypatch.setenv("MEMCORE_WORKERS", "1")
    here = candidates(views, vecs, Analyzer.for_texts(texts))
    assert forked == here
    assert {c.source for c in here} >= {"knn", "token", "knn+token"}


def _hang_in_worker(x: int) -> int:
    if os.getpid() != _PARENT:
        time.sleep(3600)  # a worker that never answers and uses no CPU (a lock it waits for)
    return x + 7


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork workers: Linux only")
def test_a_hung_worker_is_stopped_and_its_share_done_here() -> None:
    threads = set(threading.enumerate())  # (other tests may have left service threads)
    children = set(multiprocessing.active_children())
    out = parallel.split_map(_hang_in_worker, range(3000), workers=2, min_items=100, patience=0.5)
    assert out == [x + 7 for x in range(3000)]
    wait = parallel.map_soon(_hang_in_worker, range(3000), workers=2, min_items=100, patience=0.5)
    assert wait() == [x + 7 for x in range(3000)]
    # the pools' threads are gone with their workers
    assert set(threading.enumerate()) <= threads
    assert set(multiprocessing.active_children()) <= children  # the hung workers were reaped


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="test-other")
    other.start()
    try:
        out = parallel.split_map(_square_and_pid, range(3000), workers=2, min_items=100)
        soon = parallel.map_soon(_square_and_pid, range(3000), workers=2, min_items=100)()
    finally:
        stop.set()
        other.join()
    assert {pid for _, pid in out + soon} == {os.getpid()}
    assert [sq for sq, _ in out] == [sq for sq, _ in soon] == [x * x for x in range(3000)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork workers: Linux only")
def test_analyses_in_flight_are_not_started_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCORE_WORKERS", "2")
    texts = [f"Service {i % 97} listens on port {1000 + i} in staging." for i in range(2400)]
    an = Analyzer.for_texts(texts)
    first = an.analyse_soon(texts)
    workers = set(multiprocessing.active_children())
    assert workers  # the analyses run in a forked worker
    again = an.analyse_soon(texts[:500])  # all in flight already: nothing new is started
    assert set(multiprocessing.active_children()) == workers
    again()  # waits for the first batch
    first()
    fresh = Analyzer.for_texts(texts)
    assert [an.analyse(t) for t in texts] == [fresh._analyse(t) for t in texts]
