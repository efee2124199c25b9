"""ISO-8601 timestamps in the recall store's form (UTC, milliseconds, ``Z``)."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """The current time, aware, in UTC. Callers pass it down; nothing deep reads the clock."""
    return datetime.now(UTC)


def iso_ms(dt: datetime) -> str:
    """``2026-04-05T10:00:00.000Z``."""
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def parse_iso(value: object) -> datetime | None:
    """Parse an ISO timestamp (``Z`` or offset); None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt
