"""The gateway's scheduler loop: sleep until the next due job, run it, never stop.

Every tick re-derives each job's due time from the workspace's config and the state in its
``memcore.sqlite`` (``memcore.schedule.compute_due``), so nothing is lost on a restart and a
config edit counts at the next tick (the API wakes the loop at once after a mode change; hand
edits are seen within ``max_sleep`` seconds). Runs of different workspaces go in parallel up to
``max_concurrent``; one workspace never runs two jobs at once (an in-process guard, plus the
workspace file lock against other processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

from memcore.errors import Busy, MemcoreError
from memcore.gateway.workspaces import Served
from memcore.journal import wal
from memcore.schedule import jobs as schedule
from memcore.schedule.jobs import Job, RunOutcome
from memcore.schedule.state import register_instance, set_run_sizes, unregister_instance
from memcore.workspace.clock import iso_ms, utcnow

log = logging.getLogger("memcore.gateway")
T = TypeVar("T")


async def in_daemon_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn`` in a daemon thread and await it (a stuck job never blocks process exit)."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if fut.done():
            return
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def target() -> None:
        value: T | BaseException
        try:
            res = fn(*args, **kwargs)
        except BaseException as exc:
            ok, value = False, exc
        else:
            ok, value = True, res
        with contextlib.suppress(RuntimeError):  # the loop closed during shutdown
            loop.call_soon_threadsafe(settle, ok, value)

    threading.Thread(target=target, daemon=True, name=f"memcore-{fn.__name__}").start()
    return await fut


def _trigger(due: datetime, state: schedule.JobState, started_at: datetime) -> str:
    """The label of a scheduled run: ``config-change`` (the first slot of a changed cadence),
    ``startup`` (a slot missed while no gateway ran) or ``schedule``."""
    since = state.cadence_since
    first_since = since is not None and (
        state.last_slot is None or state.last_slot.timestamp() < since.timestamp()
    )
    if since is not None and first_since and due.timestamp() >= since.timestamp():
        return "config-change"
    return "startup" if due.timestamp() < started_at.timestamp() else "schedule"


class Scheduler:
    """Runs the registered jobs of every served workspace when they are due."""

    def __init__(
        self,
        served: list[Served],
        *,
        max_concurrent: int = 4,
        max_sleep: float = 30.0,
        shutdown_grace: float = 20.0,
        clock: Callable[[], datetime] = utcnow,
        enabled: bool = True,
        min_gap: float = 60.0,
    ) -> None:
        self.served = served
        self.max_sleep = max_sleep
        self.shutdown_grace = shutdown_grace
        self.clock = clock
        self.enabled = enabled
        self.max_concurrent = max(1, max_concurrent)
        self.started_at = clock()
        self.errors: dict[str, str] = {}  # workspace name -> why its tick failed
        self.active: dict[str, str] = {}  # workspace name -> job running now
        self.next_wake: datetime | None = None
        self.ticks = 0
        self._guards = {s.name: threading.Lock() for s in served}
        self._queued: set[str] = set()
        self._fired: dict[tuple[str, str], float] = {}
        self._started: dict[tuple[str, str], float] = {}  # monotonic start of the last run
        self.min_gap = min_gap
        self._tasks: set[asyncio.Task[Any]] = set()
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._sem: asyncio.Semaphore | None = None
        self._stopping = False
        self.instance_id = uuid.uuid4().hex
        self.address = ""  # host:port, set by the server once bound
        self.peers: dict[str, list[dict[str, Any]]] = {}  # workspace -> other live gateways
        #: called after each run; its answer is kept with the run as ``sizes``
        self.after_run: Callable[[Any], dict[str, Any]] | None = None

    # -- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Close runs a crash left open, then start the loop (when enabled)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._sem = asyncio.Semaphore(self.max_concurrent)
        self.started_at = self.clock()
        from memcore.sessions.control import clear_stop_all

        clear_stop_all([s.ws.root for s in self.served])
        for s in self.served:
            try:
                peers = await asyncio.to_thread(
                    register_instance,
                    s.ws,
                    self.instance_id,
                    os.getpid(),
                    self.address,
                    self.started_at,
                )
                if peers:
                    self.peers[s.name] = peers
                    log.warning(
                        "another gateway serves workspace=%s (pid %s at %s); each scheduled slot "
                        "is claimed in memcore.sqlite, so it runs once",
                        s.ws.root,
                        ",".join(str(p["pid"]) for p in peers),
                        ",".join(str(p["address"] or "?") for p in peers),
                    )
                    continue  # its runs are its own: never mark them interrupted
                if await asyncio.to_thread(wal.recover_pending, s.ws):
                    log.warning("interrupted run rolled back workspace=%s", s.ws.root)
                n = await asyncio.to_thread(schedule.mark_interrupted, s.ws, self.started_at)
            except Exception as exc:
                self.errors[s.name] = str(exc)
                log.error("workspace error workspace=%s error=%s", s.ws.root, exc)
                continue
            if n:
                log.warning(
                    "run interrupted workspace=%s runs=%d (left running by a previous gateway)",
                    s.ws.root,
                    n,
                )
        if self.enabled:
            self._loop_task = asyncio.create_task(self._run_loop(), name="memcore-scheduler")

    async def stop(self) -> None:
        """Stop the loop; wait up to ``shutdown_grace`` for runs, then record them interrupted."""
        self._stopping = True
        from memcore.sessions.control import stop_all

        stop_all(
            [s.ws.root for s in self.served], "the gateway is stopping"
        )  # session dreams stop at their next checkpoint
        self.wake()
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            log.info(
                "gateway stop: waiting up to %gs for %d run(s)", self.shutdown_grace, len(pending)
            )
            await asyncio.wait(pending, timeout=self.shutdown_grace)
        for s in self.served:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(unregister_instance, s.ws, self.instance_id)
        now = self.clock()
        for name in list(self.active):
            s = next(x for x in self.served if x.name == name)
            with contextlib.suppress(Exception):
                await asyncio.to_thread(schedule.mark_interrupted, s.ws, now)
            log.warning(
                "run interrupted workspace=%s job=%s (gateway stopped)",
                s.ws.root,
                self.active[name],
            )

    def wake(self) -> None:
        """Re-check the schedule now (thread-safe)."""
        if self._loop is None or self._wake is None:
            return
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._wake.set)

    # -- the loop -------------------------------------------------------------------

    async def _run_loop(self) -> None:
        assert self._wake is not None
        while not self._stopping:
            self._wake.clear()
            now = self.clock()
            try:
                due, wake_at = await asyncio.to_thread(self.tick, now)
            except Exception:  # never let the loop die
                log.exception("scheduler tick failed")
                due, wake_at = [], now + timedelta(seconds=self.max_sleep)
            for s, job, slot, trigger in due:
                self._launch(s, job, slot, trigger)
            self.next_wake = wake_at
            delay = max(0.0, min(self.max_sleep, (wake_at - self.clock()).total_seconds()))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=delay)

    def tick(self, now: datetime) -> tuple[list[tuple[Served, Job, datetime, str]], datetime]:
        """What is due now, and when to look again. Errors are kept per workspace."""
        self.ticks += 1
        due_runs: list[tuple[Served, Job, datetime, str]] = []
        wake_at = now + timedelta(seconds=self.max_sleep)
        for s in self.served:
            if s.name in self._queued or s.name in self.active:
                continue
            try:
                for job in schedule.registered_jobs():
                    due, _state = schedule.compute_due(s.ws, job, now)
                    if due is None:
                        continue
                    if job.poll_seconds:
                        wake_at = min(wake_at, now + timedelta(seconds=job.poll_seconds))
                    if due.timestamp() > now.timestamp():
                        wake_at = min(wake_at, due)
                        continue
                    if self._fired.get((s.name, job.name)) == due.timestamp():
                        continue  # this slot already fired in this process
                    last = self._started.get((s.name, job.name))
                    if last is not None and time.monotonic() - last < self.min_gap:
                        # a job that says "due now" again right after a run (e.g. it skipped)
                        # waits min_gap: a safety net against a run loop, never a burst
                        gap_end = now + timedelta(seconds=self.min_gap - (time.monotonic() - last))
                        wake_at = min(wake_at, gap_end)
                        continue
                    trigger = _trigger(due, _state, self.started_at)
                    due_runs.append((s, job, due, trigger))
                    break  # one run per workspace at a time; the rest after it ends
            except Exception as exc:
                msg = str(exc) if isinstance(exc, MemcoreError) else f"{type(exc).__name__}: {exc}"
                if self.errors.get(s.name) != msg:
                    log.error("workspace error workspace=%s error=%s", s.ws.root, msg)
                self.errors[s.name] = msg
            else:
                if self.errors.pop(s.name, None) is not None:
                    log.info("workspace ok again workspace=%s", s.ws.root)
        return due_runs, wake_at

    def _launch(self, s: Served, job: Job, slot: datetime, trigger: str) -> None:
        self._queued.add(s.name)
        task = asyncio.create_task(self._scheduled_run(s, job, slot, trigger))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _scheduled_run(self, s: Served, job: Job, slot: datetime, trigger: str) -> None:
        assert self._sem is not None
        try:
            async with self._sem:
                if self._stopping:
                    return
                try:
                    self._started[(s.name, job.name)] = time.monotonic()
                    await self.run(s, job, trigger=trigger, slot=slot, owner=self.instance_id)
                except Busy:
                    return  # a manual run got there first; the next tick decides again
                self._fired[(s.name, job.name)] = slot.timestamp()
        except Exception:
            log.exception("run failed workspace=%s job=%s (runner)", s.ws.root, job.name)
        finally:
            self._queued.discard(s.name)
            self.wake()

    # -- runs (scheduled and manual) ---------------------------------------------------

    async def run(
        self,
        s: Served,
        job: Job,
        *,
        trigger: str = "manual",
        slot: datetime | None = None,
        owner: str | None = None,
    ) -> RunOutcome:
        """Run ``job`` on ``s`` now under the workspace guard; raise Busy when one is running.
        With ``owner`` the slot is claimed first (``claimed``: another gateway had it)."""

        def work() -> RunOutcome:
            outcome = schedule.execute(
                s.ws, job, self.clock(), trigger=trigger, slot=slot, owner=owner
            )
            if outcome.run_id and outcome.status != "claimed" and self.after_run is not None:
                with contextlib.suppress(Exception):  # a chart point is never worth a failure
                    set_run_sizes(s.ws, outcome.run_id, self.after_run(s.ws))
            return outcome

        return await self.exclusive(s, job.name, work)

    def launch(self, s: Served, job: Job, *, trigger: str = "manual") -> None:
        """Start ``job`` on ``s`` in the background, as a manual run (the session jobs of the
        Dreams page): Busy at once when a run of the workspace is in progress; a gateway stop
        waits for it like for a scheduled run."""
        if self._stopping:
            raise Busy("the gateway is stopping; start the run after it restarts")
        if self._guards[s.name].locked():
            running = self.active.get(s.name, "a job")
            raise Busy(f"workspace {s.name} is busy: {running} is running; try again when it ends")

        async def run() -> None:
            try:
                await self.run(s, job, trigger=trigger)
            except Busy:
                log.info("manual %s run not started: workspace=%s busy", job.name, s.ws.root)
            except Exception:
                log.exception("manual run failed workspace=%s job=%s", s.ws.root, job.name)
            finally:
                self.wake()

        task = asyncio.create_task(run(), name=f"memcore-manual-{job.name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def exclusive(self, s: Served, label: str, fn: Callable[[], T]) -> T:
        """Call ``fn`` in a daemon thread under the workspace guard (``label`` shows as running).

        Raises Busy when a run of the workspace is in progress. Used for job runs and for other
        writes that must not overlap them (review decisions from the Dreams page).
        """
        guard = self._guards[s.name]
        if not guard.acquire(blocking=False):
            running = self.active.get(s.name, "a job")
            raise Busy(f"workspace {s.name} is busy: {running} is running; try again when it ends")
        self.active[s.name] = label

        def guarded() -> T:
            # the guard is released by the thread itself when the work really ends, so a
            # cancelled request (or shutdown) can never let a second run in early
            try:
                return fn()
            finally:
                self.active.pop(s.name, None)
                guard.release()

        return await in_daemon_thread(guarded)

    def to_json(self) -> dict[str, Any]:
        return {
            "running": self._loop_task is not None and not self._loop_task.done(),
            "startedAt": iso_ms(self.started_at),
            "nextWakeAt": iso_ms(self.next_wake) if self.next_wake else None,
            "ticks": self.ticks,
            "active": dict(self.active),
            "errors": dict(self.errors),
            "maxConcurrent": self.max_concurrent,
            "otherGateways": dict(self.peers),
        }
