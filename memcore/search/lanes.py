"""Concurrent searches of one workspace run in batches, for a long-lived server.

A search's own work is mostly Python, so threads of one process take turns on the interpreter
lock. A query's model call is about 40 numpy steps, each of which gives the lock back and
waits its turn to take it again: with 16 search threads busy it took 50-170 ms against 10 ms
alone, and those calls, one at a time (the queries waiting meanwhile went into the next), were
the longest path of 200 concurrent searches. :class:`SearchLanes` gives each workspace a lane
instead: its searches queue there, and a batch takes every search waiting when it begins (at
most :data:`MAX_BATCH`). The model's vectors of all its queries are computed first, in one call
per model, while no other search of the lane runs (the caller's ``prepare``:
:func:`memcore.search.query.prepare_searches` in the gateway, which also reads the workspace's
settings once for the batch); then the batch's searches are
spread over up to ``width`` threads, each answer handed back as soon as it is ready, and
whichever share ends last begins the next batch. Lanes of different workspaces are
independent, so a slow workspace (a first index build) holds up only its own searches.

Every search of a batch arrived before the batch began, so one index update that starts then
serves them all (:meth:`memcore.search.connections.IndexPool.shared_update`, ``since``).
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

#: Searches one batch takes at most (one model call of this many queries is about 30 CPU-ms).
MAX_BATCH = 64


@dataclass
class _Job:
    query: str
    run: Callable[[Any], Any]
    future: Future[Any] = field(default_factory=Future)


@dataclass
class _Lane:
    jobs: deque[_Job] = field(default_factory=deque)
    draining: bool = False


class SearchLanes:
    """One queue per workspace, drained in batches on ``executor``'s threads, a batch's
    searches spread over up to ``width`` of them (module doc).

    ``submit(key, query, run, prepare)`` queues ``run`` (the search) under ``key`` (the
    workspace) and returns a Future of its result. Before a batch's searches run,
    ``prepare(queries)`` is called once with the batch's queries (the model's vectors of them
    all, in one call, and what every search of the batch reads alike); each ``run`` gets what
    it returned, or None when it failed (each search then meets the problem itself)."""

    def __init__(self, executor: Executor, max_batch: int = MAX_BATCH, width: int = 1) -> None:
        self._executor = executor
        self._max_batch = max_batch
        self._width = max(1, width)
        self._lanes: dict[str, _Lane] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.batches = 0  # batches drained (tests and benchmarks)

    def submit(
        self,
        key: str,
        query: str,
        run: Callable[[Any], Any],
        prepare: Callable[[list[str]], Any] | None = None,
    ) -> Future[Any]:
        job = _Job(query, run)
        with self._lock:
            if self._closed:
                job.future.set_exception(RuntimeError("searches are closed (shutting down)"))
                return job.future
            lane = self._lanes.setdefault(key, _Lane())
            lane.jobs.append(job)
            start = not lane.draining
            lane.draining = True
        if start:
            try:
                self._executor.submit(self._drain, key, lane, prepare)
            except RuntimeError as exc:  # the executor was shut down
                with self._lock:
                    lane.draining = False
                    jobs = list(lane.jobs)
                    lane.jobs.clear()
                for j in jobs:
                    j.future.set_exception(exc)
        return job.future

    def _take(self, key: str, lane: _Lane) -> list[_Job]:
        with self._lock:
            n = min(len(lane.jobs), self._max_batch)
            batch = [lane.jobs.popleft() for _ in range(n)]
            if batch:
                self.batches += 1  # under the lock: lanes drain on several threads at once
            else:
                lane.draining = False
                if self._lanes.get(key) is lane:
                    del self._lanes[key]
            return batch

    def _drain(self, key: str, lane: _Lane, prepare: Callable[[list[str]], Any] | None) -> None:
        """Run the lane's batches until it is empty. A batch's searches are spread over up to
        ``width`` threads (this one and tasks of the executor); whichever finishes its share
        last goes on with the next batch, so no thread ever waits for another."""
        while batch := self._take(key, lane):
            ready = None
            if prepare is not None:
                with contextlib.suppress(Exception):  # each search meets the problem itself
                    ready = prepare([j.query for j in batch])
            parts = [batch[i :: self._width] for i in range(min(self._width, len(batch)))]
            left = [len(parts)]
            for part in parts[1:]:
                try:
                    self._executor.submit(self._run_part, key, lane, prepare, part, ready, left)
                except RuntimeError:  # shut down: this thread runs that share too
                    parts[0].extend(part)
                    with self._lock:
                        left[0] -= 1
            if not self._run_jobs(parts[0], ready, left):
                return  # another share is still running; its thread goes on with the lane

    def _run_part(
        self,
        key: str,
        lane: _Lane,
        prepare: Callable[[list[str]], Any] | None,
        part: list[_Job],
        ready: Any,
        left: list[int],
    ) -> None:
        if self._run_jobs(part, ready, left):
            self._drain(key, lane, prepare)

    def _run_jobs(self, jobs: list[_Job], ready: Any, left: list[int]) -> bool:
        """Run ``jobs``, each answer handed over at once; True for the batch's last share."""
        for job in jobs:
            if not job.future.set_running_or_notify_cancel():
                continue
            try:
                job.future.set_result(job.run(ready))
            except BaseException as exc:
                job.future.set_exception(exc)
        with self._lock:
            left[0] -= 1
            return left[0] == 0

    def close(self) -> None:
        """Cancel the searches still waiting in a lane (a search already running finishes);
        a search submitted from now on fails with RuntimeError."""
        with self._lock:
            self._closed = True
            jobs = [j for lane in self._lanes.values() for j in lane.jobs]
            for lane in self._lanes.values():
                lane.jobs.clear()
        for j in jobs:
            j.future.cancel()
