"""Recording searches in batches, for a long-lived server (the gateway).

A search records its hits in the recall store (``memcore.search.query.search``). Done inline,
that recording (an append to the recall log, then a fold that rewrites the store) is most of a
search's time, and every search of a busy server pays it. A :class:`BatchRecorder` takes the
recordings instead: ``submit`` validates the hits in the caller's thread and queues them, the
search answers at once, and one writer thread applies whatever has queued up meanwhile as one
batch per workspace: one append to the recall log for the whole batch, one fold of the store,
one ledger transaction for the MEMORY.md hits (a group commit, of a longer window while
searches keep coming). There is still exactly one
writer; readers never wait for it.

Nothing accepted is dropped: :meth:`BatchRecorder.close` drains the queue before it returns
(the gateway calls it on shutdown, within its grace period), and a recording submitted after
``close`` is written inline. A command-line ``memory search`` or the MCP server keep recording
inline (they pass no recorder), so a process that exits has recorded first.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcore.recall import log as recall_log
from memcore.workspace.core import Workspace

log = logging.getLogger(__name__)

#: At most this many searches go into one batch (one append, one fold); the rest wait for the
#: next one. Bounds one write and the time a shutdown needs per batch.
MAX_BATCH = 2000
#: The writer waits this long after the first recording of a batch before writing it (a group
#: commit): while searches keep coming, each fold of the store (a rewrite of the whole file)
#: takes the recordings of a whole window instead of the few that queued during the last one.
#: A recording lands this much later; a search never waits for it.
GROUP_WINDOW = 0.05
#: While searches keep coming (the writer took a batch less than ``BUSY_AFTER`` seconds ago)
#: it waits this long instead: 200 concurrent searches of one workspace made 11 folds of 12-22
#: CPU-ms each with the short window (25-33 when answered one at a time), each a rewrite of the
#: whole store; 5-6 with this one.
BUSY_WINDOW = 0.25
BUSY_AFTER = 1.0


@dataclass
class _Pending:
    """One workspace's queued recordings, in the order they were submitted."""

    ws: Workspace
    items: list[tuple[recall_log.Event | None, list[dict[str, Any]], str, datetime]] = field(
        default_factory=list
    )

    @property
    def events(self) -> list[recall_log.Event]:
        return [ev for ev, _, _, _ in self.items if ev is not None]

    @property
    def memory_hits(self) -> list[dict[str, Any]]:
        return [h for _, hits, _, _ in self.items for h in hits]

    @property
    def now(self) -> datetime:
        return max(at for _, _, _, at in self.items)


class BatchRecorder:
    """Queue search recordings and write them in batches from one thread (see module doc).

    ``submit`` returns how many hits were accepted for the recall store; ``last_error`` the
    latest failure of a workspace's batch (also kept in ``recall-errors.json``) or None once
    a later batch succeeded; ``flush`` waits until everything queued so far is written.
    """

    def __init__(
        self,
        *,
        lock_timeout: float = 0.0,
        max_batch: int = MAX_BATCH,
        start: bool = True,
        window: float = GROUP_WINDOW,
        busy_window: float = BUSY_WINDOW,
    ) -> None:
        self.lock_timeout = lock_timeout
        self.max_batch = max_batch
        self.window = window
        self.busy_window = max(window, busy_window)
        self._last_take: float | None = None  # when the writer last took a batch
        self._cond = threading.Condition()
        self._queue: dict[str, _Pending] = {}
        self._queued = 0  # searches queued, not yet taken by the writer
        self._writing = 0  # searches taken by the writer, not yet written
        self._closed = False
        self._errors: dict[str, str] = {}
        self.batches = 0  # batches written (for benchmarks and tests)
        self.recorded = 0  # searches written
        self._thread = threading.Thread(target=self._run, name="memcore-recall-writer", daemon=True)
        if start:
            self._thread.start()

    def start(self) -> None:
        """Start the writer (a recorder made with ``start=False`` only queues until then)."""
        if not self._thread.is_alive() and self._thread.ident is None:
            self._thread.start()

    # -- the callers' side ---------------------------------------------------------------

    def submit(
        self,
        ws: Workspace,
        query: str,
        results: list[dict[str, Any]],
        now: datetime,
        origin: str = "interactive",
        *,
        recall: bool = True,
    ) -> int:
        """Accept one search's hits for recording; returns how many go to the recall store.

        Hits on MEMORY.md count as accesses in the long-term ledger; with ``recall=False``
        (``[search] record = false``) only those are recorded. Raises InputError for bad
        results (as ``record_recalls``). After :meth:`close` the recording is written here
        and now instead of queued."""
        from memcore.recall.store import recall_event

        event = recall_event(ws, query, results, now=now, origin=origin) if recall else None
        memory_hits = [r for r in results if r.get("path") == "MEMORY.md"]
        if event is None and not memory_hits:
            return 0
        with self._cond:
            if not self._closed:
                key = str(ws.root)
                if key not in self._queue:
                    self._queue[key] = _Pending(ws)
                self._queue[key].items.append((event, memory_hits, query, now))
                self._queued += 1
                if self._queued == 1:  # the writer waits for a first recording
                    self._cond.notify_all()
                return len(event.hits) if event is not None else 0
        self._write(_Pending(ws, [(event, memory_hits, query, now)]))
        return len(event.hits) if event is not None else 0

    def last_error(self, ws: Workspace) -> str | None:
        return self._errors.get(str(ws.root))

    def pending(self) -> int:
        """Searches accepted but not yet written."""
        with self._cond:
            return self._queued + self._writing

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every recording submitted so far is written; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._queued or self._writing:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float | None = None) -> bool:
        """Stop taking recordings into the queue, write what is queued, stop the writer.
        Returns False when the queue was not drained within ``timeout`` seconds (the writer
        keeps going in its daemon thread; what it has not written by exit is lost)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self.start()
        self._thread.join(timeout)
        drained = not self._thread.is_alive()
        if not drained:
            log.warning(
                "recall recorder: %d searches not yet recorded after %ss", self.pending(), timeout
            )
        return drained

    # -- the writer ------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    return  # closed and drained
                now = time.monotonic()
                busy = self._last_take is not None and now - self._last_take < BUSY_AFTER
                # the searches still coming join the batch
                deadline = now + (self.busy_window if busy else self.window)
                while not self._closed and self._queued < self.max_batch:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch = self._take()
            for p in batch:
                try:
                    self._write(p)
                finally:
                    with self._cond:
                        self._writing -= len(p.items)
                        self._cond.notify_all()

    def _take(self) -> list[_Pending]:
        """Every workspace's queued searches, taken off the queue (at most ``max_batch`` of a
        workspace per batch; the rest stay queued, in order, for the next one)."""
        out: list[_Pending] = []
        for key in list(self._queue):
            p = self._queue[key]
            if len(p.items) <= self.max_batch:
                del self._queue[key]
                out.append(p)
            else:
                out.append(_Pending(p.ws, p.items[: self.max_batch]))
                p.items = p.items[self.max_batch :]
        taken = sum(len(p.items) for p in out)
        self._last_take = time.monotonic()
        self._queued -= taken
        self._writing += taken
        return out

    def _write(self, p: _Pending) -> None:
        """One batch of a workspace: one append + one fold, then the ledger; failures are
        logged and kept (``recall-errors.json``, :meth:`last_error`), never raised."""
        from memcore.search.query import record_batch

        try:
            error = record_batch(
                p.ws, p.events, p.memory_hits, p.now, p.items[-1][2], self.lock_timeout
            )
        except Exception as exc:  # the writer thread must survive anything
            log.exception("recall recorder: a batch of %s failed", p.ws.root)
            error = f"recall recording failed: {exc}"
        key = str(p.ws.root)
        if error is None:
            self._errors.pop(key, None)
        else:
            self._errors[key] = error
        self.batches += 1
        self.recorded += len(p.items)
