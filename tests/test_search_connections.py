"""Index connections pooled between searches (memcore.search.connections): reused while the
database file is the same, never once it was replaced."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from memcore.search.connections import IndexPool
from memcore.search.query import search
from memcore.workspace.core import Workspace


def _note(ws: Workspace) -> None:
    (ws.memory_dir / "2026-10-01.md").write_text(
        "# Day\n\nThe kafka cluster was upgraded.\n", encoding="utf-8"
    )


def test_a_second_search_reuses_the_connection(ws: Workspace) -> None:
    _note(ws)
    pool = IndexPool()
    assert search(ws, "kafka", record=False, pool=pool).results
    idle = pool.idle(ws)
    assert len(idle) == 1
    assert search(ws, "kafka upgraded", record=False, pool=pool).results
    assert pool.idle(ws) == idle  # the same connection came back
    pool.close()
    assert pool.idle(ws) == []
    assert search(ws, "kafka", record=False, pool=pool).results
    assert pool.idle(ws) == []  # a closed pool keeps nothing


def test_a_replaced_database_is_never_served_from_the_pool(ws: Workspace) -> None:
    _note(ws)
    pool = IndexPool()
    assert search(ws, "kafka", record=False, pool=pool).results
    for suffix in ("", "-wal", "-shm"):  # the user deletes memcore.sqlite (a cache here)
        ws.db_path.with_name(ws.db_path.name + suffix).unlink(missing_ok=True)
    assert search(ws, "kafka", record=False, pool=pool).results
    with sqlite3.connect(ws.db_path) as conn:  # the index went into the new file
        assert conn.execute("SELECT count(*) FROM search_files").fetchone()[0] == 1
    pool.close()


def test_without_a_pool_nothing_stays_open(ws: Workspace) -> None:
    _note(ws)
    assert search(ws, "kafka", record=False).results
    holder = sqlite3.connect(ws.db_path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # no idle connection of this process holds the WAL
    holder.execute("ROLLBACK")
    holder.close()


def _wait_for(cond: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not cond():
        assert time.monotonic() < deadline, "the condition never came true"
        time.sleep(0.005)


def test_a_search_waits_for_an_update_that_began_after_it() -> None:
    """A caller arriving while an update runs never takes that update's result (it may have
    scanned the files before they changed): it waits, and callers that waited together share
    the next update, run once."""
    pool = IndexPool()
    release_first = threading.Event()
    first_started = threading.Event()
    runs: list[str] = []
    results: dict[str, str] = {}

    def first() -> str:
        runs.append("first")
        first_started.set()
        release_first.wait()
        return "first"

    def later(name: str) -> Callable[[], str]:
        def update() -> str:
            runs.append(name)
            return name

        return update

    def call(name: str, fn: Callable[[], str]) -> None:
        results[name] = pool.shared_update("db", fn)

    a = threading.Thread(target=call, args=("a", first))
    a.start()
    first_started.wait()
    others = [threading.Thread(target=call, args=(n, later(n))) for n in ("b", "c")]
    for t in others:
        t.start()
    _wait_for(lambda: pool.waiting("db") == 2)  # both arrived while the first update ran
    release_first.set()
    for t in (a, *others):
        t.join()
    assert results["a"] == "first"
    assert len(runs) == 2 and runs[0] == "first"  # one more update, for both b and c
    assert results["b"] == results["c"] == runs[1]
    assert pool.updates_run == 2
    assert pool.shared_update("db", later("d")) == "d"  # nothing running: runs its own
    assert pool.shared_update("other", later("e")) == "e"  # another database: its own


def test_a_failed_update_fails_its_waiters_too_and_the_next_caller_runs_its_own() -> None:
    """Searches waiting for an update that fails get its error at once (each falls back to
    a copy of the index), instead of retrying one after another behind a busy database."""
    pool = IndexPool()
    release_first = threading.Event()
    first_started = threading.Event()
    outcome: dict[str, object] = {}
    runs: list[str] = []

    def first() -> str:
        runs.append("first")
        first_started.set()
        release_first.wait()
        return "first"

    def call(name: str) -> None:
        def failing() -> str:
            runs.append(name)
            _wait_for(lambda: pool.waiting("db") == 1)  # the other one waits for this update
            raise OSError("database is locked")

        try:
            outcome[name] = pool.shared_update("db", first if name == "a" else failing)
        except OSError as exc:
            outcome[name] = exc

    a = threading.Thread(target=call, args=("a",))
    a.start()
    first_started.wait()
    waiters = [threading.Thread(target=call, args=(n,)) for n in ("b", "c")]
    for t in waiters:
        t.start()
    _wait_for(lambda: pool.waiting("db") == 2)  # both need an update that starts after them
    release_first.set()
    for t in (a, *waiters):
        t.join()
    assert outcome["a"] == "first"
    assert len(runs) == 2 and runs[1] in ("b", "c")  # one ran the next update, it failed
    for name in ("b", "c"):  # the error reached both, nobody ran another update behind it
        assert isinstance(outcome[name], OSError) and "locked" in str(outcome[name])
    assert outcome["b"] is not outcome["c"]  # each raised its own copy
    assert pool.shared_update("db", lambda: "fresh") == "fresh"  # a new caller runs its own


def test_concurrent_searches_each_see_the_files_as_they_were_when_they_began(
    ws: Workspace,
) -> None:
    """Searches through one pool from many threads, a note written between two waves: every
    search of the second wave finds it."""
    _note(ws)
    pool = IndexPool()
    with ThreadPoolExecutor(8) as ex:
        first = list(ex.map(lambda _: search(ws, "kafka", record=False, pool=pool), range(16)))
        assert all(r.results for r in first)
        (ws.memory_dir / "2026-10-02.md").write_text(
            "# Day\n\nThe zookeeper ensemble was retired.\n", encoding="utf-8"
        )
        second = list(ex.map(lambda _: search(ws, "zookeeper", record=False, pool=pool), range(16)))
    assert all(r.results and r.results[0]["path"] == "memory/2026-10-02.md" for r in second)
    assert 2 <= pool.updates_run <= 32
    pool.close()
