"""Index connections kept open between the searches of a long-lived process (the gateway).

Opening the workspace database costs a search more than most of its queries (the connection,
its pragmas, the schema check; closing a WAL connection checkpoints), and a gateway answering
many searches pays it on each. An :class:`IndexPool` lends an idle connection to the same
database file instead, or opens one; after a search that ended cleanly the connection goes
back. A database file that was replaced since (set aside as corrupt, deleted) is noticed by
its inode and ctime and never served from the pool. A few connections per file and a few files
are kept, the least recently used closed first; :meth:`IndexPool.close` closes them all.

Only a server uses a pool: an idle connection still holds SQLite's shared lock on the WAL
index, so a one-shot command (the CLI) opens and closes its own, as before.

A pool also shares the index update between concurrent searches of one database
(:meth:`IndexPool.shared_update`): a search must not answer from files older than itself, so
it needs an update (a scan of the workspace, a look at the index) that *started* after it
arrived, but not one of its own. While one update runs, the searches that arrive wait for the
next one, which one of them runs for all; 200 searches arriving together make a few updates,
not 200, and each still sees every file as it was when it arrived. A search that is run later
than it arrived (a server's queue) passes the pool's :meth:`IndexPool.mark` of its arrival,
and any update that started after that mark serves it. The pool's
:class:`memcore.search.watch.ScanWatch` lets an update reuse the last scan of the workspace's
files while nothing in the folders it walked changed.
"""

from __future__ import annotations

import contextlib
import copy
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from memcore.search.watch import ScanWatch
from memcore.workspace.core import Workspace

#: Idle connections kept per database: as many as the gateway's search threads, so a batch of
#: searches spread over all of them opens none (each open and close of one cost ~1 ms).
MAX_IDLE_PER_FILE = 16
MAX_FILES = 16

_Ident = tuple[int, int, int]
T = TypeVar("T")


@dataclass
class _Updates:
    """One database's shared index updates: the start marks (:meth:`IndexPool.mark`) of the
    last one that started and of the last one that finished."""

    started: int = 0
    finished: int = 0
    running: bool = False
    waiting: int = 0  # callers waiting for the next update (tests)
    result: Any = None
    failed: tuple[int, Exception] | None = None  # the last update that raised, and its error


def _again(exc: Exception) -> Exception:
    """A copy of ``exc`` to raise in another thread (one exception object raised in several
    threads at once would share its traceback); ``exc`` itself if it cannot be copied."""
    try:
        return copy.copy(exc)
    except Exception:
        return exc


def _identity(path: str) -> _Ident | None:
    """(device, inode, ctime): a file deleted and re-created under the same inode number
    still differs by its ctime."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_ctime_ns)


def _close(conns: list[sqlite3.Connection]) -> None:
    for c in conns:
        with contextlib.suppress(sqlite3.Error):
            c.close()


class IndexPool:
    """Idle index connections by database file (see module doc). Thread-safe."""

    def __init__(self) -> None:
        self._idle: OrderedDict[str, list[tuple[_Ident, sqlite3.Connection]]] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False
        self._updates: dict[str, _Updates] = {}
        self._updated = threading.Condition()
        self._starts = 0  # updates started, of every database (the marks)
        self.updates_run = 0  # updates this pool ran (tests and benchmarks)
        # the scans of the workspaces' files, kept while nothing changed (memcore.search.watch)
        self.watch = ScanWatch()

    def idle(self, ws: Workspace) -> list[sqlite3.Connection]:
        """The idle connections to ``ws``'s database (tests)."""
        with self._lock:
            return [c for _, c in self._idle.get(str(ws.db_path), [])]

    def _take(self, key: str, ident: _Ident | None) -> sqlite3.Connection | None:
        stale: list[sqlite3.Connection] = []
        got = None
        with self._lock:
            conns = self._idle.get(key) or []
            while conns:
                c_ident, conn = conns.pop()
                if c_ident == ident:
                    got = conn
                    break
                stale.append(conn)
        _close(stale)
        return got

    def _give_back(self, key: str, ident: _Ident, conn: sqlite3.Connection) -> None:
        closing: list[sqlite3.Connection] = []
        with self._lock:
            conns = self._idle.setdefault(key, [])
            self._idle.move_to_end(key)
            if not self._closed and len(conns) < MAX_IDLE_PER_FILE:
                conns.append((ident, conn))
            else:
                closing.append(conn)
            while len(self._idle) > MAX_FILES:
                _, old = self._idle.popitem(last=False)
                closing.extend(c for _, c in old)
        _close(closing)

    @contextlib.contextmanager
    def connection(self, ws: Workspace) -> Iterator[sqlite3.Connection]:
        """A connection to the workspace's index (``memcore.search.index.open_index``),
        from the pool when one to the same file is idle. Raises what ``open_index`` raises."""
        from memcore.search.index import open_index

        key = str(ws.db_path)
        conn = self._take(key, _identity(key))
        if conn is None:
            conn = open_index(ws)
        clean = False
        try:
            yield conn
            clean = not conn.in_transaction
        finally:
            ident = _identity(key)
            if clean and ident is not None:
                self._give_back(key, ident, conn)
            else:
                _close([conn])

    def mark(self) -> int:
        """A mark of this moment for :meth:`shared_update`'s ``since``: the updates started so
        far (of any database)."""
        with self._updated:
            return self._starts

    def shared_update(self, key: str, update: Callable[[], T], since: int | None = None) -> T:
        """The result of an ``update`` run that started after this call (or after the moment
        of ``since``, a :meth:`mark`): run here, or by a concurrent caller with the same
        ``key`` (see module doc). An update that raises raises in its caller and in every
        caller that waited for it (each then does what a failed update of its own would have
        made it do: a search falls back to a copy of the index), rather than each running its
        own after it, one at a time."""
        with self._updated:
            state = self._updates.setdefault(key, _Updates())
            after = self._starts if since is None else since  # an update must start past it
            while state.finished <= after:
                if state.failed is not None and state.failed[0] > after:
                    raise _again(state.failed[1])
                if not state.running:
                    state.running = True
                    self._starts += 1
                    mine = state.started = self._starts
                    break
                state.waiting += 1
                self._updated.wait()
                state.waiting -= 1
            else:
                return state.result  # type: ignore[no-any-return]
        try:
            result = update()
        except Exception as exc:
            with self._updated:
                state.running = False
                state.failed = (mine, exc)
                self._updated.notify_all()
            raise
        except BaseException:
            with self._updated:
                state.running = False
                self._updated.notify_all()
            raise
        with self._updated:
            state.running = False
            state.finished, state.result = mine, result
            self.updates_run += 1
            self._updated.notify_all()
        return result

    def waiting(self, key: str) -> int:
        """Callers of :meth:`shared_update` waiting for ``key``'s next update (tests)."""
        with self._updated:
            state = self._updates.get(key)
            return state.waiting if state is not None else 0

    def close(self) -> None:
        """Close every idle connection; one handed back later is closed then."""
        with self._lock:
            self._closed = True
            conns = [c for lst in self._idle.values() for _, c in lst]
            self._idle.clear()
        _close(conns)
        self.watch.close()


@contextlib.contextmanager
def index_connection(ws: Workspace, pool: IndexPool | None) -> Iterator[sqlite3.Connection]:
    """A connection from ``pool``, or (None) one opened now and closed after."""
    if pool is not None:
        with pool.connection(ws) as conn:
            yield conn
        return
    from memcore.search.index import open_index

    conn = open_index(ws)
    try:
        yield conn
    finally:
        conn.close()
