"""Pure-Python judge work spread over the machine's cores, with results identical to one core.

    out = split_map(fn, items)   # == [fn(x) for x in items], the later shares in forked workers

The analysis of every entry and the verdict of every candidate pair are pure functions of
their inputs (and of tables built before the split), and pure Python, so one process runs
them on one core whatever the machine has. :func:`split_map` cuts a long list into one
contiguous share per worker, runs the first share here and the others in forked children
(which inherit the analyzer, its cache and the vectors already in memory: nothing is sent but
the results), and puts the results back in order.

:func:`map_soon` starts the same work in forked workers only and returns at once, so the
caller can do something else meanwhile (the candidate search ranks neighbours in numpy while
the workers analyse the entries); calling what it returns waits for the results.

Only on Linux with the ``fork`` start method, only for lists of at least ``min_items``, never
inside a worker, and never while this process runs another thread (but memcore's own service
threads that hold nothing a worker needs, :data:`_WAITING_POOLS`): a thread may hold a
lock (an import, a log handler, a buffer) at the moment of the fork, and the child would wait
for it forever; so in a threaded host (the gateway) the work runs here. ``MEMCORE_WORKERS`` (an
integer, 1 = no workers) overrides the number of processes (default: the CPUs this process
may use, at most 4). A worker that fails, or that makes no progress (no CPU time) for
``patience`` seconds, is stopped and its share done here instead (the result is the same,
only slower).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MAX_WORKERS = 4
#: Seconds a worker may go without using any CPU, while its share is awaited, before it is
#: taken for hung (a slow worker on a busy machine still gets some CPU time).
PATIENCE = 30.0
_in_worker = False
_job: tuple[Callable[[object], object], Sequence[object]] | None = None


def default_workers() -> int:
    """Processes to use: ``MEMCORE_WORKERS`` when set to a positive integer, else the CPUs
    this process may run on (at most :data:`MAX_WORKERS`)."""
    raw = os.environ.get("MEMCORE_WORKERS", "").strip()
    if raw.isdigit() and int(raw) >= 1:
        return int(raw)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cpus))


def _mark_worker() -> None:
    global _in_worker
    _in_worker = True


def _run_share(bounds: tuple[int, int]) -> list[object]:
    assert _job is not None
    fn, items = _job
    return [fn(x) for x in items[bounds[0] : bounds[1]]]


def _can_fork(n: int, workers: int, min_items: int) -> bool:
    return not (
        workers < 1
        or n < min_items
        or _in_worker
        or _job is not None
        or _other_threads()
        or not sys.platform.startswith("linux")
        or "fork" not in multiprocessing.get_all_start_methods()
    )


#: Thread-name prefixes of memcore's own service threads a forked worker cannot wait on: the
#: use-m3 and MiniLM embedders' pools (their threads run only inside a call their caller
#: waits for, so they are idle here) and the recall writer (it holds only its own condition
#: and SQLite connections, which a worker never touches).
_WAITING_POOLS = ("use-m3", "minilm", "memcore-recall-writer")


def _other_threads() -> bool:
    """Whether another thread of this process may be running (and hold a lock a forked
    child would wait for forever: a fork copies the locks, not the threads)."""
    me = threading.current_thread()
    return any(t is not me and not t.name.startswith(_WAITING_POOLS) for t in threading.enumerate())


def _shares(n: int, parts: int) -> list[tuple[int, int]]:
    step = -(-n // parts)
    return [(s, min(n, s + step)) for s in range(0, n, step)]


def _start(
    fn: Callable[[T], R], items: Sequence[T], bounds: list[tuple[int, int]]
) -> tuple[ProcessPoolExecutor, list[Future[list[object]]]]:
    """One forked worker per share of ``bounds``, each started on its share. The caller
    sets ``_job`` to ``(fn, items)`` first (the workers inherit it) and clears it."""
    pool = ProcessPoolExecutor(
        max_workers=len(bounds),
        mp_context=multiprocessing.get_context("fork"),
        initializer=_mark_worker,
    )
    return pool, [pool.submit(_run_share, b) for b in bounds]


class _Hung(Exception):
    """No worker of the pool used any CPU time for the patience allowed."""


def _workers_cpu(pool: ProcessPoolExecutor) -> float:
    """CPU seconds used so far by the pool's live worker processes."""
    import psutil  # imported here: only a long wait needs it

    total = 0.0
    for proc in list((pool._processes or {}).values()):  # the pool's own workers
        try:
            t = psutil.Process(proc.pid).cpu_times()
        except (psutil.Error, ValueError):
            continue  # gone: the pool notices and fails the share
        total += t.user + t.system
    return total


def _result(fut: Future[list[object]], pool: ProcessPoolExecutor, patience: float) -> list[object]:
    """``fut.result()``, or :class:`_Hung` when the workers use no CPU for ``patience`` s."""
    last_cpu, since = -1.0, time.monotonic()
    while True:
        try:
            return fut.result(timeout=min(1.0, patience))
        except TimeoutError:
            pass
        cpu, now = _workers_cpu(pool), time.monotonic()
        if cpu != last_cpu:
            last_cpu, since = cpu, now
        elif now - since >= patience:
            raise _Hung


def _stop(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's workers (hung ones included): their shares fail and are done here."""
    for proc in list((pool._processes or {}).values()):
        proc.kill()
    pool.shutdown(wait=True, cancel_futures=True)


def _collect(
    fn: Callable[[T], R],
    items: Sequence[T],
    bounds: list[tuple[int, int]],
    futures: list[Future[list[object]]],
    pool: ProcessPoolExecutor,
    patience: float,
) -> list[R]:
    out: list[object] = []
    stopped = False
    for (lo, hi), fut in zip(bounds, futures, strict=True):
        try:
            if stopped and not fut.done():
                raise _Hung
            out.extend(_result(fut, pool, patience))
        except _Hung:  # no worker made progress: stop them all, do the share here
            if not stopped:
                _stop(pool)
                stopped = True
            out.extend(fn(x) for x in items[lo:hi])
        except Exception:  # a worker died or could not send: its share is done here
            out.extend(fn(x) for x in items[lo:hi])
    return out  # type: ignore[return-value]


def split_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    workers: int | None = None,
    min_items: int = 2000,
    patience: float = PATIENCE,
) -> list[R]:
    """``[fn(x) for x in items]``, computed in ``workers`` processes when the list is long
    (see the module docstring). ``fn`` must be pure: a worker's side effects are lost.
    ``patience``: seconds without CPU progress after which the workers are taken for hung."""
    global _job
    n = len(items)
    workers = default_workers() if workers is None else workers
    workers = min(workers, n // max(1, min_items // 2) or 1)
    if workers < 2 or not _can_fork(n, workers, min_items):
        return [fn(x) for x in items]
    bounds = _shares(n, workers)
    _job = (fn, items)  # type: ignore[assignment]  # inherited by the forked workers
    try:
        pool, futures = _start(fn, items, bounds[1:])
        with pool:
            here = [fn(x) for x in items[bounds[0][0] : bounds[0][1]]]
            rest = _collect(fn, items, bounds[1:], futures, pool, patience)
    finally:
        _job = None
    return here + rest


def map_soon(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    workers: int | None = None,
    min_items: int = 2000,
    patience: float = PATIENCE,
) -> Callable[[], list[R]]:
    """``[fn(x) for x in items]`` started now in forked workers (by default one fewer than
    :func:`default_workers`), while the caller goes on; the function returned
    waits and gives the list, in order. Where :func:`split_map` would not fork, the work is
    done here when that function is called. ``fn`` must be pure; ``patience`` as for
    :func:`split_map`."""
    global _job
    n = len(items)
    workers = default_workers() - 1 if workers is None else workers  # 0: all here
    workers = min(workers, n // max(1, min_items // 2) or 1)
    if not _can_fork(n, workers, min_items):
        return lambda: [fn(x) for x in items]
    bounds = _shares(n, workers)
    _job = (fn, items)  # type: ignore[assignment]  # inherited by the forked workers
    try:
        # with fork, every worker is forked at the first submit: _job can go right after
        pool, futures = _start(fn, items, bounds)
    finally:
        _job = None

    def wait() -> list[R]:
        with pool:
            return _collect(fn, items, bounds, futures, pool, patience)

    return wait
