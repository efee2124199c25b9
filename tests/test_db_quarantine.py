"""memcore.sqlite is set aside only when it is corrupt, under a unique name, with its tables
salvaged; a locked, read-only or full database is reported as what it is and never moved."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memcore.errors import DatabaseError, DatabaseLocked
from memcore.workspace import db

ROOT = Path(__file__).resolve().parent.parent


def make_db(path: Path, rows: int = 2000) -> None:
    conn = db.connect(path)
    conn.execute("CREATE TABLE dream_runs (id INTEGER PRIMARY KEY, what TEXT)")
    conn.execute("CREATE TABLE search_chunks (id INTEGER PRIMARY KEY, text TEXT)")
    conn.executemany("INSERT INTO dream_runs VALUES (?, ?)", [(i, f"run {i}") for i in range(50)])
    conn.executemany(
        "INSERT INTO search_chunks VALUES (?, ?)", [(i, "x" * 300) for i in range(rows)]
    )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    db._checked.clear()  # as a new process would (the .checked stamp names the old state)


def asides(path: Path) -> list[Path]:
    found = path.parent.glob(path.name + ".corrupt-*")
    return sorted(p for p in found if not p.name.endswith(("-wal", "-shm")))


def test_a_locked_database_is_reported_and_not_moved(tmp_path: Path) -> None:
    path = tmp_path / "memcore.sqlite"
    make_db(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with db.busy_timeout(50), pytest.raises(DatabaseLocked) as exc:
            db.connect(path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert exc.value.exit_code == 75 and "is locked" in str(exc.value)
    assert not asides(path) and db.connect(path).execute("SELECT count(*) FROM dream_runs")


def test_read_only_and_full_are_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "memcore.sqlite"
    make_db(path, rows=10)
    ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.Error) as exc:
        ro.execute("INSERT INTO dream_runs VALUES (999, 'x')")
    assert "is read-only" in str(db.translate(exc.value, path))
    full = sqlite3.connect(path)
    full.execute(f"PRAGMA max_page_count = {full.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(sqlite3.Error) as exc:
        full.execute("INSERT INTO search_chunks VALUES (NULL, ?)", ("y" * 100_000,))
    err = db.translate(exc.value, path)
    assert isinstance(err, DatabaseError) and "disk is full" in str(err)
    assert not db.is_corrupt(exc.value) and not asides(path)


def test_a_file_that_is_not_a_database_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "memcore.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    conn = db.connect(path)
    (aside,) = asides(path)
    assert aside.read_bytes().startswith(b"this is not sqlite")
    assert db.quarantines(conn)[0]["aside"] == str(aside)


def test_a_corrupt_page_is_caught_and_the_journal_survives(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memcore.sqlite"
    make_db(path)
    data = bytearray(path.read_bytes())
    page = 4096
    data[page * 20 : page * 24] = b"\xde\xad\xbe\xef" * page  # pages of the big cache table
    path.write_bytes(bytes(data))
    conn = db.connect(path)
    assert len(asides(path)) == 1
    runs = conn.execute("SELECT count(*) FROM dream_runs").fetchone()[0]
    assert runs == 50  # the journal table came across whole
    (q,) = db.quarantines(conn)
    assert q["recovered"]["dream_runs"] == 50
    assert "search_chunks" not in q["recovered"]  # a cache: rebuilt, not salvaged
    assert "set aside" in caplog.text and "Recovered: dream_runs (50 rows)" in caplog.text
    db._checked.clear()
    db.connect(path).close()  # the fresh file is healthy: nothing more is moved
    assert len(asides(path)) == 1


def test_a_corrupt_page_met_by_a_query_is_checked_on_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "memcore.sqlite"
    make_db(path)
    stamp = path.with_name(path.name + ".checked")
    assert stamp.exists()  # checked once: an unchanged file is not checked again
    with pytest.raises(sqlite3.DatabaseError) as exc:
        raise sqlite3.DatabaseError("database disk image is malformed")
    assert "next command sets it aside" in str(db.translate(exc.value, path))
    assert not stamp.exists()


def test_concurrent_openers_set_a_corrupt_file_aside_once(tmp_path: Path) -> None:
    path = tmp_path / "memcore.sqlite"
    make_db(path, rows=10)
    data = bytearray(path.read_bytes())
    data[0:16] = b"garbage garbage!"
    path.write_bytes(bytes(data))
    code = (
        "import sys; from memcore.workspace import db;"
        "c = db.connect(sys.argv[1]); c.execute('CREATE TABLE IF NOT EXISTS t (x)'); c.close()"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(path)], cwd=ROOT, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    errs = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errs
    assert len(asides(path)) == 1


def test_a_recovery_killed_midway_leaves_nothing_in_the_way(tmp_path: Path) -> None:
    path = tmp_path / "memcore.sqlite"
    make_db(path, rows=10)
    stale = tmp_path / "memcore.sqlite.recovering-999999"
    stale.write_bytes(b"half a database")  # what a recovery killed before its rename leaves
    data = bytearray(path.read_bytes())
    data[0:16] = b"garbage garbage!"
    path.write_bytes(bytes(data))
    conn = db.connect(path)
    try:
        conn.execute("CREATE TABLE t (x)")  # a working database took the corrupt one's place
        assert [r[0] for r in conn.execute("PRAGMA quick_check")] == ["ok"]
    finally:
        conn.close()
    assert not stale.exists()
    assert not list(tmp_path.glob("*.recovering-*"))
    assert len(asides(path)) == 1


def test_a_process_does_not_check_again_after_its_own_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stamp names the state last checked: a write of this process changes the file, and
    the next open within RECHECK_AFTER_S trusts it; after that it is checked again."""
    path = tmp_path / "memcore.sqlite"
    make_db(path)
    stamp = path.with_name(path.name + ".checked")
    db.connect(path).close()  # checked: the stamp names this state
    first = stamp.read_text()
    conn = db.connect(path)
    conn.executemany("INSERT INTO dream_runs (what) VALUES (?)", [("more",)] * 500)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()  # the file's size and mtime changed
    db.connect(path).close()
    assert stamp.read_text() == first  # not checked again so soon
    monkeypatch.setattr(db, "RECHECK_AFTER_S", 0.0)
    db.connect(path).close()
    assert stamp.read_text() != first  # checked again: the stamp names the new state


def test_threads_opening_one_new_database_at_once_all_get_it(tmp_path: Path) -> None:
    """The switch of a new file to WAL fails at once with 'database is locked' when another
    connection opens the file meanwhile (the busy timeout does not apply): it is retried."""
    failures: list[str] = []
    for n in range(150):
        path = tmp_path / f"new-{n}.sqlite"
        start = threading.Barrier(4)

        def one(path: Path = path, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                conn = db.connect(path)
                conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
                conn.close()
            except Exception as exc:
                failures.append(repr(exc))

        threads = [threading.Thread(target=one) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failures, failures[:3]
