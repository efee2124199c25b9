"""Token budgets: a daily budget with reserve / settle, per-call caps, and chunking.

Input is estimated conservatively as the serialised request's UTF-8 byte count (usually more
than the real token count; it is a ceiling, not a bill). Before a call memcore reserves that
estimate plus the maximum output; after it, the reservation is settled with the usage the
provider reports. A call that never settles (cancelled, crashed, no usage reported) keeps its
reservation. The day is the UTC date; the budget resets at 00:00 UTC.

The ledger lives in the user database (see ``memcore.sessions.userdb``): one budget per
user, shared by every workspace and the gateway. Each reservation is one ``BEGIN IMMEDIATE``
transaction there, so concurrent workspaces never spend past it together.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta

from memcore.errors import BudgetExhausted
from memcore.judge.llm import Usage
from memcore.sessions.store import get_state, set_state, transaction
from memcore.workspace.clock import iso_ms

MAX_INPUT_TOKENS = 16_000
MAX_SOURCES_PER_CALL = 24
CHUNK_BYTES = 5_000


def day_of(now: datetime) -> str:
    from datetime import UTC

    return now.astimezone(UTC).strftime("%Y-%m-%d")


def next_reset(now: datetime) -> datetime:
    from datetime import UTC

    d = now.astimezone(UTC)
    return datetime(d.year, d.month, d.day, tzinfo=UTC) + timedelta(days=1)


@dataclass(frozen=True)
class BudgetStatus:
    day: str
    budget: int
    used: int  # settled usage plus open reservations
    settled: int
    reserved_open: int
    calls: int
    ledger_lost: bool = False  # the ledger was lost to a corrupt database: today counts as spent

    @property
    def remaining(self) -> int:
        return max(0, self.budget - self.used)

    def as_dict(self) -> dict[str, int | str | bool]:
        out: dict[str, int | str | bool] = {
            "day": self.day,
            "budget": self.budget,
            "used": self.used,
            "settled": self.settled,
            "reserved_open": self.reserved_open,
            "remaining": self.remaining,
            "calls": self.calls,
        }
        if self.ledger_lost:
            out["ledger_lost"] = True
        return out


def note_ledger_loss(conn: sqlite3.Connection, now: datetime) -> None:
    """When the database was set aside as corrupt and the ledger did not come across whole,
    the spending of that day is unknown: treat the day it is noticed as spent, so a corrupt
    file never resets the budget."""
    import json

    try:
        rows = conn.execute("SELECT id, lost FROM db_quarantines ORDER BY id").fetchall()
    except sqlite3.Error:
        return
    seen = int(get_state(conn, "ledger_loss_seen") or 0)
    for row in rows:
        if int(row[0]) <= seen:
            continue
        try:
            lost = json.loads(row[1])
        except ValueError:
            lost = {"*": "unreadable note"}
        if "sess_budget_calls" in lost or "*" in lost:
            set_state(conn, "budget_spent_day", day_of(now))
        set_state(conn, "ledger_loss_seen", str(row[0]))


def budget_status(conn: sqlite3.Connection, budget: int, now: datetime) -> BudgetStatus:
    day = day_of(now)
    note_ledger_loss(conn, now)
    row = conn.execute(
        "SELECT count(*) n, coalesce(sum(CASE WHEN status='settled' THEN charged END), 0) s,"
        " coalesce(sum(CASE WHEN status!='settled' THEN reserved END), 0) r"
        " FROM sess_budget_calls WHERE day=?",
        (day,),
    ).fetchone()
    settled, open_ = int(row["s"]), int(row["r"])
    used = settled + open_
    lost = get_state(conn, "budget_spent_day") == day
    if lost:
        used = max(used, budget)
    return BudgetStatus(day, budget, used, settled, open_, int(row["n"]), lost)


def reserve(
    conn: sqlite3.Connection,
    *,
    budget: int,
    amount: int,
    now: datetime,
    run_id: str | None,
    model: str,
    workspace: str | None = None,
) -> int:
    """Reserve ``amount`` tokens for one call; BudgetExhausted when it does not fit today."""
    with transaction(conn):
        status = budget_status(conn, budget, now)
        if status.used + amount > budget:
            why = (
                " (the ledger was lost with a corrupt database, so today counts as spent)"
                if status.ledger_lost
                else ""
            )
            raise BudgetExhausted(
                f"daily token budget reached: {status.used} of {budget} used today ({status.day})"
                f"{why}, the next call needs up to {amount}; it waits until "
                f"{iso_ms(next_reset(now))} (00:00 UTC)"
            )
        cols = "run_id, day, model, reserved, status, created_at"
        values: tuple[object, ...] = (run_id, status.day, model, amount, "reserved", iso_ms(now))
        if workspace is not None:
            cols, values = cols + ", workspace", (*values, workspace)
        cur = conn.execute(
            f"INSERT INTO sess_budget_calls ({cols}) VALUES ({','.join('?' * len(values))})",
            values,
        )
        return int(cur.lastrowid or 0)


def settle(conn: sqlite3.Connection, call_id: int, usage: Usage | None, now: datetime) -> int:
    """Replace a reservation with reported usage; without usage the reservation stays.
    Returns the tokens charged."""
    with transaction(conn):
        if usage is None:
            conn.execute(
                "UPDATE sess_budget_calls SET status='no-usage', settled_at=? WHERE id=?",
                (iso_ms(now), call_id),
            )
            row = conn.execute(
                "SELECT reserved FROM sess_budget_calls WHERE id=?", (call_id,)
            ).fetchone()
            return int(row[0]) if row else 0
        conn.execute(
            "UPDATE sess_budget_calls SET status='settled', prompt_tokens=?, cached_tokens=?,"
            " completion_tokens=?, charged=?, settled_at=? WHERE id=?",
            (usage.prompt, usage.cached, usage.completion, usage.total, iso_ms(now), call_id),
        )
        return usage.total


def cancel(conn: sqlite3.Connection, call_id: int, now: datetime) -> None:
    """A failed or cancelled call keeps its reservation (it may have been billed)."""
    with transaction(conn):
        conn.execute(
            "UPDATE sess_budget_calls SET status='cancelled', settled_at=? WHERE id=?",
            (iso_ms(now), call_id),
        )


# -- chunking ---------------------------------------------------------------------------


def split_utf8(text: str, limit: int = CHUNK_BYTES) -> list[str]:
    """Split ``text`` into pieces of at most ``limit`` UTF-8 bytes, on character boundaries,
    preferring line breaks, then spaces. Nothing is dropped: ``"".join(pieces) == text``."""
    if limit < 4:
        raise ValueError("limit must be at least 4 bytes (one UTF-8 character)")
    data = text.encode("utf-8")
    if len(data) <= limit:
        return [text] if text else []
    pieces: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + limit, len(data))
        if end < len(data):
            while end > start and (data[end] & 0xC0) == 0x80:  # inside a multi-byte character
                end -= 1
            window = data[start:end]
            for sep in (b"\n", b" "):
                cut = window.rfind(sep)
                if cut > len(window) // 2:
                    end = start + cut + 1
                    break
        pieces.append(data[start:end].decode("utf-8"))
        start = end
    return pieces
