"""A run lease in ``memcore.sqlite``: one session-dream run per workspace across processes.

The lease has an expiry; the holder renews it after each model call. A crashed holder's lease
expires and the next run takes over. Every publication checks, inside its transaction, that the
lease is still held by this run, so a stalled old holder can never overwrite its successor's
work.
"""

from __future__ import annotations

import sqlite3
import uuid
from datetime import datetime, timedelta

from memcore.errors import LeaseLost, LockBusy
from memcore.sessions.store import transaction
from memcore.workspace.clock import iso_ms, parse_iso

LEASE_NAME = "sessions-dream"
DEFAULT_TTL = timedelta(minutes=15)


class Lease:
    def __init__(
        self, conn: sqlite3.Connection, *, ttl: timedelta = DEFAULT_TTL, holder: str | None = None
    ) -> None:
        self.conn = conn
        self.ttl = ttl
        self.holder = holder or uuid.uuid4().hex
        self.taken_over: str | None = None  # holder whose expired lease this run replaced

    def acquire(self, now: datetime) -> None:
        """Take the lease, or raise LockBusy when another live holder has it."""
        with transaction(self.conn):
            row = self.conn.execute(
                "SELECT holder, expires_at FROM sess_lease WHERE name=?", (LEASE_NAME,)
            ).fetchone()
            if row is not None and row["holder"] != self.holder:
                expires = parse_iso(row["expires_at"])
                if expires is not None and expires > now:
                    raise LockBusy(
                        "another session dream holds the lease until "
                        f"{row['expires_at']}; try later"
                    )
                self.taken_over = row["holder"]
            self.conn.execute(
                "INSERT INTO sess_lease (name, holder, acquired_at, expires_at) VALUES (?,?,?,?)"
                " ON CONFLICT (name) DO UPDATE SET holder=excluded.holder,"
                " acquired_at=excluded.acquired_at, expires_at=excluded.expires_at",
                (LEASE_NAME, self.holder, iso_ms(now), iso_ms(now + self.ttl)),
            )

    def check(self) -> None:
        """Raise LeaseLost unless this run still holds the lease (call inside a transaction)."""
        row = self.conn.execute(
            "SELECT holder FROM sess_lease WHERE name=?", (LEASE_NAME,)
        ).fetchone()
        if row is None or row["holder"] != self.holder:
            raise LeaseLost("the session-dream lease was taken over by another run; stopping")

    def renew(self, now: datetime) -> None:
        with transaction(self.conn):
            self.check()
            self.conn.execute(
                "UPDATE sess_lease SET expires_at=? WHERE name=? AND holder=?",
                (iso_ms(now + self.ttl), LEASE_NAME, self.holder),
            )

    def release(self) -> None:
        with transaction(self.conn):
            self.conn.execute(
                "DELETE FROM sess_lease WHERE name=? AND holder=?", (LEASE_NAME, self.holder)
            )


def lease_holder(conn: sqlite3.Connection, now: datetime) -> dict[str, str] | None:
    """The live lease, if any (for status)."""
    row = conn.execute("SELECT * FROM sess_lease WHERE name=?", (LEASE_NAME,)).fetchone()
    if row is None:
        return None
    expires = parse_iso(row["expires_at"])
    if expires is None or expires <= now:
        return None
    return {
        "holder": row["holder"],
        "acquired_at": row["acquired_at"],
        "expires_at": row["expires_at"],
    }
