"""Run leases: one session-dream run per workspace (in ``memcore.sqlite``) and one global step
per user (in the user database), across processes.

A lease has an expiry; the holder renews it after each model call. It also records the
holder's pid and host, so a holder on this host whose process is gone is cleared at once
instead of after the expiry. A crashed holder's lease otherwise expires and the next run
takes over. Every publication checks, inside its transaction, that the lease is still held by
this run, so a stalled old holder can never overwrite its successor's work.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from memcore.errors import LeaseLost, LockBusy
from memcore.sessions.store import transaction
from memcore.workspace.clock import iso_ms, parse_iso

LEASE_NAME = "sessions-dream"
GLOBAL_LEASE_NAME = "sessions-global"
DEFAULT_TTL = timedelta(minutes=15)


def ensure_lease_columns(conn: sqlite3.Connection) -> None:
    """Add ``pid`` and ``host`` to a lease table made before they existed."""
    cols = {r[1] for r in conn.execute("PRAGMA table_info(sess_lease)")}
    for col, kind in (("pid", "INTEGER"), ("host", "TEXT")):
        if col not in cols:
            try:
                conn.execute(f"ALTER TABLE sess_lease ADD COLUMN {col} {kind}")
            except sqlite3.OperationalError as exc:  # another process added it first
                if "duplicate column" not in str(exc).lower():
                    raise


def holder_alive(pid: int | None, host: str | None) -> bool:
    """False only when the holder is known dead: same host and no such process."""
    if pid is None or not host or host != socket.gethostname():
        return True
    if pid == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


class Lease:
    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        ttl: timedelta = DEFAULT_TTL,
        holder: str | None = None,
        name: str = LEASE_NAME,
        pid: int | None = None,
        host: str | None = None,
    ) -> None:
        self.conn = conn
        self.ttl = ttl
        self.name = name
        self.holder = holder or uuid.uuid4().hex
        self.pid = os.getpid() if pid is None else pid
        self.host = host or socket.gethostname()
        self.taken_over: str | None = None  # holder whose expired lease this run replaced
        ensure_lease_columns(conn)

    def acquire(self, now: datetime) -> None:
        """Take the lease, or raise LockBusy when another live holder has it."""
        with transaction(self.conn):
            row = self.conn.execute(
                "SELECT holder, expires_at, pid, host FROM sess_lease WHERE name=?", (self.name,)
            ).fetchone()
            if row is not None and row["holder"] != self.holder:
                expires = parse_iso(row["expires_at"])
                live = expires is not None and expires > now
                if live and holder_alive(row["pid"], row["host"]):
                    where = f" (pid {row['pid']} on {row['host']})" if row["pid"] else ""
                    raise LockBusy(
                        f"another session dream{where} holds the lease until "
                        f"{row['expires_at']}; try later"
                    )
                self.taken_over = row["holder"]
            self.conn.execute(
                "INSERT INTO sess_lease (name, holder, acquired_at, expires_at, pid, host)"
                " VALUES (?,?,?,?,?,?) ON CONFLICT (name) DO UPDATE SET holder=excluded.holder,"
                " acquired_at=excluded.acquired_at, expires_at=excluded.expires_at,"
                " pid=excluded.pid, host=excluded.host",
                (
                    self.name,
                    self.holder,
                    iso_ms(now),
                    iso_ms(now + self.ttl),
                    self.pid,
                    self.host,
                ),
            )

    def acquire_waiting(
        self,
        clock: Callable[[], datetime],
        *,
        wait_seconds: float,
        poll: float = 0.05,
        should_stop: Callable[[], None] | None = None,
    ) -> bool:
        """Take the lease, waiting up to ``wait_seconds`` (real time) while another live
        holder has it. False when it is still held then; ``should_stop`` may raise to end
        the wait early."""
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                self.acquire(clock())
                return True
            except LockBusy:
                if time.monotonic() >= deadline:
                    return False
            if should_stop is not None:
                should_stop()
            time.sleep(poll)
            poll = min(poll * 2, 0.5)

    def check(self) -> None:
        """Raise LeaseLost unless this run still holds the lease (call inside a transaction)."""
        row = self.conn.execute(
            "SELECT holder FROM sess_lease WHERE name=?", (self.name,)
        ).fetchone()
        if row is None or row["holder"] != self.holder:
            raise LeaseLost("the session-dream lease was taken over by another run; stopping")

    def renew(self, now: datetime) -> None:
        with transaction(self.conn):
            self.check()
            self.conn.execute(
                "UPDATE sess_lease SET expires_at=? WHERE name=? AND holder=?",
                (iso_ms(now + self.ttl), self.name, self.holder),
            )

    def release(self) -> None:
        with transaction(self.conn):
            self.conn.execute(
                "DELETE FROM sess_lease WHERE name=? AND holder=?", (self.name, self.holder)
            )


def lease_holder(
    conn: sqlite3.Connection, now: datetime, name: str = LEASE_NAME
) -> dict[str, str | int | None] | None:
    """The live lease, if any (for status)."""
    ensure_lease_columns(conn)
    row = conn.execute("SELECT * FROM sess_lease WHERE name=?", (name,)).fetchone()
    if row is None:
        return None
    expires = parse_iso(row["expires_at"])
    if expires is None or expires <= now or not holder_alive(row["pid"], row["host"]):
        return None
    return {
        "holder": row["holder"],
        "acquired_at": row["acquired_at"],
        "expires_at": row["expires_at"],
        "pid": row["pid"],
        "host": row["host"],
    }
